//! The integrations in the UI: their configuration from the app's environment, the design
//! trends search (the Trends tab) and opening a link in the system browser. It touches the
//! network only through an enabled research service, and runs only the system's URL opener.

use papayu_integrations::research::Researcher;
use papayu_integrations::{IntegrationsConfig, ResearchError, automation, trends};

use crate::api::{OpenUrlArgs, OpenedUrl, ResearchStatus, Trends, TrendsArgs};
use crate::{ApiError, App};

fn research_error(e: &ResearchError) -> ApiError {
    ApiError::new(e.code().as_str(), e.to_string())
}

impl App {
    /// The integrations' settings from the environment the frontend read (the same variables
    /// the CLI reads), research's page cache under the user's cache directory.
    pub(crate) fn integrations(&self) -> Result<IntegrationsConfig, ApiError> {
        let o = &self.inner.options;
        let lookup = |name: &str| (o.key_lookup)(name);
        Ok(IntegrationsConfig::from_env(&o.env, &lookup)?.with_cache_home(o.cache_dir.as_deref()))
    }

    /// Whether online research is usable; nothing is sent to find out.
    pub(crate) fn research_status(&self) -> ResearchStatus {
        let checked = self.integrations().and_then(|c| {
            Researcher::new(c.research.clone()).map_err(|e| research_error(&e))?;
            Ok(c)
        });
        match checked {
            Ok(c) => ResearchStatus {
                on: true,
                backend: c.research.backend.as_ref().map(|b| b.name().to_owned()),
                problem: None,
            },
            Err(e) => ResearchStatus {
                on: false,
                backend: None,
                problem: Some(e.message),
            },
        }
    }

    /// `trends`: design and icon trends from the curated design domains, as cards (the same
    /// search as `papayu trends`). Research off or without a service: `ERR_INVALID_CONFIG`,
    /// nothing sent.
    pub async fn trends(&self, args: TrendsArgs) -> Result<Trends, ApiError> {
        let config = self.integrations()?;
        let researcher = Researcher::new(config.research).map_err(|e| research_error(&e))?;
        trends::trends(&researcher, args.topic.as_deref(), &config.trends_domains)
            .await
            .map_err(|e| research_error(&e))
    }

    /// `open_url`: open an `http(s)` link with the system opener (`PAPAYU_OPENER`, else
    /// `xdg-open` / `open`), so the UI never navigates its own window away. Other schemes and
    /// URLs with credentials are refused (`ERR_CANCELLED`), nothing run.
    pub async fn open_url(&self, args: OpenUrlArgs) -> Result<OpenedUrl, ApiError> {
        let opener = self.integrations()?.automation.opener;
        let url =
            tokio::task::spawn_blocking(move || automation::open_url(&args.url, opener.as_deref()))
                .await
                .map_err(|e| ApiError::internal(format!("the opener task failed: {e}")))?
                .map_err(|e| ApiError::new(e.code().as_str(), e.to_string()))?;
        Ok(OpenedUrl {
            url: url.to_string(),
        })
    }
}
