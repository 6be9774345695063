//! `papayu research "<question>"`: online research (search → fetch → extract → summarise)
//! printed as the cited `ONLINE` block the model would get. Also the glue every command
//! shares for the integrations: their configuration from the environment, their installation
//! on an agent, and the lines `papayu doctor` shows.

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_agent::Agent;
use papayu_integrations::IntegrationsConfig;
use papayu_integrations::research::{Researcher, block_on};

use crate::cmd::session::{env_map, print_json};
use crate::exit::{Exit, UsageError, with_code};
use crate::global::Global;

/// Research a question on the web and print the cited summary.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The question.
    pub question: String,
    /// Search only this domain (repeatable; default `PAPAYU_RESEARCH_DOMAINS`).
    #[arg(long = "domain", value_name = "DOMAIN")]
    pub domains: Vec<String>,
}

/// The integrations' configuration from the environment (`PAPAYU_*`, and the conventional
/// `TAVILY_API_KEY` / `SNYK_TOKEN`), with the page cache under the user's cache directory.
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
pub fn integrations_config() -> Result<IntegrationsConfig> {
    let lookup = |name: &str| std::env::var(name).ok();
    let config =
        IntegrationsConfig::from_env(&env_map(), &lookup).map_err(|e| UsageError(e.to_string()))?;
    let cache_home = Utf8PathBuf::from_path_buf(crate::cmd::session::cache_dir()).ok();
    Ok(config.with_cache_home(cache_home.as_deref()))
}

/// Install the integrations on `agent` ([`papayu_integrations::install`], the same call the
/// UI's app makes) with their configuration from the environment.
pub fn install(agent: &mut Agent, root: &Utf8PathBuf) -> Result<()> {
    papayu_integrations::install(agent, root, integrations_config()?);
    Ok(())
}

/// What `papayu doctor` shows about the integrations: their effective settings (keys only
/// said to be set) and, for each, whether it is usable.
pub fn doctor_section() -> serde_json::Value {
    match integrations_config() {
        Ok(c) => {
            let research = match Researcher::new(c.research.clone()) {
                Ok(_) => "on".to_owned(),
                Err(e) => e.to_string(),
            };
            let snyk = match (c.snyk.sync, &c.snyk.token, &c.snyk.org_id) {
                (false, ..) => "off (PAPAYU_SNYK_SYNC)".to_owned(),
                (true, None, _) => "on but no token (PAPAYU_SNYK_TOKEN or SNYK_TOKEN)".to_owned(),
                (true, _, None) => "on but no PAPAYU_SNYK_ORG_ID".to_owned(),
                (true, Some(_), Some(_)) => "on".to_owned(),
            };
            serde_json::json!({
                "ok": true,
                "research": research,
                "snyk": snyk,
                "agent_sync": if c.agent_sync { "on" } else { "off (PAPAYU_AGENT_SYNC)" },
                "automation": if c.automation.enabled { "on" } else { "off (PAPAYU_AUTOMATION)" },
                "settings": c.snapshot(),
            })
        }
        Err(e) => serde_json::json!({"ok": false, "problem": e.to_string()}),
    }
}

/// Exit 0 with an answer; 2 when research is off or misconfigured; 1 when the service fails.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let config = integrations_config()?;
    let max_chars = config.research.max_chars;
    let outcome = Researcher::new(config.research).and_then(|r| {
        block_on(r.research(&args.question, &args.domains)).unwrap_or_else(|| {
            Err(papayu_integrations::ResearchError::Client {
                message: "the research thread failed".to_owned(),
            })
        })
    });
    match outcome {
        Ok(research) => {
            if global.json {
                let mut doc = serde_json::to_value(&research)?;
                doc["block"] = serde_json::json!(research.render(max_chars).body);
                print_json(&doc)?;
            } else {
                println!("{}", research.render(max_chars).body);
            }
            Ok(Exit::Ok)
        }
        Err(e) => fail(e.code(), &e.to_string(), global),
    }
}

/// Report an integration's error with its stable code; the exit code follows it.
pub fn fail(code: papayu_protocol::ErrorCode, message: &str, global: &Global) -> Result<Exit> {
    if global.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"ok": false, "code": code, "error": message})
            )?
        );
    } else {
        eprintln!("papayu: {}", with_code(code, message));
    }
    Ok(Exit::from(code))
}
