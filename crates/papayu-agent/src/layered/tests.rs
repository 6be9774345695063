#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use camino::Utf8Path;

use super::*;
use crate::config::ENV_VARIABLES;

fn layer(path: &str, text: &str) -> FileLayer {
    FileLayer::parse(Utf8Path::new(path), text).unwrap()
}

fn env(vars: &[(&str, &str)]) -> BTreeMap<String, String> {
    vars.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn no_keys(_: &str) -> Option<String> {
    None
}

/// Each layer over the one below, key by key: default < user < project < env < flag.
#[test]
fn precedence_is_default_user_project_env_flag() {
    let user = layer(
        "/u/config.toml",
        "[llm]\nmodel = \"u\"\ntemperature = 0.1\nmax_tokens = 11\ntimeout_sec = 11\nmode = \"fixit\"\n",
    );
    let project = layer(
        "/p/.papa-yu/config.toml",
        "[llm]\nmodel = \"p\"\ntemperature = 0.2\nmax_tokens = 22\n",
    );
    let layered = Layers::new()
        .user(Some(user))
        .project(Some(project))
        .env(env(&[
            ("PAPAYU_LLM_MODEL", "e"),
            ("PAPAYU_LLM_TEMPERATURE", "0.3"),
        ]))
        .flag("llm.model", "--model", "f")
        .unwrap()
        .resolve();
    let expect = [
        ("llm.model", Some("f"), Source::Flag, Some("--model")),
        (
            "llm.temperature",
            Some("0.3"),
            Source::Env,
            Some("PAPAYU_LLM_TEMPERATURE"),
        ),
        (
            "llm.max_tokens",
            Some("22"),
            Source::Project,
            Some("/p/.papa-yu/config.toml"),
        ),
        (
            "llm.timeout_sec",
            Some("11"),
            Source::User,
            Some("/u/config.toml"),
        ),
        ("llm.strict_json", None, Source::Default, None),
    ];
    for (key, value, source, origin) in expect {
        let s = layered.get(key).unwrap();
        assert_eq!(
            (s.value.as_deref(), s.source, s.origin.as_deref()),
            (value, source, origin),
            "{key}"
        );
    }
    let c = layered.agent_config(&no_keys).unwrap();
    assert_eq!(c.model.as_deref(), Some("f"));
    assert_eq!(c.temperature, 0.3);
    assert_eq!(c.max_tokens, Some(22));
    assert_eq!(c.timeout.as_secs(), 11);
    assert_eq!(c.llm_mode, crate::LlmMode::Fixit);
    let shown = layered.shown(&c);
    let strict = shown.iter().find(|s| s.key == "llm.strict_json").unwrap();
    assert_eq!(
        (strict.value.clone(), strict.source),
        (serde_json::json!(false), Source::Default),
        "a default is shown with its value"
    );
}

#[test]
fn a_blank_value_falls_through_to_the_layer_below() {
    let user = layer("/u.toml", "[llm]\nmodel = \"u\"\n");
    let layered = Layers::new()
        .user(Some(user))
        .env(env(&[("PAPAYU_LLM_MODEL", "  ")]))
        .resolve();
    assert_eq!(layered.get("llm.model").unwrap().source, Source::User);
}

#[test]
fn the_api_key_comes_from_the_variable_a_file_names_and_the_environment_wins() {
    let user = layer("/u.toml", "[llm]\napi_key_env = \"MY_KEY\"\n");
    let lookup = |name: &str| (name == "MY_KEY").then(|| " sk-from-my-key\n".to_owned());
    let layered = Layers::new().user(Some(user.clone())).resolve();
    let c = layered.agent_config(&lookup).unwrap();
    assert_eq!(c.api_key.as_deref(), Some("sk-from-my-key"), "trimmed");
    let shown = layered.shown(&c);
    let key = shown.iter().find(|s| s.key == "llm.api_key").unwrap();
    assert_eq!(
        (key.value.clone(), key.source),
        (serde_json::json!("(set)"), Source::User)
    );
    assert!(
        !serde_json::to_string(&shown).unwrap().contains("sk-from"),
        "the key itself is never shown"
    );

    let layered = Layers::new()
        .user(Some(user.clone()))
        .env(env(&[("PAPAYU_LLM_API_KEY", "sk-env")]))
        .resolve();
    assert_eq!(
        layered.agent_config(&lookup).unwrap().api_key.as_deref(),
        Some("sk-env")
    );

    let e = Layers::new()
        .user(Some(user))
        .resolve()
        .agent_config(&no_keys)
        .unwrap_err();
    assert_eq!(e.code(), papayu_protocol::ErrorCode::InvalidConfig);
    assert_eq!(e.variable(), "MY_KEY");
    assert!(e.to_string().contains("llm.api_key_env names it"), "{e}");
}

#[test]
fn a_bad_value_names_where_it_came_from() {
    let user = layer("/u/config.toml", "[llm]\ntemperature = 7.5\n");
    let e = Layers::new()
        .user(Some(user))
        .resolve()
        .agent_config(&no_keys)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "ERR_INVALID_CONFIG: /u/config.toml: llm.temperature = \"7.5\": expected a number in 0..=2"
    );
    let e = Layers::new()
        .env(env(&[("PAPAYU_LLM_TEMPERATURE", "7.5")]))
        .resolve()
        .agent_config(&no_keys)
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("ERR_INVALID_CONFIG: PAPAYU_LLM_TEMPERATURE="),
        "{e}"
    );
    let e = Layers::new()
        .flag("llm.provider", "--provider", "skynet")
        .unwrap()
        .resolve()
        .agent_config(&no_keys)
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("ERR_INVALID_CONFIG: --provider=\"skynet\""),
        "{e}"
    );
}

