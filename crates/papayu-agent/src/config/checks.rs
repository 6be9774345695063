//! The checks a value passes whether it comes from a variable or a typed overlay.

use std::str::FromStr;

use papayu_llm::ProviderKind;
use papayu_protocol::ProtocolVersion;

use super::error::{ConfigError, invalid};

/// Parse a SPEC §12 boolean: `1|true|yes` (any case) is on, `0|false|no` or empty is off,
/// anything else is an error naming `variable`.
pub fn parse_bool(variable: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "" | "0" | "false" | "no" => Ok(false),
        _ => Err(invalid(
            variable,
            value,
            "expected 1|true|yes or 0|false|no",
        )),
    }
}
/// The range of a numeric variable and what its error says is expected: one check whether the
/// value comes from the environment or is laid over it typed (the UI's settings).
pub(super) struct Limit<T> {
    min: T,
    max: T,
    what: &'static str,
}

impl<T: PartialOrd> Limit<T> {
    /// `n` if it is in range; else an error naming `variable` and showing `shown`.
    pub(super) fn check(&self, variable: &str, n: T, shown: &str) -> Result<T, ConfigError> {
        if n >= self.min && n <= self.max {
            Ok(n)
        } else {
            Err(self.error(variable, shown))
        }
    }

    pub(super) fn error(&self, variable: &str, shown: &str) -> ConfigError {
        invalid(variable, shown, format!("expected {}", self.what))
    }
}

pub(super) const TEMPERATURE: Limit<f32> = Limit {
    min: 0.0,
    max: 2.0,
    what: "a number in 0..=2",
};
pub(super) const MAX_TOKENS: Limit<u32> = Limit {
    min: 1,
    max: u32::MAX,
    what: "a positive integer",
};
pub(super) const TIMEOUT_SECS: Limit<u64> = Limit {
    min: 1,
    max: 86_400,
    what: "a whole number of seconds in 1..=86400",
};
pub(super) const POSITIVE: Limit<usize> = Limit {
    min: 1,
    max: usize::MAX,
    what: "a positive integer",
};
pub(super) const NON_NEGATIVE: Limit<usize> = Limit {
    min: 0,
    max: usize::MAX,
    what: "a whole number (0 or more)",
};

/// `PAPAYU_LLM_PROVIDER`'s value as a provider kind.
pub(super) fn parse_provider(value: &str) -> Result<ProviderKind, ConfigError> {
    ProviderKind::from_str(value).map_err(|_| {
        invalid(
            "PAPAYU_LLM_PROVIDER",
            value,
            "expected openai, openai-compatible, ollama, anthropic or local",
        )
    })
}

/// `PAPAYU_LLM_API_URL` must be an http(s) URL.
pub(super) fn check_api_url(url: &str) -> Result<(), ConfigError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(invalid(
            "PAPAYU_LLM_API_URL",
            url,
            "expected an http:// or https:// URL",
        ))
    }
}

/// A protocol version number, for `variable`.
pub(super) fn protocol_version(
    variable: &str,
    n: u8,
    shown: &str,
) -> Result<ProtocolVersion, ConfigError> {
    ProtocolVersion::from_number(n).ok_or_else(|| invalid(variable, shown, "expected 1, 2 or 3"))
}
