//! Redaction of secrets (SPEC §7) from anything logged, traced or sent out.
//!
//! The families follow a well-kept secret scanner's rule set — gitleaks' `config/gitleaks.toml`
//! (<https://github.com/gitleaks/gitleaks>, MIT) — ported in [`rules`]: provider tokens with a
//! fixed prefix, private-key blocks, credentials in URLs and HTTP headers, and `password=`,
//! `secret:`, `token =` style assignments. A secret is replaced *within its line* by
//! `[REDACTED:<family>]` (an assignment keeps its key, a `Bearer` header its scheme), so line
//! numbers stay right; a private-key block keeps its line breaks and the `N|` prefixes of a
//! numbered FILE block.
//!
//! Patterns are ASCII-only where they match a token (compiled with Unicode disabled, so `\b`
//! and character classes never widen to non-ASCII letters and every scan stays a fast DFA
//! pass); the values of assignments may hold any character.

mod pem;
mod rules;

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::{Captures, Regex, RegexBuilder};

use rules::{Check, RULES};

macro_rules! families {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, )+) => {
        /// One family of secrets papayu recognises.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum SecretFamily {
            $( $(#[$doc])* $variant, )+
        }

        impl SecretFamily {
            /// Every family, in the order they are applied (specific before general).
            pub const ALL: &'static [SecretFamily] = &[ $( SecretFamily::$variant, )+ ];

            /// The name used in the `[REDACTED:<name>]` marker.
            pub const fn name(self) -> &'static str {
                match self { $( SecretFamily::$variant => $name, )+ }
            }
        }
    };
}