#[test]
fn a_file_never_holds_a_key_and_unknown_keys_are_named() {
    let e =
        FileLayer::parse(Utf8Path::new("/u.toml"), "[llm]\napi_key = \"sk-abc\"\n").unwrap_err();
    assert_eq!(e.code(), papayu_protocol::ErrorCode::SecretInConfig);
    assert!(e.to_string().contains("llm.api_key_env"), "{e}");
    let e = FileLayer::parse(Utf8Path::new("/u.toml"), "[llm]\nmodle = \"x\"\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "ERR_INVALID_CONFIG: /u.toml: unknown key `llm.modle` (`papayu config show` lists every key)"
    );
    let e = FileLayer::parse(Utf8Path::new("/u.toml"), "[llm\n").unwrap_err();
    assert!(
        e.to_string().starts_with("ERR_INVALID_CONFIG: /u.toml: "),
        "{e}"
    );
}

#[test]
fn set_keeps_comments_checks_values_and_refuses_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let path = Utf8Path::from_path(dir.path())
        .unwrap()
        .join("papayu/config.toml");
    fs_err::create_dir_all(path.parent().unwrap()).unwrap();
    fs_err::write(
        &path,
        "# my papayu settings\n[llm]\n# the model I like\nmodel = \"old\" # keep this note\n",
    )
    .unwrap();
    let mut edit = FileEdit::open(&path).unwrap();
    edit.set("llm.model", "new").unwrap();
    edit.set("llm.temperature", "0.5").unwrap();
    edit.set("git.commit", "yes").unwrap();
    edit.save().unwrap();
    let text = fs_err::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "# my papayu settings\n[llm]\n# the model I like\nmodel = \"new\" # keep this note\ntemperature = 0.5\n\n[git]\ncommit = true\n"
    );
    let read = FileLayer::read(&path).unwrap().unwrap();
    assert_eq!(read.get("llm.temperature"), Some("0.5"));
    assert_eq!(read.get("git.commit"), Some("true"));

    for (key, value, code) in [
        (
            "llm.model",
            "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
            "ERR_SECRET_IN_CONFIG",
        ),
        ("llm.api_key", "anything", "ERR_SECRET_IN_CONFIG"),
        ("llm.api_key_env", "sk-abc def", "ERR_INVALID_CONFIG"),
        ("llm.temperature", "hot", "ERR_INVALID_CONFIG"),
        ("protocol.version", "4", "ERR_INVALID_CONFIG"),
        ("llm.modle", "x", "ERR_INVALID_CONFIG"),
    ] {
        let e = edit.set(key, value).unwrap_err();
        assert_eq!(e.code().as_str(), code, "{key}={value}: {e}");
    }
    let e = edit.set("protocol.version", "4").unwrap_err();
    assert_eq!(
        e.to_string(),
        "ERR_INVALID_CONFIG: protocol.version=\"4\": expected 1, 2 or 3"
    );
    assert!(edit.unset("git.commit").unwrap());
    assert!(!edit.unset("git.commit").unwrap());
    assert!(!edit.text().contains("[git]"), "an emptied table goes too");
}

