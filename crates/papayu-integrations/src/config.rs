//! [`IntegrationsConfig`]: every integration's settings, parsed from the `PAPAYU_*` map the
//! frontend reads once (libraries read no environment) plus a lookup for the keys that live in
//! other variables (`TAVILY_API_KEY`, `SNYK_TOKEN`).

use std::collections::BTreeMap;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_agent::{ConfigError, parse_bool};
use serde_json::{Value, json};

use crate::automation::AllowList;
use crate::trends::SAFE_DESIGN_DOMAINS;

/// Tavily's API (overridden by `PAPAYU_TAVILY_URL`, e.g. for a stub in tests).
pub const TAVILY_URL: &str = "https://api.tavily.com";
/// Snyk's REST API base (US region; `PAPAYU_SNYK_API_URL` picks another region).
pub const SNYK_API_URL: &str = "https://api.snyk.io/rest";
/// The Snyk REST API version papayu speaks (`PAPAYU_SNYK_API_VERSION` overrides).
pub const SNYK_API_VERSION: &str = "2024-10-15";
/// The architecture summary's default place, relative to the project root.
pub const ARCHITECTURE_FILE: &str = ".papa-yu/architecture.md";

/// Which search service online research asks.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SearchBackend {
    /// Tavily's `POST /search` (`include_domains` honoured by the service).
    Tavily {
        /// Base URL (`https://api.tavily.com`).
        url: String,
        /// The API key (`tvly-…`); never logged, never in a snapshot.
        key: String,
    },
    /// A SearXNG instance's JSON API (`GET /search?format=json`); domains are filtered here.
    Searxng {
        /// Base URL of the instance.
        url: String,
    },
}

impl SearchBackend {
    /// `tavily` or `searxng`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Tavily { .. } => "tavily",
            Self::Searxng { .. } => "searxng",
        }
    }

    /// The service's base URL.
    pub fn url(&self) -> &str {
        match self {
            Self::Tavily { url, .. } | Self::Searxng { url } => url,
        }
    }
}

/// Online research: search → fetch → extract → summarise (`PAPAYU_RESEARCH_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResearchConfig {
    /// `PAPAYU_RESEARCH`: nothing is sent anywhere unless this is on.
    pub enabled: bool,
    /// The search service, when one is configured.
    pub backend: Option<SearchBackend>,
    /// Why no backend is configured, when research is on without one.
    pub backend_problem: Option<String>,
    /// `PAPAYU_RESEARCH_MAX_RESULTS`: search results asked for (5).
    pub max_results: usize,
    /// `PAPAYU_RESEARCH_PAGES`: top pages fetched and read (3).
    pub fetch_pages: usize,
    /// `PAPAYU_RESEARCH_MAX_PAGE_BYTES`: a page is read up to this many bytes (1 MiB).
    pub max_page_bytes: usize,
    /// `PAPAYU_RESEARCH_TIMEOUT_SEC`: each request's timeout (10 s).
    pub timeout: Duration,
    /// `PAPAYU_RESEARCH_MAX_CHARS`: the ONLINE block's cap, sources included (6 000).
    pub max_chars: usize,
    /// `PAPAYU_RESEARCH_AUTO`: research an unknown library named by an import error in the
    /// goal or the failing tests (on with research).
    pub auto: bool,
    /// `PAPAYU_RESEARCH_DOMAINS`: search only these domains unless a request names others.
    pub domains: Vec<String>,
    /// Where fetched pages are cached by URL (the frontend's cache directory), if anywhere.
    pub cache_dir: Option<Utf8PathBuf>,
    /// How long a cached page is used (24 h).
    pub cache_ttl: Duration,
    /// The `User-Agent` of every request, and the agent robots.txt rules are matched for.
    pub user_agent: String,
}

