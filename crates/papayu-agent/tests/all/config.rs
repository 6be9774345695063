use std::collections::BTreeMap;
use std::time::Duration;

use papayu_agent::{AgentConfig, ConfigError, ENV_VARIABLES, LlmMode};
use papayu_llm::ProviderKind;
use papayu_protocol::{ErrorCode, ProtocolVersion};

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn defaults_are_the_spec_values() {
    let c = AgentConfig::from_env_map(&BTreeMap::new()).unwrap();
    assert_eq!(c.effective_protocol(), ProtocolVersion::V2);
    assert!(c.fallback_to_v1);
    assert!(!c.trace && !c.trace_raw && !c.strict_json && !c.memory_autopatch);
    assert_eq!(c.llm_mode, LlmMode::Chat);
    assert_eq!(c.timeout, Duration::from_secs(90));
    // Unset: each provider's own default (SPEC §7's 16 384 over the network, 2 048 for the
    // in-process model, which would otherwise loop for minutes).
    assert_eq!(c.max_tokens, None);
    assert_eq!(c.max_tokens_for(ProviderKind::OpenAi), 16_384);
    assert_eq!(c.max_tokens_for(ProviderKind::Local), 2_048);
    assert_eq!(
        (
            c.context_max_files,
            c.context_max_file_chars,
            c.context_max_total_chars,
            c.context_max_log_chars
        ),
        (8, 20_000, 120_000, 12_000)
    );
    let e = c.provider_config().unwrap_err();
    assert_eq!(e.variable(), "PAPAYU_LLM_MODEL");
}

#[test]
fn every_variable_is_parsed() {
    let c = AgentConfig::from_env_map(&env(&[
        ("PAPAYU_LLM_API_URL", "http://127.0.0.1:9/v1"),
        (
            "PAPAYU_LLM_API_KEY",
            "sk-secret-value-123456789012345678901234",
        ),
        ("PAPAYU_LLM_MODEL", "m"),
        ("PAPAYU_LLM_PROVIDER", "ollama"),
        ("PAPAYU_LLM_MODE", "Fix-Plan"),
        ("PAPAYU_LLM_STRICT_JSON", "YES"),
        ("PAPAYU_LLM_TEMPERATURE", "0.5"),
        ("PAPAYU_LLM_MAX_TOKENS", "100"),
        ("PAPAYU_LLM_TIMEOUT_SEC", "5"),
        (
            "PAPAYU_LLM_PROVIDERS",
            r#"[{"url":"http://127.0.0.1:1/v1","model":"a","api_key_env":"K1"}]"#,
        ),
        ("K1", "key-one"),
        ("PAPAYU_LLM_AGGREGATOR_URL", "http://127.0.0.1:2/v1"),
        ("PAPAYU_LLM_AGGREGATOR_MODEL", "agg"),
        ("PAPAYU_LLM_AGGREGATOR_KEY", "agg-key"),
        ("PAPAYU_PROTOCOL_VERSION", "3"),
        ("PAPAYU_PROTOCOL_DEFAULT", "1"),
        ("PAPAYU_PROTOCOL_FALLBACK_TO_V1", "false"),
        ("PAPAYU_TRACE", "True"),
        ("PAPAYU_TRACE_RAW", "1"),
        ("PAPAYU_NORMALIZE_EOL", "lf"),
        ("PAPAYU_MEMORY_AUTOPATCH", "yes"),
        ("PAPAYU_CONTEXT_MAX_FILES", "3"),
        ("PAPAYU_CONTEXT_MAX_FILE_CHARS", "1000"),
        ("PAPAYU_CONTEXT_MAX_TOTAL_CHARS", "5000"),
        ("PAPAYU_CONTEXT_MAX_LOG_CHARS", "700"),
        ("PAPAYU_CONTEXT_SMALL_PROJECT_BYTES", "0"),
    ]))
    .unwrap();
    assert_eq!(c.llm_mode, LlmMode::FixPlan);
    assert!(c.strict_json && c.trace && c.trace_raw && c.normalize_eol_lf && c.memory_autopatch);
    assert!(!c.fallback_to_v1);
    assert_eq!(c.effective_protocol(), ProtocolVersion::V3);
    assert_eq!(c.protocol_default, ProtocolVersion::V1);
    assert_eq!(c.temperature, 0.5);
    assert_eq!(
        (c.max_tokens, c.timeout),
        (Some(100), Duration::from_secs(5))
    );
    // Set, it holds for every provider, the local one included.
    assert_eq!(c.max_tokens_for(ProviderKind::Local), 100);
    assert_eq!(c.providers.len(), 1);
    assert_eq!(c.providers[0].api_key.as_ref().unwrap().expose(), "key-one");
    assert_eq!(c.aggregator.as_ref().unwrap().model, "agg");
    assert_eq!(
        (
            c.context_max_files,
            c.context_max_file_chars,
            c.context_max_total_chars,
            c.context_max_log_chars
        ),
        (3, 1000, 5000, 700)
    );
    assert_eq!(c.context_small_project_bytes, 0);
    assert_eq!(c.context_config().small_project_bytes, 0);
    let p = c.provider_config().unwrap();
    assert_eq!(p.kind.as_str(), "ollama");
    assert_eq!(p.timeout, Duration::from_secs(5));

    let snap = c.config_snapshot();
    let text = serde_json::to_string(&snap).unwrap();
    assert!(!text.contains("sk-secret"), "{text}");
    assert!(
        !text.contains("key-one") && !text.contains("agg-key"),
        "{text}"
    );
    assert_eq!(snap["api_key_set"], true);
    assert_eq!(snap["protocol_version"], 3);
    assert_eq!(snap["llm_mode"], "fix-plan");
    assert_eq!(snap["normalize_eol"], "lf");
    assert_eq!(
        snap["schema_hash"],
        papayu_protocol::schema_hash(ProtocolVersion::V3)
    );
    assert_eq!(ENV_VARIABLES.len(), 27);
}

