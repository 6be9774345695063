//! `papayu doctor`: configuration, provider reachability, accepted structured-output form, latency.

use anyhow::Result;
use papayu_app::provider::{Choice, choose};
use papayu_llm::{CapabilityCache, DoctorOptions, doctor};

use papayu_protocol::ErrorCode;

use crate::cmd::session::{agent_config, local_inputs, runtime};
use crate::exit::Exit;
use crate::global::Global;

/// Check the configuration and each provider.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only check the configuration; send no request.
    #[arg(long)]
    pub offline: bool,
    /// Also measure each provider's decode speed without a schema, under the whole schema and
    /// under a compact one, and recommend a strict mode (three more requests).
    #[arg(long, conflicts_with = "offline")]
    pub speed: bool,
}

/// Which confinement check and test commands get (DECISIONS D25), as JSON with a `describe`
/// line.
fn confinement(config: &papayu_agent::AgentConfig) -> serde_json::Value {
    let c = if config.sandbox_enabled {
        crate::cmd::sandbox_exec::probe()
    } else {
        papayu_patch::Confinement::None {
            reason: "PAPAYU_SANDBOX=off".to_owned(),
        }
    };
    let mut v = serde_json::to_value(&c).unwrap_or_default();
    v["describe"] = serde_json::json!(c.describe());
    v
}

/// The code of an unusable provider: the first provider's error, else `ERR_LLM_CONFIG` for a
/// configuration problem; none when every provider is usable.
fn failure_code(report: &papayu_llm::DoctorReport) -> Option<ErrorCode> {
    if report.ok() {
        return None;
    }
    Some(
        report
            .providers
            .iter()
            .find_map(|p| p.error.as_ref().map(|e| e.code))
            .unwrap_or(ErrorCode::LlmConfig),
    )
}

/// The effective configuration, one row a setting.
fn config_table(global: &Global, config: &papayu_agent::AgentConfig) -> Result<comfy_table::Table> {
    let mut table = crate::term::table::new(&[
        crate::tr!("col-setting"),
        crate::tr!("col-value"),
        crate::tr!("col-from"),
    ]);
    for s in crate::layers::layered(global)?.shown(config) {
        table.add_row(vec![
            s.key.to_string(),
            crate::cmd::config::value_text(&s),
            crate::cmd::config::source_text(&s),
        ]);
    }
    Ok(table)
}

/// One row a provider: where, whether it answered, how, how fast, what went wrong.
fn providers_table(report: &papayu_llm::DoctorReport) -> comfy_table::Table {
    let mut table = crate::term::table::new(&[
        crate::tr!("col-provider"),
        crate::tr!("col-model"),
        crate::tr!("col-reachable"),
        crate::tr!("col-structured"),
        crate::tr!("col-latency"),
        crate::tr!("col-problem"),
    ]);
    let unknown = || "–".to_owned();
    for p in &report.providers {
        let problem = p
            .error
            .as_ref()
            .map(|e| crate::exit::with_code(e.code, &e.message))
            .into_iter()
            .chain(p.config_problems.iter().cloned())
            .collect::<Vec<_>>()
            .join("; ");
        table.add_row(vec![
            format!("{} {}", p.kind, p.endpoint),
            p.model.clone(),
            p.reachable.map_or_else(unknown, |r| {
                if r {
                    crate::tr!("yes")
                } else {
                    crate::tr!("no")
                }
            }),
            p.structured_output
                .as_ref()
                .map_or_else(unknown, ToString::to_string),
            p.latency_ms
                .map_or_else(unknown, |ms| crate::term::style::duration_ms(ms as u64)),
            problem,
        ]);
    }
    table
}

/// The last line: good news in green, bad in red.
fn verdict(ok: bool, good: &str, bad: &str) -> String {
    use crate::term::style::{BAD, GOOD, paint};
    if ok {
        paint(GOOD, good)
    } else {
        paint(BAD, bad)
    }
}