impl Default for ResearchConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            backend: None,
            backend_problem: None,
            max_results: 5,
            fetch_pages: 3,
            max_page_bytes: 1 << 20,
            timeout: Duration::from_secs(10),
            max_chars: 6_000,
            auto: true,
            domains: Vec::new(),
            cache_dir: None,
            cache_ttl: Duration::from_secs(24 * 3600),
            user_agent: format!("papayu/{}", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// Snyk Code findings (`PAPAYU_SNYK_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SnykConfig {
    /// `PAPAYU_SNYK_SYNC`: fetch code issues from Snyk's REST API.
    pub sync: bool,
    /// `PAPAYU_SNYK_TOKEN`, else `SNYK_TOKEN` (never logged).
    pub token: Option<String>,
    /// `PAPAYU_SNYK_ORG_ID`.
    pub org_id: Option<String>,
    /// `PAPAYU_SNYK_PROJECT_ID`: only this project's issues.
    pub project_id: Option<String>,
    /// `PAPAYU_SNYK_API_URL` (the US region's `https://api.snyk.io/rest`).
    pub api_url: String,
    /// `PAPAYU_SNYK_API_VERSION` (`2024-10-15`).
    pub api_version: String,
    /// `PAPAYU_SNYK_SARIF`: a local SARIF file (relative to the project root) imported offline.
    pub sarif: Option<String>,
    /// Each request's timeout (30 s).
    pub timeout: Duration,
    /// Findings in one block of the prompt at most (20).
    pub max_in_prompt: usize,
}

impl Default for SnykConfig {
    fn default() -> Self {
        Self {
            sync: false,
            token: None,
            org_id: None,
            project_id: None,
            api_url: SNYK_API_URL.to_owned(),
            api_version: SNYK_API_VERSION.to_owned(),
            sarif: None,
            timeout: Duration::from_secs(30),
            max_in_prompt: 20,
        }
    }
}

/// The architecture summary (`PAPAYU_DOCUMATIC_ARCH_PATH`, `PAPAYU_ARCH_MAX_CHARS`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArchitectureConfig {
    /// The file, relative to the project root (`.papa-yu/architecture.md`).
    pub path: String,
    /// The summary is cut to this many characters (4 000).
    pub max_chars: usize,
}

impl Default for ArchitectureConfig {
    fn default() -> Self {
        Self {
            path: ARCHITECTURE_FILE.to_owned(),
            max_chars: 4_000,
        }
    }
}

/// Personal automation (`PAPAYU_AUTOMATION*`, `PAPAYU_OPENER`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AutomationConfig {
    /// `PAPAYU_AUTOMATION`: papayu may run the model's proposed commands (allow-listed, each
    /// confirmed).
    pub enabled: bool,
    /// `PAPAYU_AUTOMATION_ALLOW`: which commands (the built-in list, narrowed; empty: none).
    pub allow: AllowList,
    /// `PAPAYU_AUTOMATION_TIMEOUT_SEC`: each command's timeout (300 s).
    pub timeout: Duration,
    /// `PAPAYU_OPENER`: the program that opens URLs (default: the system's opener).
    pub opener: Option<String>,
}

impl Default for AutomationConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            allow: AllowList::builtin(),
            timeout: Duration::from_secs(300),
            opener: None,
        }
    }
}

/// Every integration's settings, each off until configured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct IntegrationsConfig {
    /// Online research.
    pub research: ResearchConfig,
    /// `PAPAYU_TRENDS_DOMAINS`: the domains design-trend research may use (a curated list).
    pub trends_domains: Vec<String>,
    /// Snyk Code findings.
    pub snyk: SnykConfig,
    /// The architecture summary.
    pub architecture: ArchitectureConfig,
    /// `PAPAYU_AGENT_SYNC`: write `.papa-yu/agent-sync.json` after each analysis, plan, apply.
    pub agent_sync: bool,
    /// Personal automation.
    pub automation: AutomationConfig,
}