#[test]
fn providers_are_an_array_of_tables_in_a_file_and_json_in_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let path = Utf8Path::from_path(dir.path()).unwrap().join("config.toml");
    let mut edit = FileEdit::open(&path).unwrap();
    edit.set(
        "llm.providers",
        r#"[{"url":"http://127.0.0.1:9/v1","model":"a","api_key_env":"KEY_A"}]"#,
    )
    .unwrap();
    edit.save().unwrap();
    let text = fs_err::read_to_string(&path).unwrap();
    assert!(text.contains("[[llm.providers]]"), "{text}");
    let layered = Layers::new()
        .user(FileLayer::read(&path).unwrap())
        .resolve();
    let c = layered
        .agent_config(&|n| (n == "KEY_A").then(|| "sk-a".to_owned()))
        .unwrap();
    assert_eq!(c.providers.len(), 1);
    assert_eq!(
        c.providers[0].api_key.as_ref().map(|k| k.expose()),
        Some("sk-a")
    );
}

/// Every variable the agent reads has a key, except the secrets, which stay in the environment.
#[test]
fn every_variable_has_a_key() {
    for var in ENV_VARIABLES {
        let key = keys::by_var(var);
        match *var {
            "PAPAYU_LLM_AGGREGATOR_KEY" => assert!(key.is_none()),
            "PAPAYU_LLM_API_KEY" => assert!(!key.unwrap().in_files),
            _ => assert!(key.is_some_and(|k| k.in_files), "{var}"),
        }
    }
}

/// `local.threads` from a file, over it the variable; a bad value names where it came from.
#[test]
fn local_threads_come_from_a_file_or_the_variable_and_are_checked() {
    let user = || layer("/u/config.toml", "[local]\nthreads = 3\n");
    let from_file = Layers::new().user(Some(user())).resolve();
    assert_eq!(from_file.local_threads().unwrap(), Some(3));
    assert_eq!(
        from_file.get(keys::LOCAL_THREADS).map(|s| s.source),
        Some(Source::User)
    );
    let from_env = Layers::new()
        .user(Some(user()))
        .env(env(&[("PAPAYU_LOCAL_THREADS", "5")]))
        .resolve();
    assert_eq!(from_env.local_threads().unwrap(), Some(5));
    assert_eq!(Layers::new().resolve().local_threads().unwrap(), None);

    let bad_file = Layers::new()
        .project(Some(layer(
            "/p/.papa-yu/config.toml",
            "[local]\nthreads = 0\n",
        )))
        .resolve();
    assert_eq!(
        bad_file.local_threads().unwrap_err().to_string(),
        "ERR_INVALID_CONFIG: /p/.papa-yu/config.toml: local.threads = \"0\": expected a number of threads from 1 to 512"
    );
    for bad in ["many", "513"] {
        let e = Layers::new()
            .env(env(&[("PAPAYU_LOCAL_THREADS", bad)]))
            .resolve()
            .local_threads()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "ERR_INVALID_CONFIG: PAPAYU_LOCAL_THREADS={bad:?}: expected a number of threads from 1 to 512"
            )
        );
    }
}

/// The files of [`Layers::read`]: the user's, the project's beneath its root, none missing.
#[test]
fn read_takes_the_user_file_and_the_projects() {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(dir.path()).unwrap();
    let user = root.join("user.toml");
    fs_err::write(&user, "[llm]\nmodel = \"u\"\ntemperature = 0.5\n").unwrap();
    fs_err::create_dir_all(root.join(".papa-yu")).unwrap();
    fs_err::write(root.join(PROJECT_FILE), "[llm]\nmodel = \"p\"\n").unwrap();
    let layered = Layers::read(&user, Some(root)).unwrap().resolve();
    assert_eq!(
        layered.get("llm.model").map(|s| s.source),
        Some(Source::Project)
    );
    assert_eq!(
        layered.get("llm.temperature").map(|s| s.source),
        Some(Source::User)
    );
    let nothing = Layers::read(&root.join("absent.toml"), None)
        .unwrap()
        .resolve();
    assert!(
        nothing
            .settings()
            .iter()
            .all(|s| s.source == Source::Default)
    );
}