families! {
    /// PEM and PGP private-key blocks (`-----BEGIN … PRIVATE KEY-----` … `-----END …`), also
    /// when the lines are numbered (`12|MIIE…`), JSON-escaped (`\n`) or cut off.
    PemPrivateKey = "private_key",
    /// age secret keys (`AGE-SECRET-KEY-1…`).
    AgeSecretKey = "age_secret_key",
    /// Anthropic API keys (`sk-ant-…`).
    Anthropic = "anthropic_key",
    /// OpenAI project and service-account keys (`sk-proj-…`, `sk-svcacct-…`, `sk-admin-…`).
    OpenAiProject = "openai_project_key",
    /// Legacy OpenAI keys (`sk-` followed by letters and digits).
    OpenAi = "openai_key",
    /// Stripe secret, restricted and webhook keys (`sk_live_…`, `rk_test_…`, `whsec_…`).
    Stripe = "stripe_key",
    /// GitHub fine-grained personal access tokens (`github_pat_…`).
    GitHubPat = "github_pat",
    /// GitHub personal, OAuth, user, server and refresh tokens (`ghp_…`, `gho_…`, …).
    GitHubToken = "github_token",
    /// GitLab tokens (`glpat-…`, `gldt-…`, `glrt-…`, runner and CI job tokens, …).
    GitLab = "gitlab_token",
    /// An AWS secret access key next to its key id or its variable name.
    AwsSecretKey = "aws_secret_key",
    /// AWS access key ids (`AKIA…`, `ASIA…`, `ABIA…`, `ACCA…`).
    AwsAccessKey = "aws_access_key",
    /// Amazon Bedrock API keys (`ABSK…`).
    AwsBedrock = "aws_bedrock_key",
    /// Google API keys (`AIza…`).
    GoogleApiKey = "google_api_key",
    /// Google OAuth client secrets and tokens (`GOCSPX-…`, `ya29.…`, `1//0…`).
    GoogleOAuth = "google_oauth",
    /// Azure AD client secrets (`…8Q~…`) and storage SAS signatures.
    Azure = "azure_secret",
    /// Slack bot, user, app and config tokens (`xoxb-…`, `xapp-…`, …).
    Slack = "slack_token",
    /// Incoming-webhook URLs (Slack, Microsoft Teams, Discord).
    WebhookUrl = "webhook_url",
    /// npm access tokens (`npm_…`).
    Npm = "npm_token",
    /// PyPI upload tokens (`pypi-AgEIcHlwaS5vcmc…`).
    PyPi = "pypi_token",
    /// RubyGems API keys (`rubygems_…`).
    RubyGems = "rubygems_key",
    /// Hugging Face tokens (`hf_…`, `api_org_…`).
    HuggingFace = "huggingface_token",
    /// DigitalOcean tokens (`dop_v1_…`, `doo_v1_…`, `dor_v1_…`).
    DigitalOcean = "digitalocean_token",
    /// Shopify tokens and shared secrets (`shpat_…`, `shpss_…`, …).
    Shopify = "shopify_token",
    /// SendGrid API keys (`SG.…`).
    SendGrid = "sendgrid_key",
    /// Brevo (Sendinblue) API keys (`xkeysib-…`).
    Brevo = "brevo_key",
    /// Twilio API keys (`SK` + 32 hex digits).
    Twilio = "twilio_key",
    /// Databricks tokens (`dapi…`).
    Databricks = "databricks_token",
    /// Doppler tokens (`dp.pt.…`).
    Doppler = "doppler_token",
    /// Dynatrace tokens (`dt0c01.…`).
    Dynatrace = "dynatrace_token",
    /// Pulumi tokens (`pul-…`).
    Pulumi = "pulumi_token",
    /// Postman API keys (`PMAK-…`).
    Postman = "postman_key",
    /// PlanetScale tokens and passwords (`pscale_tkn_…`, `pscale_pw_…`).
    PlanetScale = "planetscale_token",
    /// Grafana tokens (`glc_…`, `glsa_…`, `eyJrIjoi…`).
    Grafana = "grafana_token",
    /// HashiCorp Vault tokens (`hvs.…`, `hvb.…`) and Terraform Cloud tokens (`….atlasv1.…`).
    HashiCorp = "hashicorp_token",
    /// Linear API keys (`lin_api_…`).
    Linear = "linear_key",
    /// Notion tokens (`ntn_…`, `secret_…`).
    Notion = "notion_token",
    /// Perplexity API keys (`pplx-…`).
    Perplexity = "perplexity_key",
    /// Sentry user and organisation tokens (`sntryu_…`, `sntrys_…`).
    Sentry = "sentry_token",
    /// Atlassian API tokens (`ATATT3…`).
    Atlassian = "atlassian_token",
    /// Square tokens (`sq0atp-…`, `sq0csp-…`, `EAAA…`).
    Square = "square_token",
    /// Facebook page access tokens (`EAAM…`, `EAAC…`).
    Facebook = "facebook_token",
    /// Alibaba Cloud access key ids (`LTAI…`).
    Alibaba = "alibaba_key",
    /// Artifactory API and reference tokens (`AKCp…`, `cmVmd…`).
    Artifactory = "artifactory_token",
    /// 1Password secret keys and service-account tokens (`A3-…`, `ops_eyJ…`).
    OnePassword = "onepassword_secret",
    /// Fly.io tokens (`fo1_…`, `fm2_…`).
    FlyIo = "flyio_token",
    /// Heroku API keys (`HRKU-AA…`).
    Heroku = "heroku_key",
    /// Telegram bot tokens (`123456789:AA…`).
    Telegram = "telegram_token",
    /// Discord bot tokens.
    Discord = "discord_token",
    /// Mapbox access tokens (`pk.eyJ1…`, `sk.eyJ1…`).
    Mapbox = "mapbox_token",
    /// Other prefixed tokens of the gitleaks set: Duffel, EasyPost, Flutterwave, Frame.io,
    /// Infracost, OpenShift, Prefect, ReadMe, Scalingo, Shippo, Typeform, Clojars, …
    ServiceToken = "service_token",
    /// JSON Web Tokens (`eyJ….eyJ….…`).
    Jwt = "jwt",
    /// The password of a URL (`postgres://user:password@host`, `https://user:token@host`).
    UrlCredentials = "url_password",
    /// HTTP Basic credentials (`Authorization: Basic dXNlcjpwYXNz`).
    BasicAuth = "basic_auth",
    /// Passwords: `password=…`, `"passwd": "…"`, `.netrc`'s `password …`, `curl -u user:…`,
    /// NuGet's `ClearTextPassword`, `<password>…</password>`.
    Password = "password",
    /// Other assignments to a secret-sounding name (`client_secret`, `api_key`, `auth_token`,
    /// `private_key`, …) whose value looks like a credential.
    Assignment = "secret",
    /// The credential after `Bearer ` (HTTP `Authorization` headers).
    Bearer = "bearer_token",
}

/// One compiled rule: a family's regex and how to read a match.
struct Compiled {
    family: SecretFamily,
    regex: Regex,
    check: Check,
}

fn rules() -> &'static [Compiled] {
    static RULES_COMPILED: OnceLock<Vec<Compiled>> = OnceLock::new();
    RULES_COMPILED.get_or_init(|| {
        // One regex per rule rather than a RegexSet: most patterns start with a literal (`sk-`,
        // `ghp_`, `AKIA`, …) that the regex engine's prefilter finds with memchr, which scans
        // clean text several times faster than a set's combined automaton. The patterns are
        // constants; `every_rule_compiles` (a unit test) proves that each one builds.
        RULES
            .iter()
            .filter_map(|r| {
                RegexBuilder::new(r.pattern)
                    .unicode(false)
                    .size_limit(1 << 24)
                    .build()
                    .ok()
                    .map(|regex| Compiled {
                        family: r.family,
                        regex,
                        check: r.check,
                    })
            })
            .collect()
    })
}