/// Exit 0 when every provider is usable, 1 otherwise.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let config = agent_config(global)?;
    if let Choice::Local { path, implicit } = choose(&config, &local_inputs(global)) {
        return local(args, global, &config, &path, implicit);
    }
    let mut providers = config.providers.clone();
    let single = config.provider_config();
    if providers.is_empty() {
        match &single {
            Ok(p) => providers.push(p.clone()),
            Err(e) => {
                if global.json {
                    let body = serde_json::json!({"config": config.config_snapshot(), "problem": e.to_string(), "integrations": crate::cmd::research::doctor_section()});
                    crate::json::print_failure(ErrorCode::LlmConfig, &e.to_string(), &body)?;
                } else {
                    println!(
                        "{}",
                        crate::tr!("doctor-no-provider", problem = e.to_string())
                    );
                    println!("{}", crate::tr!("doctor-set-provider"));
                    println!("{}", crate::tr!("doctor-or-local"));
                    println!(
                        "  PAPAYU_LLM_API_URL=http://127.0.0.1:8080/v1 PAPAYU_LLM_MODEL=smollm2 papayu doctor"
                    );
                }
                return Ok(Exit::Failure);
            }
        }
    }
    let options = DoctorOptions {
        probe: !args.offline,
        protocol: config.effective_protocol(),
        measure_decode: args.speed,
        ..DoctorOptions::default()
    };
    let report = runtime()?.block_on(doctor(&providers, &CapabilityCache::default(), &options));
    let ok = report.ok();
    if global.json {
        let mut doc = serde_json::to_value(&report)?;
        doc["config"] = serde_json::to_value(config.config_snapshot())?;
        doc["settings"] = crate::cmd::config::settings_json(global, &config)?;
        doc["checks_confinement"] = confinement(&config);
        doc["integrations"] = crate::cmd::research::doctor_section();
        crate::json::print(&crate::json::document(ok, failure_code(&report), doc));
    } else {
        println!(
            "{}",
            crate::tr!(
                "doctor-checks-run",
                how = confinement(&config)["describe"]
                    .as_str()
                    .unwrap_or_default()
            )
        );
        println!("{}", config_table(global, &config)?);
        println!(
            "{}",
            crate::tr!(
                "doctor-integrations",
                section = crate::cmd::research::doctor_section().to_string()
            )
        );
        println!("{}", providers_table(&report));
        anstream::println!(
            "{}",
            verdict(
                ok,
                &crate::tr!("doctor-all-usable"),
                &crate::tr!("doctor-some-unusable")
            )
        );
    }
    Ok(if ok { Exit::Ok } else { Exit::Failure })
}