/// Every variable [`IntegrationsConfig::from_env`] reads from the `PAPAYU_*` map.
pub const ENV_VARIABLES: &[&str] = &[
    "PAPAYU_RESEARCH",
    "PAPAYU_RESEARCH_BACKEND",
    "PAPAYU_TAVILY_API_KEY",
    "PAPAYU_TAVILY_URL",
    "PAPAYU_SEARXNG_URL",
    "PAPAYU_RESEARCH_MAX_RESULTS",
    "PAPAYU_RESEARCH_PAGES",
    "PAPAYU_RESEARCH_MAX_PAGE_BYTES",
    "PAPAYU_RESEARCH_TIMEOUT_SEC",
    "PAPAYU_RESEARCH_MAX_CHARS",
    "PAPAYU_RESEARCH_AUTO",
    "PAPAYU_RESEARCH_DOMAINS",
    "PAPAYU_TRENDS_DOMAINS",
    "PAPAYU_SNYK_SYNC",
    "PAPAYU_SNYK_TOKEN",
    "PAPAYU_SNYK_ORG_ID",
    "PAPAYU_SNYK_PROJECT_ID",
    "PAPAYU_SNYK_API_URL",
    "PAPAYU_SNYK_API_VERSION",
    "PAPAYU_SNYK_SARIF",
    "PAPAYU_DOCUMATIC_ARCH_PATH",
    "PAPAYU_ARCH_MAX_CHARS",
    "PAPAYU_AGENT_SYNC",
    "PAPAYU_AUTOMATION",
    "PAPAYU_AUTOMATION_ALLOW",
    "PAPAYU_AUTOMATION_TIMEOUT_SEC",
    "PAPAYU_OPENER",
];

/// Variables outside `PAPAYU_*` that [`IntegrationsConfig::from_env`] asks the lookup for.
pub const KEY_VARIABLES: &[&str] = &["TAVILY_API_KEY", "SNYK_TOKEN"];

fn invalid(variable: &str, value: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        variable: variable.to_owned(),
        value: value.to_owned(),
        message: message.into(),
    }
}

struct Env<'a> {
    map: &'a BTreeMap<String, String>,
    lookup: &'a dyn Fn(&str) -> Option<String>,
}

impl Env<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        self.map
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }

    fn is_set(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    fn bool(&self, name: &str, default: bool) -> Result<bool, ConfigError> {
        self.get(name).map_or(Ok(default), |v| parse_bool(name, v))
    }

    fn number(&self, name: &str, default: u64, min: u64, max: u64) -> Result<u64, ConfigError> {
        let Some(v) = self.get(name) else {
            return Ok(default);
        };
        match v.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(invalid(
                name,
                v,
                format!("expected a whole number in {min}..={max}"),
            )),
        }
    }

    fn url(&self, name: &str) -> Result<Option<String>, ConfigError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        match url::Url::parse(v) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {
                Ok(Some(v.trim_end_matches('/').to_owned()))
            }
            _ => Err(invalid(name, v, "expected an http:// or https:// URL")),
        }
    }

    /// A secret: the `PAPAYU_*` variable, else the conventional one through the lookup.
    fn secret(&self, papayu: &str, conventional: &str) -> Option<String> {
        self.get(papayu)
            .map(str::to_owned)
            .or_else(|| (self.lookup)(conventional).filter(|v| !v.trim().is_empty()))
            .map(|v| v.trim().to_owned())
    }

    fn list(&self, name: &str) -> Result<Vec<String>, ConfigError> {
        let Some(v) = self.get(name) else {
            return Ok(Vec::new());
        };
        v.split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| {
                crate::research::normalize_domain(d)
                    .ok_or_else(|| invalid(name, v, format!("{d:?} is not a domain name")))
            })
            .collect()
    }
}