fn marker(family: SecretFamily) -> String {
    format!("[REDACTED:{}]", family.name())
}

/// Replace every known secret in `text` by `[REDACTED:<family>]`, within its line.
///
/// Returns the input unchanged (borrowed, no allocation) when it holds no secret, which is
/// the common case, found by the literal prefilters of the patterns.
///
/// ```
/// let line = "Authorization: Bearer sk-proj-abcdefghijklmnopqrstuvwx1234";
/// assert_eq!(papayu_llm::redact(line), "Authorization: Bearer [REDACTED:openai_project_key]");
/// assert_eq!(papayu_llm::redact("DB_PASSWORD=hunter2"), "DB_PASSWORD=[REDACTED:password]");
/// assert_eq!(papayu_llm::redact("risk-assessment"), "risk-assessment");
/// ```
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = pem::redact(text);
    for rule in rules() {
        if !rule.regex.is_match(&out) {
            continue;
        }
        let replaced = rule
            .regex
            .replace_all(&out, |c: &Captures<'_>| replace_match(rule, c));
        if let Cow::Owned(s) = replaced {
            out = Cow::Owned(s);
        }
    }
    out
}

/// The replacement of one match: the secret part (the whole match, or the value group of an
/// assignment) becomes the marker; a match that is not a secret after all stays as it was.
fn replace_match(rule: &Compiled, c: &Captures<'_>) -> String {
    let whole = c.get(0).map_or("", |m| m.as_str());
    let Some(secret) = secret_of(rule, c) else {
        return whole.to_owned();
    };
    let start = c.get(0).map_or(0, |m| m.start());
    let mut out = String::with_capacity(whole.len());
    out.push_str(&whole[..secret.start() - start]);
    out.push_str(&marker(rule.family));
    out.push_str(&whole[secret.end() - start..]);
    out
}

/// The part of a match that is the secret, or `None` when the rule's check says it is not one.
fn secret_of<'t>(rule: &Compiled, c: &Captures<'t>) -> Option<regex::Match<'t>> {
    let group = |name: &str| c.name(name);
    match rule.check {
        Check::Whole => c.get(0),
        Check::Group => group("s"),
        Check::BearerToken => group("s").filter(|m| m.as_str().bytes().any(|b| b.is_ascii_digit())),
        Check::UrlPassword => group("s").filter(|m| !rules::is_placeholder(m.as_str())),
        Check::BasicAuth => group("s").filter(|m| rules::is_basic_credential(m.as_str())),
        Check::Assignment => {
            let key = group("key").map_or("", |m| m.as_str());
            let (value, quoted) = match (group("dq"), group("sq"), group("bare")) {
                (Some(v), _, _) | (None, Some(v), _) => (v, true),
                (None, None, Some(v)) => (v, false),
                _ => return None,
            };
            rules::assignment_is_secret(rule.family, key, value.as_str(), quoted).then_some(value)
        }
    }
}

/// The families of secrets found in `text` (for reports and tests).
pub fn find_secrets(text: &str) -> Vec<SecretFamily> {
    let mut found = Vec::new();
    if pem::contains_private_key(text) {
        found.push(SecretFamily::PemPrivateKey);
    }
    for rule in rules() {
        if found.contains(&rule.family) {
            continue;
        }
        if rule
            .regex
            .captures_iter(text)
            .any(|c| secret_of(rule, &c).is_some())
        {
            found.push(rule.family);
        }
    }
    found
}

/// `messages` as they leave papayu: each passed through [`redact`] when `enabled` (every
/// provider's `redact_outgoing`, HTTP or local), else copied as they are.
pub(crate) fn outgoing(
    messages: &[crate::request::Message],
    enabled: bool,
) -> Vec<crate::request::Message> {
    messages
        .iter()
        .map(|m| crate::request::Message {
            role: m.role,
            content: if enabled {
                redact(&m.content).into_owned()
            } else {
                m.content.clone()
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles() {
        for r in RULES {
            if let Err(e) = RegexBuilder::new(r.pattern)
                .unicode(false)
                .size_limit(1 << 24)
                .build()
            {
                panic!("{:?}: {e}", r.family);
            }
        }
        assert_eq!(rules().len(), RULES.len());
    }

    #[test]
    fn every_family_but_pem_has_a_rule() {
        for family in SecretFamily::ALL {
            assert!(
                *family == SecretFamily::PemPrivateKey || RULES.iter().any(|r| r.family == *family),
                "{family:?}"
            );
        }
    }
}