#[test]
fn invalid_values_name_their_variable() {
    let cases = [
        ("PAPAYU_TRACE", "maybe"),
        ("PAPAYU_TRACE_RAW", "2"),
        ("PAPAYU_LLM_STRICT_JSON", "on"),
        ("PAPAYU_MEMORY_AUTOPATCH", "y"),
        ("PAPAYU_PROTOCOL_FALLBACK_TO_V1", "sometimes"),
        ("PAPAYU_PROTOCOL_VERSION", "4"),
        ("PAPAYU_PROTOCOL_DEFAULT", "two"),
        ("PAPAYU_LLM_PROVIDER", "gemini"),
        ("PAPAYU_LLM_MODE", "yolo"),
        ("PAPAYU_LLM_TEMPERATURE", "3"),
        ("PAPAYU_LLM_MAX_TOKENS", "0"),
        ("PAPAYU_LLM_TIMEOUT_SEC", "-1"),
        ("PAPAYU_LLM_API_URL", "ftp://x"),
        ("PAPAYU_LLM_PROVIDERS", "{}"),
        ("PAPAYU_NORMALIZE_EOL", "crlf"),
        ("PAPAYU_CONTEXT_MAX_FILES", "zero"),
        ("PAPAYU_CONTEXT_MAX_FILE_CHARS", "0"),
        ("PAPAYU_CONTEXT_MAX_TOTAL_CHARS", "1e9"),
        ("PAPAYU_CONTEXT_MAX_LOG_CHARS", "-5"),
    ];
    for (var, value) in cases {
        let err = AgentConfig::from_env_map(&env(&[(var, value)])).unwrap_err();
        assert_eq!(err.variable(), var, "{var}={value}: {err}");
        assert_eq!(err.code(), ErrorCode::InvalidConfig);
        assert!(err.to_string().contains(var), "{err}");
    }
    let missing = AgentConfig::from_env_map(&env(&[(
        "PAPAYU_LLM_PROVIDERS",
        r#"[{"url":"http://127.0.0.1:1/v1","model":"a","api_key_env":"NOPE"}]"#,
    )]))
    .unwrap_err();
    assert!(matches!(missing, ConfigError::Missing { ref variable, .. } if variable == "NOPE"));
}

#[test]
fn truthy_values_any_case_and_blank_is_default() {
    for v in ["1", "true", "TRUE", "yes", "Yes"] {
        assert!(
            AgentConfig::from_env_map(&env(&[("PAPAYU_TRACE", v)]))
                .unwrap()
                .trace,
            "{v}"
        );
    }
    for v in ["0", "false", "No", "", "  "] {
        assert!(
            !AgentConfig::from_env_map(&env(&[("PAPAYU_TRACE", v)]))
                .unwrap()
                .trace,
            "{v}"
        );
    }
    let c = AgentConfig::from_env_map(&env(&[("PAPAYU_PROTOCOL_FALLBACK_TO_V1", "")])).unwrap();
    assert!(c.fallback_to_v1);
}