impl IntegrationsConfig {
    /// Parse the integrations' variables from `env` (the `PAPAYU_*` map) and `lookup` (for
    /// [`KEY_VARIABLES`]). Unset variables take their defaults — every integration off; an
    /// invalid value is an error naming the variable.
    pub fn from_env(
        env: &BTreeMap<String, String>,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<IntegrationsConfig, ConfigError> {
        let e = Env { map: env, lookup };
        let d = ResearchConfig::default();
        let enabled = e.bool("PAPAYU_RESEARCH", false)?;
        let tavily_key = e.secret("PAPAYU_TAVILY_API_KEY", "TAVILY_API_KEY");
        let tavily_url = e
            .url("PAPAYU_TAVILY_URL")?
            .unwrap_or_else(|| TAVILY_URL.to_owned());
        let searxng_url = e.url("PAPAYU_SEARXNG_URL")?;
        let (backend, backend_problem) = match e.get("PAPAYU_RESEARCH_BACKEND") {
            Some(v) if v.eq_ignore_ascii_case("tavily") => match tavily_key {
                Some(key) => (Some(SearchBackend::Tavily { url: tavily_url, key }), None),
                None => (None, Some("PAPAYU_RESEARCH_BACKEND=tavily needs PAPAYU_TAVILY_API_KEY or TAVILY_API_KEY".to_owned())),
            },
            Some(v) if v.eq_ignore_ascii_case("searxng") => match searxng_url {
                Some(url) => (Some(SearchBackend::Searxng { url }), None),
                None => (None, Some("PAPAYU_RESEARCH_BACKEND=searxng needs PAPAYU_SEARXNG_URL".to_owned())),
            },
            Some(v) => {
                return Err(invalid("PAPAYU_RESEARCH_BACKEND", v, "expected tavily or searxng"));
            }
            None => match (tavily_key, searxng_url) {
                (Some(key), _) => (Some(SearchBackend::Tavily { url: tavily_url, key }), None),
                (None, Some(url)) => (Some(SearchBackend::Searxng { url }), None),
                (None, None) => (None, Some("set TAVILY_API_KEY (or PAPAYU_TAVILY_API_KEY) for Tavily, or PAPAYU_SEARXNG_URL for a SearXNG instance".to_owned())),
            },
        };
        let research = ResearchConfig {
            enabled,
            backend,
            backend_problem,
            max_results: e.number("PAPAYU_RESEARCH_MAX_RESULTS", d.max_results as u64, 1, 20)?
                as usize,
            fetch_pages: e.number("PAPAYU_RESEARCH_PAGES", d.fetch_pages as u64, 0, 10)? as usize,
            max_page_bytes: e.number(
                "PAPAYU_RESEARCH_MAX_PAGE_BYTES",
                d.max_page_bytes as u64,
                1024,
                64 << 20,
            )? as usize,
            timeout: Duration::from_secs(e.number(
                "PAPAYU_RESEARCH_TIMEOUT_SEC",
                d.timeout.as_secs(),
                1,
                300,
            )?),
            max_chars: e.number(
                "PAPAYU_RESEARCH_MAX_CHARS",
                d.max_chars as u64,
                500,
                100_000,
            )? as usize,
            auto: e.bool("PAPAYU_RESEARCH_AUTO", d.auto)?,
            domains: e.list("PAPAYU_RESEARCH_DOMAINS")?,
            ..d
        };
        let trends_domains = if e.is_set("PAPAYU_TRENDS_DOMAINS") {
            e.list("PAPAYU_TRENDS_DOMAINS")?
        } else {
            SAFE_DESIGN_DOMAINS
                .iter()
                .map(|d| (*d).to_owned())
                .collect()
        };
        let sd = SnykConfig::default();
        let snyk = SnykConfig {
            sync: e.bool("PAPAYU_SNYK_SYNC", false)?,
            token: e.secret("PAPAYU_SNYK_TOKEN", "SNYK_TOKEN"),
            org_id: e.get("PAPAYU_SNYK_ORG_ID").map(str::to_owned),
            project_id: e.get("PAPAYU_SNYK_PROJECT_ID").map(str::to_owned),
            api_url: e.url("PAPAYU_SNYK_API_URL")?.unwrap_or(sd.api_url.clone()),
            api_version: e
                .get("PAPAYU_SNYK_API_VERSION")
                .map_or(sd.api_version.clone(), str::to_owned),
            sarif: e.get("PAPAYU_SNYK_SARIF").map(str::to_owned),
            ..sd
        };
        for (name, id) in [
            ("PAPAYU_SNYK_ORG_ID", &snyk.org_id),
            ("PAPAYU_SNYK_PROJECT_ID", &snyk.project_id),
        ] {
            if let Some(id) = id
                && !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            {
                return Err(invalid(
                    name,
                    id,
                    "expected a Snyk id (letters, digits and '-')",
                ));
            }
        }
        let ad = ArchitectureConfig::default();
        let architecture = ArchitectureConfig {
            path: e
                .get("PAPAYU_DOCUMATIC_ARCH_PATH")
                .map_or(ad.path, str::to_owned),
            max_chars: e.number("PAPAYU_ARCH_MAX_CHARS", ad.max_chars as u64, 200, 100_000)?
                as usize,
        };
        let md = AutomationConfig::default();
        let allow = if e.is_set("PAPAYU_AUTOMATION_ALLOW") {
            let raw = env
                .get("PAPAYU_AUTOMATION_ALLOW")
                .map(String::as_str)
                .unwrap_or_default();
            AllowList::parse(raw)
                .map_err(|err| invalid("PAPAYU_AUTOMATION_ALLOW", raw, err.to_string()))?
        } else {
            md.allow
        };
        let automation = AutomationConfig {
            enabled: e.bool("PAPAYU_AUTOMATION", false)?,
            allow,
            timeout: Duration::from_secs(e.number(
                "PAPAYU_AUTOMATION_TIMEOUT_SEC",
                md.timeout.as_secs(),
                1,
                86_400,
            )?),
            opener: e.get("PAPAYU_OPENER").map(str::to_owned),
        };
        Ok(IntegrationsConfig {
            research,
            trends_domains,
            snyk,
            architecture,
            agent_sync: e.bool("PAPAYU_AGENT_SYNC", false)?,
            automation,
        })
    }

    /// This configuration with research's page cache under `cache_home` (the user's cache
    /// directory, `~/.cache`): `<cache_home>/papayu/research`. Without it pages are cached in
    /// memory only.
    pub fn with_cache_home(mut self, cache_home: Option<&Utf8Path>) -> IntegrationsConfig {
        self.research.cache_dir = cache_home.map(|c| c.join("papayu").join("research"));
        self
    }

    /// The effective settings as `papayu doctor` shows them: keys and tokens are only said to
    /// be set or not.
    pub fn snapshot(&self) -> BTreeMap<String, Value> {
        let r = &self.research;
        let s = &self.snyk;
        let mut out = BTreeMap::new();
        out.insert("research.enabled".into(), json!(r.enabled));
        out.insert(
            "research.backend".into(),
            json!(r.backend.as_ref().map(SearchBackend::name)),
        );
        out.insert(
            "research.url".into(),
            json!(r.backend.as_ref().map(SearchBackend::url)),
        );
        out.insert(
            "research.key".into(),
            json!(matches!(r.backend, Some(SearchBackend::Tavily { .. })).then_some("<set>")),
        );
        out.insert("research.max_results".into(), json!(r.max_results));
        out.insert("research.pages".into(), json!(r.fetch_pages));
        out.insert("research.max_page_bytes".into(), json!(r.max_page_bytes));
        out.insert("research.timeout_sec".into(), json!(r.timeout.as_secs()));
        out.insert("research.max_chars".into(), json!(r.max_chars));
        out.insert("research.auto".into(), json!(r.auto));
        out.insert("research.domains".into(), json!(r.domains));
        out.insert("trends.domains".into(), json!(self.trends_domains));
        out.insert("snyk.sync".into(), json!(s.sync));
        out.insert(
            "snyk.token".into(),
            json!(s.token.as_ref().map(|_| "<set>")),
        );
        out.insert("snyk.org_id".into(), json!(s.org_id));
        out.insert("snyk.project_id".into(), json!(s.project_id));
        out.insert("snyk.api_url".into(), json!(s.api_url));
        out.insert("snyk.api_version".into(), json!(s.api_version));
        out.insert("snyk.sarif".into(), json!(s.sarif));
        out.insert("architecture.path".into(), json!(self.architecture.path));
        out.insert(
            "architecture.max_chars".into(),
            json!(self.architecture.max_chars),
        );
        out.insert("agent_sync".into(), json!(self.agent_sync));
        out.insert("automation.enabled".into(), json!(self.automation.enabled));
        out.insert(
            "automation.allow".into(),
            json!(self.automation.allow.names()),
        );
        out.insert(
            "automation.timeout_sec".into(),
            json!(self.automation.timeout.as_secs()),
        );
        out.insert("automation.opener".into(), json!(self.automation.opener));
        out
    }
}
