//! The provider a configuration names (shared by every frontend: `papayu`, `papayu ui`,
//! `papayu-desktop`).

use std::sync::Arc;

use papayu_agent::{AgentConfig, ConfigError};
use papayu_llm::{FanOutProvider, HttpProvider, LlmError, MergePolicy, Provider};

use crate::error::ApiError;

/// Why no provider could be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// Nothing (or something invalid) is configured.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The HTTP client could not be created.
    #[error(transparent)]
    Llm(#[from] LlmError),
}

impl From<ProviderError> for ApiError {
    fn from(e: ProviderError) -> Self {
        match e {
            ProviderError::Config(c) => {
                let mut a = ApiError::from(c);
                a.message.push_str(
                    "; configure a provider in Settings (or PAPAYU_LLM_API_URL and PAPAYU_LLM_MODEL)",
                );
                a
            }
            ProviderError::Llm(l) => ApiError::from(l),
        }
    }
}

/// Every entry of `PAPAYU_LLM_PROVIDERS` behind one fan-out (merged by the aggregator when one
/// is configured, else deterministically), or the single `PAPAYU_LLM_API_URL` provider.
pub fn build_provider(config: &AgentConfig) -> Result<Arc<dyn Provider>, ProviderError> {
    if !config.providers.is_empty() {
        let providers = config
            .providers
            .iter()
            .map(|c| Ok(Arc::new(HttpProvider::new(c.clone())?) as Arc<dyn Provider>))
            .collect::<Result<Vec<_>, LlmError>>()?;
        let policy = match &config.aggregator {
            Some(a) => MergePolicy::Aggregator(Arc::new(HttpProvider::new(a.clone())?)),
            None => MergePolicy::Deterministic,
        };
        return Ok(Arc::new(FanOutProvider::new(providers, policy)?));
    }
    Ok(Arc::new(HttpProvider::new(config.provider_config()?)?))
}
