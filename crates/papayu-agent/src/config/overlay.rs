//! Typed overlays: setters checked as the variable they replace is, with the same error.

use std::time::Duration;

use super::checks::{
    MAX_TOKENS, TEMPERATURE, TIMEOUT_SECS, check_api_url, parse_provider, protocol_version,
};
use super::error::ConfigError;
use super::settings::AgentConfig;

impl AgentConfig {
    /// Set the provider kind by name, checked as `PAPAYU_LLM_PROVIDER` is (a typed overlay
    /// such as the UI's settings replaces what the variable gave).
    pub fn set_provider(&mut self, name: &str) -> Result<(), ConfigError> {
        self.provider = Some(parse_provider(name)?);
        Ok(())
    }

    /// Set the provider's base URL, checked as `PAPAYU_LLM_API_URL` is.
    pub fn set_api_url(&mut self, url: &str) -> Result<(), ConfigError> {
        check_api_url(url)?;
        self.api_url = Some(url.to_owned());
        Ok(())
    }

    /// Force the protocol version, checked as `PAPAYU_PROTOCOL_VERSION` is.
    pub fn set_protocol_version(&mut self, n: u8) -> Result<(), ConfigError> {
        let variable = "PAPAYU_PROTOCOL_VERSION";
        self.protocol_version = Some(protocol_version(variable, n, &n.to_string())?);
        Ok(())
    }

    /// Set the sampling temperature, checked as `PAPAYU_LLM_TEMPERATURE` is.
    pub fn set_temperature(&mut self, t: f32) -> Result<(), ConfigError> {
        self.temperature = TEMPERATURE.check("PAPAYU_LLM_TEMPERATURE", t, &t.to_string())?;
        Ok(())
    }

    /// Set the answer limit, checked as `PAPAYU_LLM_MAX_TOKENS` is.
    pub fn set_max_tokens(&mut self, n: u32) -> Result<(), ConfigError> {
        self.max_tokens = Some(MAX_TOKENS.check("PAPAYU_LLM_MAX_TOKENS", n, &n.to_string())?);
        Ok(())
    }

    /// Set the request timeout in seconds, checked as `PAPAYU_LLM_TIMEOUT_SEC` is.
    pub fn set_timeout_secs(&mut self, secs: u64) -> Result<(), ConfigError> {
        let secs = TIMEOUT_SECS.check("PAPAYU_LLM_TIMEOUT_SEC", secs, &secs.to_string())?;
        self.timeout = Duration::from_secs(secs);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use papayu_llm::ProviderKind;
    use std::collections::BTreeMap;

    fn from_var(variable: &str, value: &str) -> Result<AgentConfig, ConfigError> {
        AgentConfig::from_env_map(&BTreeMap::from([(variable.to_owned(), value.to_owned())]))
    }

    /// A typed overlay is checked as the variable it replaces, with the same error.
    #[test]
    fn setters_reject_what_the_variable_rejects_with_the_same_error() {
        type Set = fn(&mut AgentConfig) -> Result<(), ConfigError>;
        let cases: [(&str, &str, Set); 6] = [
            ("PAPAYU_LLM_PROVIDER", "skynet", |c| {
                c.set_provider("skynet")
            }),
            ("PAPAYU_LLM_API_URL", "ftp://x", |c| {
                c.set_api_url("ftp://x")
            }),
            ("PAPAYU_PROTOCOL_VERSION", "4", |c| {
                c.set_protocol_version(4)
            }),
            ("PAPAYU_LLM_TEMPERATURE", "2.5", |c| c.set_temperature(2.5)),
            ("PAPAYU_LLM_MAX_TOKENS", "0", |c| c.set_max_tokens(0)),
            ("PAPAYU_LLM_TIMEOUT_SEC", "86401", |c| {
                c.set_timeout_secs(86_401)
            }),
        ];
        for (variable, value, set) in cases {
            let from_env = from_var(variable, value).unwrap_err();
            let mut config = AgentConfig::default();
            assert_eq!(set(&mut config).unwrap_err(), from_env, "{variable}");
            assert_eq!(from_env.variable(), variable);
        }
    }

    #[test]
    fn setters_set_what_the_variable_sets() {
        let mut typed = AgentConfig::default();
        typed.set_provider("anthropic").unwrap();
        typed.set_api_url("http://127.0.0.1:9/v1").unwrap();
        typed.set_protocol_version(3).unwrap();
        typed.set_temperature(0.5).unwrap();
        typed.set_max_tokens(77).unwrap();
        typed.set_timeout_secs(86_400).unwrap();
        let env = AgentConfig::from_env_map(&BTreeMap::from(
            [
                ("PAPAYU_LLM_PROVIDER", "anthropic"),
                ("PAPAYU_LLM_API_URL", "http://127.0.0.1:9/v1"),
                ("PAPAYU_PROTOCOL_VERSION", "3"),
                ("PAPAYU_LLM_TEMPERATURE", "0.5"),
                ("PAPAYU_LLM_MAX_TOKENS", "77"),
                ("PAPAYU_LLM_TIMEOUT_SEC", "86400"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned())),
        ))
        .unwrap();
        assert_eq!(typed.config_snapshot(), env.config_snapshot());
        assert_eq!(typed.provider, Some(ProviderKind::Anthropic));
        assert_eq!(typed.timeout, Duration::from_secs(86_400));
    }
}
