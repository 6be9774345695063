//! `papayu config` (issue 18 item 3): one layered configuration — default < user file < project
//! file < environment < flag — each value with its source; API keys only from the environment.

use std::path::Path;

use serde_json::Value;

use crate::hermetic;

fn get(dir: &Path, home: &Path, env: &[(&str, &str)], args: &[&str]) -> Value {
    let mut all = vec!["config", "get", "--json"];
    all.extend_from_slice(args);
    let run = hermetic(dir, home, env, &all);
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn each_layer_overrides_the_one_below_and_says_so() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir_all(p.join(".papa-yu")).unwrap();
    let h = home.path();

    let at = |env: &[(&str, &str)], flags: &[&str]| {
        let mut args = vec!["llm.model"];
        args.extend_from_slice(flags);
        let doc = get(p, h, env, &args);
        (
            doc["value"].as_str().map(str::to_owned),
            doc["source"].as_str().unwrap().to_owned(),
        )
    };
    assert_eq!(at(&[], &[]), (None, "default".into()));

    let user = hermetic(p, h, &[], &["config", "set", "llm.model", "m-user"]);
    assert_eq!(user.code, 0, "{}", user.stderr);
    assert!(h.join("config/papayu/config.toml").is_file());
    assert_eq!(at(&[], &[]), (Some("m-user".into()), "user".into()));

    let proj = hermetic(
        p,
        h,
        &[],
        &["config", "set", "--project-file", "llm.model", "m-project"],
    );
    assert_eq!(proj.code, 0, "{}", proj.stderr);
    assert!(p.join(".papa-yu/config.toml").is_file());
    assert_eq!(at(&[], &[]), (Some("m-project".into()), "project".into()));

    let env = [("PAPAYU_LLM_MODEL", "m-env")];
    assert_eq!(at(&env, &[]), (Some("m-env".into()), "env".into()));
    assert_eq!(
        at(&env, &["--model", "m-flag"]),
        (Some("m-flag".into()), "flag".into())
    );

    let show = hermetic(p, h, &env, &["config", "show"]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    let line = show
        .stdout
        .lines()
        .find(|l| l.starts_with("llm.model "))
        .unwrap();
    assert!(
        line.contains("m-env") && line.contains("(env PAPAYU_LLM_MODEL)"),
        "{line}"
    );
    let timeout = show
        .stdout
        .lines()
        .find(|l| l.starts_with("llm.timeout_sec "))
        .unwrap();
    assert!(timeout.ends_with("(default)"), "{timeout}");

    let unset = hermetic(
        p,
        h,
        &[],
        &["config", "unset", "--project-file", "llm.model"],
    );
    assert_eq!(unset.code, 0, "{}", unset.stderr);
    assert_eq!(at(&[], &[]), (Some("m-user".into()), "user".into()));
}

#[test]
fn api_keys_stay_in_the_environment() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());

    let refused = hermetic(p, h, &[], &["config", "set", "llm.api_key", "sk-abc"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("ERR_SECRET_IN_CONFIG"),
        "{}",
        refused.stderr
    );
    let disguised = hermetic(
        p,
        h,
        &[],
        &[
            "config",
            "set",
            "llm.model",
            "sk-proj-0123456789abcdefghijklmnop",
        ],
    );
    assert_eq!(disguised.code, 2, "{}", disguised.stderr);
    assert!(
        disguised.stderr.contains("ERR_SECRET_IN_CONFIG"),
        "{}",
        disguised.stderr
    );
    assert!(!h.join("config/papayu/config.toml").exists());

    let named = hermetic(
        p,
        h,
        &[],
        &["config", "set", "llm.api_key_env", "MY_TEST_KEY"],
    );
    assert_eq!(named.code, 0, "{}", named.stderr);
    let key = get(p, h, &[("MY_TEST_KEY", "sk-secret")], &["llm.api_key"]);
    assert_eq!(key["value"], "(set)");
    assert_eq!(key["source"], "user");
    let missing = hermetic(p, h, &[], &["config", "get", "llm.api_key"]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    assert!(missing.stderr.contains("MY_TEST_KEY"), "{}", missing.stderr);

    std::fs::create_dir_all(p.join(".papa-yu")).unwrap();
    std::fs::write(
        p.join(".papa-yu/config.toml"),
        "[llm]\napi_key = \"sk-x\"\n",
    )
    .unwrap();
    let in_file = hermetic(p, h, &[], &["config", "show"]);
    assert_eq!(in_file.code, 2, "{}", in_file.stderr);
    assert!(
        in_file.stderr.contains("ERR_SECRET_IN_CONFIG"),
        "{}",
        in_file.stderr
    );
    assert!(!in_file.stderr.contains("sk-x"), "{}", in_file.stderr);
}

#[test]
fn a_bad_value_names_its_file_and_key() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());
    std::fs::create_dir_all(p.join(".papa-yu")).unwrap();
    std::fs::write(p.join(".papa-yu/config.toml"), "[llm]\ntemperature = 9\n").unwrap();
    let run = hermetic(p, h, &[], &["config", "show"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(".papa-yu/config.toml: llm.temperature"),
        "{}",
        run.stderr
    );
    let unknown = hermetic(p, h, &[], &["config", "get", "llm.nope"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains("unknown key `llm.nope`"),
        "{}",
        unknown.stderr
    );
}

/// `local.threads` (the in-process model's CPU threads) in a config file, as
/// `PAPAYU_LOCAL_THREADS` is in the environment: shown with its source, the variable over it.
#[test]
fn local_threads_live_in_a_config_file_and_the_environment_overrides_them() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());
    let set = hermetic(p, h, &[], &["config", "set", "local.threads", "3"]);
    assert_eq!(set.code, 0, "{}", set.stderr);
    let file = std::fs::read_to_string(h.join("config/papayu/config.toml")).unwrap();
    assert!(file.contains("threads = 3"), "{file}");

    let doc = get(p, h, &[], &["local.threads"]);
    assert_eq!(doc["value"], "3");
    assert_eq!(doc["source"], "user");
    let plain = hermetic(p, h, &[], &["config", "get", "local.threads"]);
    assert!(
        plain.stdout.contains("= 3") && plain.stdout.contains("(user "),
        "{}",
        plain.stdout
    );

    let env = [("PAPAYU_LOCAL_THREADS", "5")];
    let doc = get(p, h, &env, &["local.threads"]);
    assert_eq!(doc["value"], "5");
    assert_eq!(doc["source"], "env");
    assert_eq!(doc["origin"], "PAPAYU_LOCAL_THREADS");

    let doctor = hermetic(p, h, &[], &["doctor", "--offline", "--json"]);
    let doc: Value = serde_json::from_str(&doctor.stdout).unwrap();
    let threads = doc["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "local.threads")
        .unwrap();
    assert_eq!(threads["value"], "3", "{doc:#}");
    assert_eq!(threads["source"], "user", "{doc:#}");

    let bad = hermetic(p, h, &[], &["config", "set", "local.threads", "many"]);
    assert_eq!(bad.code, 2, "a whole number only: {}", bad.stderr);
}
