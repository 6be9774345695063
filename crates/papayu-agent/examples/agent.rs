//! Plan and apply one goal on a project with the model configured in the environment.
//!
//! ```sh
//! PAPAYU_LLM_API_URL=http://127.0.0.1:8080/v1 PAPAYU_LLM_MODEL=smollm2 \
//!   cargo run -p papayu-agent --example agent -- examples/sample-project "add a README"
//! ```
#![allow(clippy::print_stdout, clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::sync::Arc;

use papayu_agent::{Agent, AgentConfig, Progress};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(project), Some(goal)) = (args.next(), args.next()) else {
        return Err("usage: agent <project dir> <goal>".into());
    };
    // Binaries read the environment once and hand the map to the library.
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let config = AgentConfig::from_env_map(&env)?;
    let provider = Arc::new(papayu_llm::HttpProvider::new(config.provider_config()?)?);
    let config_dir = camino::Utf8PathBuf::from(project.clone()).join(".papa-yu/example-config");
    let mut agent = Agent::new(config, project.as_str(), config_dir, provider)?;
    let progress = |p: &Progress| println!("… {}", serde_json::to_string(p).unwrap_or_default());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;

    let plan = rt.block_on(agent.plan(&goal, &progress))?;
    println!(
        "PLAN ({}):\n{}",
        plan.trace_id,
        plan.summary.unwrap_or_default()
    );
    let preview = rt.block_on(agent.prepare_apply(None, &progress))?;
    for file in &preview.preview.files {
        println!("{} {}\n{}", file.kind, file.path, file.diff);
    }
    // A real frontend asks here; the example applies everything but deletes.
    let keep: Vec<usize> = preview
        .actions
        .iter()
        .filter(|a| !a.kind.starts_with("DELETE"))
        .map(|a| a.index)
        .collect();
    let outcome = agent.apply(&preview, Some(&keep), false, &progress)?;
    println!("{}", serde_json::to_string_pretty(&outcome)?);
    Ok(())
}
