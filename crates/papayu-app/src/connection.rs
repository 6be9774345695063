//! Which provider the UI's model calls go to, and testing it the way `papayu doctor` does.
//! It reads the layered configuration (the settings are its user file), builds providers through the
//! frontend's factory, and reaches the network only through papayu-llm's doctor probe.

use std::sync::Arc;

use papayu_agent::AgentConfig;
use papayu_llm::{CapabilityCache, DoctorOptions, Provider, ProviderCheck, ProviderKind, doctor};
use papayu_protocol::ErrorCode;

use crate::api::{
    ConnectionTest, NoArgs, ProviderStatus, ProviderView, Settings, TestConnectionArgs,
};
use crate::{ApiError, App};

fn view(provider: &dyn Provider) -> ProviderView {
    let info = provider.info();
    ProviderView {
        kind: info.kind.to_string(),
        model: info.model,
        endpoint: papayu_llm::redact(&info.endpoint).into_owned(),
    }
}

/// A failing provider's problem as the UI shows errors.
fn check_error(check: &ProviderCheck) -> ApiError {
    match &check.error {
        Some(e) => ApiError::new(e.code.as_str(), e.message.clone()),
        None => ApiError::new(
            ErrorCode::LlmConfig.as_str(),
            check.config_problems.join("; "),
        ),
    }
}

impl ConnectionTest {
    fn failed(provider: Option<ProviderView>, error: ApiError) -> Self {
        Self {
            ok: false,
            provider,
            latency_ms: None,
            checks: Vec::new(),
            error: Some(error),
        }
    }
}

impl App {
    /// The configuration of the project the frontend was started for, with the saved settings
    /// (or `pending` ones in their place), and the provider it names. The factory may load an
    /// in-process model (seconds, once per process), so it runs on a blocking thread.
    async fn provider_for(
        &self,
        pending: Option<&Settings>,
    ) -> Result<(AgentConfig, Arc<dyn Provider>), ApiError> {
        let o = &self.inner.options;
        let config = self.agent_config(o.project.as_deref(), pending)?;
        let factory = o.provider_factory.clone();
        let for_factory = config.clone();
        let provider = tokio::task::spawn_blocking(move || factory(&for_factory))
            .await
            .map_err(|e| ApiError::internal(format!("building the provider failed: {e}")))??;
        Ok((config, provider))
    }

    /// `provider_info`: the provider and model the saved settings and the environment name
    /// (what the next model call uses), or why there is none.
    pub async fn provider_info(&self, _: NoArgs) -> Result<ProviderStatus, ApiError> {
        Ok(match self.provider_for(None).await {
            Ok((_, provider)) => ProviderStatus {
                provider: Some(view(provider.as_ref())),
                problem: None,
            },
            Err(problem) => ProviderStatus {
                provider: None,
                problem: Some(problem),
            },
        })
    }

    /// `test_connection`: build the provider `args.settings` (default: the saved settings)
    /// name and send it `papayu doctor`'s probe — one small request per network provider. The
    /// in-process model passes once its file is loaded and checked (a probe would generate
    /// tokens for seconds). Invalid settings are `ERR_UI_BAD_REQUEST`; every other problem is
    /// a result with `ok: false` and the error.
    pub async fn test_connection(
        &self,
        args: TestConnectionArgs,
    ) -> Result<ConnectionTest, ApiError> {
        if let Some(s) = &args.settings {
            s.validate()?;
        }
        let (config, provider) = match self.provider_for(args.settings.as_ref()).await {
            Ok(built) => built,
            Err(e) => return Ok(ConnectionTest::failed(None, e)),
        };
        let shown = view(provider.as_ref());
        if provider.info().kind == ProviderKind::Local {
            return Ok(ConnectionTest {
                ok: true,
                provider: Some(shown),
                latency_ms: None,
                checks: Vec::new(),
                error: None,
            });
        }
        let configs = if config.providers.is_empty() {
            match config.provider_config() {
                Ok(c) => vec![c],
                Err(e) => return Ok(ConnectionTest::failed(Some(shown), e.into())),
            }
        } else {
            config.providers.clone()
        };
        let options = DoctorOptions {
            probe: true,
            protocol: config.effective_protocol(),
            ..DoctorOptions::default()
        };
        let report = doctor(&configs, &CapabilityCache::default(), &options).await;
        let failing = report.providers.iter().find(|c| !c.ok());
        let latency_ms = failing.and_then(|c| c.latency_ms).or_else(|| {
            report
                .providers
                .iter()
                .filter_map(|c| c.latency_ms)
                .reduce(f64::max)
        });
        Ok(ConnectionTest {
            ok: report.ok(),
            provider: Some(shown),
            latency_ms,
            error: failing.map(check_error),
            checks: report.providers,
        })
    }
}
