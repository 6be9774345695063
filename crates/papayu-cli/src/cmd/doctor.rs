//! `papayu doctor`: configuration, provider reachability, accepted structured-output form, latency.

use anyhow::Result;
use papayu_app::provider::{Choice, choose};
use papayu_llm::{CapabilityCache, DoctorOptions, doctor};

use crate::cmd::session::{agent_config, local_inputs, print_json, runtime};
use crate::exit::Exit;
use crate::global::Global;

/// Check the configuration and each provider.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only check the configuration; send no request.
    #[arg(long)]
    pub offline: bool,
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
                    print_json(
                        &serde_json::json!({"ok": false, "config": config.config_snapshot(), "problem": e.to_string(), "integrations": crate::cmd::research::doctor_section()}),
                    )?;
                } else {
                    println!("No provider configured: {e}");
                    println!(
                        "Set PAPAYU_LLM_API_URL and PAPAYU_LLM_MODEL (and PAPAYU_LLM_API_KEY for hosted APIs),"
                    );
                    println!("or run a local model: scripts/local-llm.sh serve 8080, then");
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
        ..DoctorOptions::default()
    };
    let report = runtime()?.block_on(doctor(&providers, &CapabilityCache::default(), &options));
    let ok = report.ok();
    if global.json {
        let mut doc = serde_json::to_value(&report)?;
        doc["config"] = serde_json::to_value(config.config_snapshot())?;
        doc["checks_confinement"] = confinement(&config);
        doc["integrations"] = crate::cmd::research::doctor_section();
        doc["ok"] = serde_json::Value::Bool(ok);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "checks and tests run: {}",
            confinement(&config)["describe"]
                .as_str()
                .unwrap_or_default()
        );
        println!("configuration (effective):");
        for (k, v) in config.config_snapshot() {
            println!("  {k} = {v}");
        }
        println!("integrations: {}", crate::cmd::research::doctor_section());
        for p in &report.providers {
            println!("\nprovider {} {} model {}", p.kind, p.endpoint, p.model);
            println!("{}", serde_json::to_string_pretty(p)?);
        }
        println!(
            "\n{}",
            if ok {
                "all providers usable"
            } else {
                "some providers are not usable"
            }
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
        Some(probe_local(config, path))
    };
    let probe_ok = probe
        .as_ref()
        .is_none_or(|p| p.get("ok").and_then(serde_json::Value::as_bool) == Some(true));
    let ok = built && entry.valid && entry.sha256_ok != Some(false) && probe_ok;
    let doc = serde_json::json!({
        "ok": ok,
        "provider": "local",
        "chosen_because": if implicit { "no provider configured" } else { "configured" },
        "built_with_local": built,
        "model": entry,
        "probe": probe,
        "checks_confinement": confinement(config),
        "config": config.config_snapshot(),
    });
    if global.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "provider local (in-process llama.cpp){}",
            if implicit {
                ", chosen because no provider is configured"
            } else {
                ""
            }
        );
        println!(
            "  checks and tests run: {}",
            confinement(config)["describe"].as_str().unwrap_or_default()
        );
        println!("  model file: {}", entry.path.display());
        println!("  size: {:.1} MB", entry.size as f64 / 1e6);
        println!(
            "  GGUF header: {}",
            if entry.valid { "ok" } else { "PROBLEM" }
        );
        if let Some(sha) = entry.sha256_ok {
            println!(
                "  sha256 (default model): {}",
                if sha { "ok" } else { "MISMATCH" }
            );
        }
        if let Some(p) = &entry.problem {
            println!("  problem: {p}");
        }
        if !built {
            println!(
                "  this papayu was built without the local provider: rebuild with `--features local`"
            );
        }
        if let Some(p) = &probe {
            println!("  probe: {}", serde_json::to_string(p)?);
        }
        println!(
            "\n{}",
            if ok {
                "local provider usable"
            } else {
                "local provider not usable"
            }
        );
    }
    Ok(if ok { Exit::Ok } else { Exit::Failure })
}

#[cfg(feature = "local")]
fn probe_local(config: &papayu_agent::AgentConfig, path: &std::path::Path) -> serde_json::Value {
    use papayu_llm::{ChatRequest, LocalProvider, Message};
    let mut local = match super::session::local_config(path) {
        Ok(local) => local,
        Err(e) => {
            return serde_json::json!({"ok": false, "code": papayu_protocol::ErrorCode::LlmConfig, "error": e.to_string()});
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
fn probe_local(_config: &papayu_agent::AgentConfig, _path: &std::path::Path) -> serde_json::Value {
    serde_json::Value::Null
}
