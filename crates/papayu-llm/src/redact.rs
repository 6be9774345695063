//! Redaction of known secret formats (SPEC §7) from anything logged, traced or sent out.
//!
//! Every pattern is ASCII-only (compiled with Unicode disabled), so `\b` and character classes
//! never widen to non-ASCII letters and the scan stays a single fast pass. A secret is replaced
//! by `[REDACTED:<family>]`; for `Bearer` tokens the word `Bearer ` is kept.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

/// One family of secrets papayu recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SecretFamily {
    /// Anthropic API keys (`sk-ant-…`).
    Anthropic,
    /// OpenAI project and service-account keys (`sk-proj-…`, `sk-svcacct-…`, `sk-admin-…`).
    OpenAiProject,
    /// Legacy OpenAI keys (`sk-` followed by letters and digits).
    OpenAi,
    /// GitHub personal, OAuth, user, server and refresh tokens (`ghp_…`, `gho_…`, …).
    GitHubToken,
    /// GitHub fine-grained personal access tokens (`github_pat_…`).
    GitHubPat,
    /// AWS access key ids (`AKIA…`, `ASIA…`).
    AwsAccessKey,
    /// Slack tokens (`xoxb-…`, `xoxp-…`, …).
    Slack,
    /// JSON Web Tokens (`eyJ….eyJ….…`).
    Jwt,
    /// PEM private-key blocks (`-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE KEY-----`).
    PemPrivateKey,
    /// The credential after `Bearer ` (HTTP `Authorization` headers).
    Bearer,
}

impl SecretFamily {
    /// Every family, in the order patterns are applied (specific before general).
    pub const ALL: [SecretFamily; 10] = [
        Self::PemPrivateKey,
        Self::Anthropic,
        Self::OpenAiProject,
        Self::OpenAi,
        Self::GitHubPat,
        Self::GitHubToken,
        Self::AwsAccessKey,
        Self::Slack,
        Self::Jwt,
        Self::Bearer,
    ];

    /// The name used in the `[REDACTED:<name>]` marker.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic_key",
            Self::OpenAiProject => "openai_project_key",
            Self::OpenAi => "openai_key",
            Self::GitHubToken => "github_token",
            Self::GitHubPat => "github_pat",
            Self::AwsAccessKey => "aws_access_key",
            Self::Slack => "slack_token",
            Self::Jwt => "jwt",
            Self::PemPrivateKey => "private_key",
            Self::Bearer => "bearer_token",
        }
    }

    const fn pattern(self) -> &'static str {
        match self {
            Self::PemPrivateKey => {
                // A whole block, or (cut off by truncation) the header and the base64 after it.
                r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[A-Za-z0-9+/=\s:,.()-]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=\r\n]*)"
            }
            Self::Anthropic => r"\bsk-ant-[A-Za-z0-9]+-[A-Za-z0-9_-]{20,}",
            Self::OpenAiProject => r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}",
            // Hyphens are excluded so kebab-case words such as `sk-learn-...` never match.
            Self::OpenAi => r"\bsk-[A-Za-z0-9]{20,}",
            Self::GitHubPat => r"\bgithub_pat_[A-Za-z0-9_]{22,}",
            Self::GitHubToken => r"\bgh[pousr]_[A-Za-z0-9]{36,}",
            Self::AwsAccessKey => r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            Self::Slack => r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
            Self::Jwt => r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
            // The token part only; the closure below also demands a digit, which prose lacks.
            Self::Bearer => r"\b((?i:bearer)[ \t]+)([A-Za-z0-9._~+/=-]{16,})",
        }
    }
}

struct Redactor {
    each: Vec<(SecretFamily, Regex)>,
}

fn build(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern).unicode(false).build().ok()
}

fn redactor() -> &'static Redactor {
    static REDACTOR: OnceLock<Redactor> = OnceLock::new();
    REDACTOR.get_or_init(|| {
        // One regex per family rather than a RegexSet: each pattern starts with a literal
        // (`sk-`, `ghp_`, `AKIA`, …) that the regex engine's prefilter finds with memchr, which
        // scans 100 KB of clean text several times faster than the set's combined automaton.
        // The patterns are constants covered by the corpus test; one that failed to compile
        // would show there.
        let each = SecretFamily::ALL
            .iter()
            .filter_map(|&f| build(f.pattern()).map(|r| (f, r)))
            .collect();
        Redactor { each }
    })
}

/// Replace every known secret in `text` by `[REDACTED:<family>]`.
///
/// Returns the input unchanged (borrowed, no allocation) when it holds no secret, which is
/// the common case, found by the literal prefilters of the patterns.
///
/// ```
/// let line = "Authorization: Bearer sk-proj-abcdefghijklmnopqrstuvwx1234";
/// assert_eq!(papayu_llm::redact(line), "Authorization: Bearer [REDACTED:openai_project_key]");
/// assert_eq!(papayu_llm::redact("risk-assessment"), "risk-assessment");
/// ```
pub fn redact(text: &str) -> Cow<'_, str> {
    let r = redactor();
    let mut out = Cow::Borrowed(text);
    for (family, regex) in &r.each {
        if !regex.is_match(&out) {
            continue;
        }
        let replaced = if *family == SecretFamily::Bearer {
            regex.replace_all(&out, |c: &regex::Captures<'_>| {
                let token = &c[2];
                if !bearer_token_is_secret(token) {
                    c[0].to_owned()
                } else {
                    format!("{}[REDACTED:{}]", &c[1], family.name())
                }
            })
        } else {
            regex.replace_all(&out, format!("[REDACTED:{}]", family.name()).as_str())
        };
        if let Cow::Owned(s) = replaced {
            out = Cow::Owned(s);
        }
    }
    out
}

/// The families of secrets found in `text` (for reports and tests).
pub fn find_secrets(text: &str) -> Vec<SecretFamily> {
    redactor()
        .each
        .iter()
        .filter(|(family, regex)| match family {
            SecretFamily::Bearer => regex
                .captures_iter(text)
                .any(|c| bearer_token_is_secret(&c[2])),
            _ => regex.is_match(text),
        })
        .map(|(family, _)| *family)
        .collect()
}

fn bearer_token_is_secret(token: &str) -> bool {
    token.bytes().any(|b| b.is_ascii_digit())
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
