//! `papayu doctor`: configuration, provider reachability, accepted structured-output form, latency.

use anyhow::Result;
use papayu_llm::{CapabilityCache, DoctorOptions, doctor};

use crate::cmd::session::{agent_config, print_json, runtime};
use crate::exit::Exit;
use crate::global::Global;

/// Check the configuration and each provider.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only check the configuration; send no request.
    #[arg(long)]
    pub offline: bool,
}

/// Exit 0 when every provider is usable, 1 otherwise.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let config = agent_config(global)?;
    let mut providers = config.providers.clone();
    let single = config.provider_config();
    if providers.is_empty() {
        match &single {
            Ok(p) => providers.push(p.clone()),
            Err(e) => {
                if global.json {
                    print_json(
                        &serde_json::json!({"ok": false, "config": config.config_snapshot(), "problem": e.to_string()}),
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
        doc["ok"] = serde_json::Value::Bool(ok);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!("configuration (effective):");
        for (k, v) in config.config_snapshot() {
            println!("  {k} = {v}");
        }
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
