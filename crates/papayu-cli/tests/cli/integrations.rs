//! The integrations' commands: off by default with a clear error, SARIF import offline,
//! research against a stub Tavily, refused commands, analysis.

use std::path::Path;
use std::process::Command;

use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{Run, papayu};

fn papayu_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_papayu"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("TAVILY_API_KEY")
        .env_remove("SNYK_TOKEN")
        .env("XDG_CACHE_HOME", dir.join(".cache"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("papayu runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

#[test]
fn research_is_off_until_configured() {
    let dir = tempfile::tempdir().unwrap();
    let run = papayu_env(dir.path(), &["research", "what is serde"], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("ERR_INVALID_CONFIG"), "{}", run.stderr);
    assert!(run.stderr.contains("PAPAYU_RESEARCH=1"), "{}", run.stderr);
    let run = papayu_env(dir.path(), &["trends"], &[("PAPAYU_RESEARCH", "1")]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("TAVILY_API_KEY"), "{}", run.stderr);
}

#[test]
fn research_through_a_stub_tavily() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .and(path("/search"))
            .and(header("authorization", "Bearer tvly-cli"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": [
                {"title": "Serde", "url": "https://serde.rs/derive.html", "content": "Derive macros for Serialize."}
            ]})))
            .expect(1)
            .mount(&server),
    );
    let dir = tempfile::tempdir().unwrap();
    let run = papayu_env(
        dir.path(),
        &["research", "serde derive", "--json"],
        &[
            ("PAPAYU_RESEARCH", "1"),
            ("PAPAYU_RESEARCH_PAGES", "0"),
            ("PAPAYU_TAVILY_URL", &server.uri()),
            ("TAVILY_API_KEY", "tvly-cli"),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["sources"][0]["url"], "https://serde.rs/derive.html");
    assert!(
        doc["block"]
            .as_str()
            .unwrap()
            .contains("SOURCES:\n[1] https://serde.rs/derive.html")
    );
}

#[test]
fn findings_import_sarif_offline() {
    let dir = tempfile::tempdir().unwrap();
    let sarif =
        crate::repo_root().join("crates/papayu-integrations/tests/fixtures/snyk-code.sarif");
    let run = papayu(
        dir.path(),
        &["findings", "--import", sarif.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("high src/app main.js:12 Cross-site Scripting (XSS)"),
        "{}",
        run.stdout
    );
    assert!(dir.path().join(".papa-yu/findings.json").is_file());
    let run = papayu_env(dir.path(), &["findings", "--refresh"], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("PAPAYU_SNYK_SYNC"), "{}", run.stderr);
    let run = papayu(dir.path(), &["findings", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        doc["findings"].as_array().unwrap().len(),
        2,
        "a failed refresh keeps the stored findings"
    );
}

#[test]
fn commands_are_refused_or_off() {
    let dir = tempfile::tempdir().unwrap();
    let run = papayu_env(dir.path(), &["commands", "git status"], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("PAPAYU_AUTOMATION=1"), "{}", run.stderr);
    let run = papayu_env(
        dir.path(),
        &[
            "commands",
            "--dry-run",
            "--json",
            "git -c core.sshCommand=x fetch",
            "git status",
        ],
        &[("PAPAYU_AUTOMATION", "1")],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        doc["commands"][0]["refused"]
            .as_str()
            .unwrap()
            .contains("allow-list")
    );
    assert_eq!(doc["commands"][1]["ran"], false, "a dry run runs nothing");
}

#[test]
fn analyze_reports_and_syncs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    let run = papayu_env(
        dir.path(),
        &["analyze", "--json"],
        &[("PAPAYU_AGENT_SYNC", "1")],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["manifests"][0][0], "Cargo.toml");
    let sync = std::fs::read_to_string(dir.path().join(".papa-yu/agent-sync.json")).unwrap();
    assert!(sync.contains("\"kind\": \"analysis\""), "{sync}");
}