/// The local provider: the model file (path, size, GGUF header, checksum of the default model),
/// whether this build has the provider, and unless `--offline` one constrained answer (load time,
/// first token, tokens/s, schema-valid).
fn local(
    args: &Args,
    global: &Global,
    config: &papayu_agent::AgentConfig,
    path: &std::path::Path,
    implicit: bool,
) -> Result<Exit> {
    let entry = crate::cmd::model::describe(path);
    let built = cfg!(feature = "local");
    let probe = if args.offline || !entry.valid || !built {
        None
    } else {
        Some(probe_local(config, path, global))
    };
    let probe_ok = probe
        .as_ref()
        .is_none_or(|p| p.get("ok").and_then(serde_json::Value::as_bool) == Some(true));
    let ok = built && entry.valid && entry.sha256_ok != Some(false) && probe_ok;
    let doc = serde_json::json!({
        "provider": "local",
        "chosen_because": if implicit { "no provider configured" } else { "configured" },
        "built_with_local": built,
        "model": entry,
        "probe": probe,
        "checks_confinement": confinement(config),
        "config": config.config_snapshot(),
        "settings": crate::cmd::config::settings_json(global, config)?,
    });
    if global.json {
        let code = (!ok).then(|| {
            probe
                .as_ref()
                .and_then(|p| serde_json::from_value(p["code"].clone()).ok())
                .unwrap_or(ErrorCode::ModelInvalid)
        });
        crate::json::print(&crate::json::document(ok, code, doc));
    } else {
        let implicit = if implicit { "yes" } else { "no" };
        println!(
            "{}",
            crate::tr!("doctor-local-provider", implicit = implicit)
        );
        let how = confinement(config)["describe"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        println!("  {}", crate::tr!("doctor-checks-run", how = how));
        let path = entry.path.display().to_string();
        println!("  {}", crate::tr!("doctor-model-file", path = path));
        let size = format!("{:.1}", entry.size as f64 / 1e6);
        println!("  {}", crate::tr!("doctor-model-size", size = size));
        let header = if entry.valid {
            crate::tr!("doctor-ok")
        } else {
            crate::tr!("doctor-problem-word")
        };
        println!("  {}", crate::tr!("doctor-gguf-header", state = header));
        if let Some(sha) = entry.sha256_ok {
            let state = if sha {
                crate::tr!("doctor-ok")
            } else {
                crate::tr!("doctor-mismatch")
            };
            println!("  {}", crate::tr!("doctor-sha256", state = state));
        }
        if let Some(p) = &entry.problem {
            println!(
                "  {}",
                crate::tr!("doctor-problem", problem = p.to_string())
            );
        }
        if !built {
            println!("  {}", crate::tr!("doctor-built-without-local"));
        }
        if let Some(p) = &probe {
            let probe = serde_json::to_string(p)?;
            println!("  {}", crate::tr!("doctor-probe", probe = probe));
        }
        println!("  {}", crate::tr!("doctor-configuration"));
        println!("{}", config_table(global, config)?);
        anstream::println!(
            "\n{}",
            verdict(
                ok,
                &crate::tr!("doctor-local-usable"),
                &crate::tr!("doctor-local-unusable")
            )
        );
    }
    Ok(if ok { Exit::Ok } else { Exit::Failure })
}

#[cfg(feature = "local")]
fn probe_local(
    config: &papayu_agent::AgentConfig,
    path: &std::path::Path,
    global: &Global,
) -> serde_json::Value {
    use papayu_llm::{ChatRequest, LocalProvider, Message};
    let mut local = match super::session::local_config(path, global) {
        Ok(local) => local,
        Err(e) => {
            return serde_json::json!({"ok": false, "code": ErrorCode::LlmConfig, "error": e.to_string()});
        }
    };
    local.timeout = config.timeout;
    let provider = match LocalProvider::new(local) {
        Ok(p) => p,
        Err(e) => return serde_json::json!({"ok": false, "code": e.code(), "error": e.to_string()}),
    };
    let protocol = config.effective_protocol();
    let request = ChatRequest::new(vec![
        Message::system(papayu_llm::default_system_prompt(protocol)),
        Message::user("Nothing needs to change. Answer with no actions."),
    ])
    .protocol(protocol)
    .max_tokens(128);
    let cancel = std::sync::atomic::AtomicBool::new(false);
    match provider.complete_blocking(&request, &cancel) {
        Ok((completion, stats)) => {
            let valid = papayu_llm::check_answer(&completion.text, protocol, None).is_ok();
            serde_json::json!({
                "ok": valid || completion.finish_reason.as_deref() == Some("length"),
                "load_ms": provider.load_time().as_secs_f64() * 1000.0,
                "first_token_ms": stats.first_token.as_secs_f64() * 1000.0,
                "prompt_tokens": stats.prompt_tokens,
                "cached_prompt_tokens": stats.cached_prompt_tokens,
                "prompt_tokens_per_s": stats.prompt_tokens_per_sec(),
                "generated_tokens": stats.generated_tokens,
                "generated_tokens_per_s": stats.generated_tokens_per_sec(),
                "finish_reason": completion.finish_reason,
                "schema_valid": valid,
            })
        }
        Err(e) => serde_json::json!({"ok": false, "code": e.code(), "error": e.to_string()}),
    }
}

#[cfg(not(feature = "local"))]
fn probe_local(
    _config: &papayu_agent::AgentConfig,
    _path: &std::path::Path,
    _global: &Global,
) -> serde_json::Value {
    serde_json::Value::Null
}
