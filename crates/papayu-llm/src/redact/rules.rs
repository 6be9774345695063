//! The rule table: one or more regexes per [`SecretFamily`], and the checks that tell a
//! credential from ordinary code.
//!
//! Token patterns are ported from gitleaks' default rule set (`config/gitleaks.toml`,
//! <https://github.com/gitleaks/gitleaks>, MIT License, Copyright (c) 2019 Zachary Rice); the
//! rule ids are named next to each pattern. Where gitleaks needs a service keyword before a
//! value (`heroku = …`), the generic assignment rules below cover the value instead.
//!
//! Patterns are compiled with Unicode disabled: `\w`, `\d`, `\s`, `\b` are ASCII, and a class
//! that must also take non-ASCII characters is written inside `(?u:…)`.

use super::SecretFamily as F;

/// How a match is turned into a replacement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// The whole match is the secret.
    Whole,
    /// Group `s` is the secret.
    Group,
    /// Group `s` after `Bearer `, when it holds a digit (prose after "Bearer" has none).
    BearerToken,
    /// Group `s`, the password of a URL, unless it is a placeholder.
    UrlPassword,
    /// Group `s`, when it decodes to `user:password`.
    BasicAuth,
    /// An assignment: groups `key` and one of `dq`, `sq`, `bare` (the value);
    /// [`assignment_is_secret`] decides.
    Assignment,
}

pub(super) struct Rule {
    pub family: F,
    pub pattern: &'static str,
    pub check: Check,
}

const fn whole(family: F, pattern: &'static str) -> Rule {
    Rule {
        family,
        pattern,
        check: Check::Whole,
    }
}

const fn group(family: F, pattern: &'static str) -> Rule {
    Rule {
        family,
        pattern,
        check: Check::Group,
    }
}

/// The operator and value of an assignment, shared by the key rules: `=`, `:`, `:=`, `=>`,
/// `?=`, `||=` with optional quotes around the key; a double-quoted, single-quoted or bare
/// value, the bare one ended by whitespace, `;`, `,`, `&`, `#`, a quote, a closing bracket, an
/// escaped newline or the end of the line (so `token = next_token()` is not a value).
macro_rules! assignment {
    ($key:literal) => {
        concat!(
            $key,
            r#"["']?[ \t]*(?:=|:=|=>|:|\?=|\|\|=)[ \t]*(?:"(?P<dq>(?u:[^"\\\r\n]|\\[^\r\n])+)"|'(?P<sq>(?u:[^'\\\r\n]|\\[^\r\n])+)'|(?P<bare>[A-Za-z0-9_/+!@%^~.-](?u:[^\s'"`;,&#<>(){}\[\]\\])*)(?:[\s;,&#'"`)\]}]|\\[nr]|(?m:$)))"#
        )
    };
}

/// Rules in the order they are applied: specific token shapes first, then URLs and headers,
/// then assignments, then `Bearer`.
pub(super) const RULES: &[Rule] = &[
    // age-secret-key
    whole(
        F::AgeSecretKey,
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    // anthropic-api-key, anthropic-admin-api-key (any length: older and newer keys differ)
    whole(F::Anthropic, r"\bsk-ant-[A-Za-z0-9]+-[A-Za-z0-9_-]{20,}"),
    // openai-api-key
    whole(
        F::OpenAiProject,
        r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}",
    ),
    // Hyphens are excluded so kebab-case words such as `sk-learn-...` never match.
    whole(F::OpenAi, r"\bsk-[A-Za-z0-9]{20,}"),
    // stripe-access-token, plus webhook signing secrets
    whole(
        F::Stripe,
        r"\b(?:(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,})\b",
    ),
    // github-fine-grained-pat
    whole(F::GitHubPat, r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    // github-pat, github-oauth, github-app-token, github-refresh-token
    whole(F::GitHubToken, r"\bgh[pousr]_[A-Za-z0-9]{36,}"),
    // gitlab-pat, gitlab-pat-routable, gitlab-deploy-token, gitlab-runner-authentication-token,
    // gitlab-ptt, gitlab-feed-token, gitlab-incoming-mail-token, gitlab-kubernetes-agent-token,
    // gitlab-oauth-app-secret, gitlab-scim-token, gitlab-feature-flag-client-token,
    // gitlab-cicd-job-token, gitlab-rrt, gitlab-session-cookie
    whole(
        F::GitLab,
        r"\b(?:(?:glpat|gldt|glrt|glptt|glft|glimt|glagent|gloas|glsoat|glffct|glcbt)-[0-9A-Za-z_.-]{20,}|GR1348941[\w-]{20,}|_gitlab_session=[0-9a-z]{32})",
    ),
    // aws: a secret access key after its key id, or after a variable naming it
    group(
        F::AwsSecretKey,
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}[ \t,;:|'`=]{1,5}(?P<s>[A-Za-z0-9/+]{40})(?:(?u:[^A-Za-z0-9/+=])|$)",
    ),
    group(
        F::AwsSecretKey,
        r#"(?i)(?:aws[\w.-]{0,20}?(?:secret|sk)[\w.-]{0,20}|secret_?access_?key)["']?[ \t]*(?:=|:=|=>|:)[ \t]*["'`]?(?P<s>[A-Za-z0-9/+]{40})(?:(?u:[^A-Za-z0-9/+=])|$)"#,
    ),
    // aws-access-token
    whole(
        F::AwsAccessKey,
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
    ),
    // aws-amazon-bedrock-api-key-long-lived, -short-lived
    whole(
        F::AwsBedrock,
        r"\b(?:ABSK[A-Za-z0-9+/]{100,}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=]*)",
    ),
    // gcp-api-key
    whole(F::GoogleApiKey, r"\bAIza[\w-]{35,}"),
    // Google OAuth client secrets, access and refresh tokens
    whole(
        F::GoogleOAuth,
        r"\b(?:GOCSPX-[A-Za-z0-9_-]{28,}|ya29\.[0-9A-Za-z_-]{20,})|\b1//0[0-9A-Za-z_-]{40,}",
    ),
    // azure-ad-client-secret
    group(
        F::Azure,
        r#"(?:^|[\\'"`\s>=:(,)])(?P<s>[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})(?:$|[\\'"`\s<),])"#,
    ),
    // Azure storage shared-access signatures (`sig=` of a SAS URL or connection string)
    group(F::Azure, r"[?&;]sig=(?P<s>[A-Za-z0-9%+/=]{30,})"),
    // slack-bot-token, slack-user-token, slack-app-token, slack-legacy-*, slack-config-*
    whole(
        F::Slack,
        r"\b(?:xox[abposre]-[A-Za-z0-9-]{10,}|xoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}|xapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+)",
    ),
    // slack-webhook-url, microsoft-teams-webhook, and Discord webhooks
    whole(
        F::WebhookUrl,
        r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}|https://[a-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/-]{40,}|https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{60,}",
    ),
    // npm-access-token
    whole(F::Npm, r"(?i)\bnpm_[a-z0-9]{36}\b"),
    // pypi-upload-token
    whole(F::PyPi, r"\bpypi-AgEIcHlwaS5vcmc[\w-]{50,}"),
    // rubygems-api-token
    whole(F::RubyGems, r"\brubygems_[a-f0-9]{48}\b"),
    // huggingface-access-token, huggingface-organization-api-token
    whole(F::HuggingFace, r"\b(?:hf_|api_org_)[A-Za-z]{34}\b"),
    // digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token
    whole(F::DigitalOcean, r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    // shopify-access-token, -custom-access-token, -private-app-access-token, -shared-secret
    whole(F::Shopify, r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    // sendgrid-api-token
    whole(
        F::SendGrid,
        r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",
    ),
    // sendinblue-api-token
    whole(F::Brevo, r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b"),
    // twilio-api-key
    whole(F::Twilio, r"\bSK[0-9a-fA-F]{32}\b"),
    // databricks-api-token
    whole(F::Databricks, r"\bdapi[a-f0-9]{32}(?:-\d)?\b"),
    // doppler-api-token
    whole(
        F::Doppler,
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}",
    ),
    // dynatrace-api-token
    whole(F::Dynatrace, r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    // pulumi-api-token
    whole(F::Pulumi, r"\bpul-[a-f0-9]{40}\b"),
    // postman-api-token
    whole(F::Postman, r"\bPMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}\b"),
    // planetscale-api-token, planetscale-oauth-token, planetscale-password
    whole(F::PlanetScale, r"\bpscale_(?:tkn|oauth|pw)_[\w=.-]{32,}"),
    // grafana-cloud-api-token, grafana-service-account-token, grafana-api-key
    whole(
        F::Grafana,
        r"\b(?:glc_[A-Za-z0-9+/]{32,}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,}={0,3})",
    ),
    // vault-service-token, vault-batch-token, hashicorp-tf-api-token
    whole(
        F::HashiCorp,
        r"\bhv[sb]\.[\w-]{24,}|\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
    ),
    // linear-api-key
    whole(F::Linear, r"\blin_api_[A-Za-z0-9]{40}\b"),
    // notion-api-token (and the older `secret_` integration tokens)
    whole(
        F::Notion,
        r"\b(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})\b",
    ),
    // perplexity-api-key
    whole(F::Perplexity, r"\bpplx-[A-Za-z0-9]{48}\b"),
    // sentry-user-token, sentry-org-token
    whole(
        F::Sentry,
        r"\b(?:sntryu_[a-f0-9]{64}|sntrys_eyJpYXQiO[A-Za-z0-9+/=_]{40,})",
    ),
    // atlassian-api-token
    whole(F::Atlassian, r"\bATATT3[A-Za-z0-9_=-]{150,}"),
    // square-access-token (and OAuth secrets)
    whole(F::Square, r"\b(?:EAAA|sq0atp-|sq0csp-)[\w-]{22,}\b"),
    // facebook-page-access-token
    whole(F::Facebook, r"\bEAA[MC][A-Za-z0-9]{100,}"),
    // alibaba-access-key-id
    whole(F::Alibaba, r"\bLTAI[A-Za-z0-9]{20}\b"),
    // artifactory-api-key, artifactory-reference-token
    whole(
        F::Artifactory,
        r"\b(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})\b",
    ),
    // 1password-secret-key, 1password-service-account-token
    whole(
        F::OnePassword,
        r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b|\bops_eyJ[A-Za-z0-9+/]{200,}={0,3}",
    ),
    // flyio-access-token
    whole(
        F::FlyIo,
        r"\b(?:fo1_[\w-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})",
    ),
    // heroku-api-key-v2
    whole(F::Heroku, r"\bHRKU-AA[0-9a-zA-Z_-]{58}"),
    // telegram-bot-api-token (the token's own shape, without gitleaks' keyword)
    whole(F::Telegram, r"\b[0-9]{8,10}:AA[0-9A-Za-z_-]{33}\b"),
    // discord bot tokens
    whole(
        F::Discord,
        r"\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b",
    ),
    // mapbox-api-token
    whole(
        F::Mapbox,
        r"\b[ps]k\.eyJ1[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}",
    ),
    // duffel-api-token, easypost-api-token, easypost-test-api-token, flutterwave-*, frameio-
    // api-token, infracost-api-token, openshift-user-token, prefect-api-token, readme-api-token,
    // scalingo-api-token, shippo-api-token, typeform-api-token, clojars-api-token,
    // intra42-client-secret, maxmind-license-key, settlemint-*, authress-service-client-
    // access-key, clickhouse-cloud-api-secret-key, cloudflare-origin-ca-key, adobe-client-secret
    whole(
        F::ServiceToken,
        concat!(
            r"\b(?:duffel_(?:test|live)_[A-Za-z0-9_=-]{43}|EZ[AT]K[A-Za-z0-9]{54}",
            r"|FLW(?:SECK|PUBK)(?:_TEST)?-[A-Za-z0-9]{12,32}(?:-X)?|fio-u-[A-Za-z0-9_=-]{64}",
            r"|ico-[A-Za-z0-9]{32}|sha256~[\w-]{43}|pnu_[A-Za-z0-9]{36}|rdme_[a-z0-9]{70}",
            r"|tk-us-[\w-]{48}|shippo_(?:live|test)_[a-fA-F0-9]{40}|tfp_[A-Za-z0-9_.=-]{59}",
            r"|(?i:CLOJARS_)[A-Za-z0-9]{60}|s-s4t2(?:ud|af)-[A-Fa-f0-9]{64}",
            r"|[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk|sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}",
            r"|4b1d[A-Za-z0-9]{38}|v1\.0-[a-f0-9]{24}-[a-f0-9]{100,}|p8e-[A-Za-z0-9]{32})",
        ),
    ),
    // jwt
    whole(
        F::Jwt,
        r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
    ),
    // Credentials in a URL: `scheme://user:password@host`.
    Rule {
        family: F::UrlCredentials,
        pattern: r#"\b[A-Za-z][A-Za-z0-9+.-]{1,30}://(?u:[^\s:/?#@'"`<>\[\]])*:(?P<s>(?u:[^\s/?#@'"`<>])+)@[A-Za-z0-9.\[_-]"#,
        check: Check::UrlPassword,
    },
    // curl-auth-header (Basic), and any `Authorization: Basic …`
    Rule {
        family: F::BasicAuth,
        pattern: r"(?i)\bbasic[ \t]+(?P<s>[A-Za-z0-9+/]{8,}={0,2})",
        check: Check::BasicAuth,
    },
    // curl-auth-user: `curl -u user:password`, `--user=user:password`
    group(
        F::Password,
        r#"\bcurl\b(?u:[^\r\n])*?[ \t](?:-u|--user)[ \t=]+["']?[A-Za-z0-9_.@$-]{1,64}:(?P<s>(?u:[^\s'"]){3,})"#,
    ),
    // `.netrc`: `machine host login user password secret`
    group(
        F::Password,
        r"(?i)\b(?:machine|login|default)[ \t]+[!-~]+(?:[ \t]+[!-~]+){0,4}[ \t]+password[ \t]+(?P<s>[!-~]+)",
    ),
    // nuget-config-password
    group(
        F::Password,
        r#"(?i)<add[ \t]+key="(?:ClearText)?Password"[ \t]+value="(?P<s>(?u:[^"\r\n])+)""#,
    ),
    // `<password>…</password>` in XML configuration
    group(
        F::Password,
        r"(?i)<(?:password|passwd|secret|token|apikey|api_key)>(?P<s>(?u:[^<\r\n])+)</",
    ),
    // generic-api-key and hashicorp-tf-password, split in two: passwords and secrets take any
    // value that is not a placeholder; the other key words need a value that looks random.
    Rule {
        family: F::Password,
        pattern: assignment!(
            r"(?i)(?P<key>(?:passw(?:or)?d|passphrase|\bpwd|\bpass\b|secret|_auth\b)[\w.-]{0,30})"
        ),
        check: Check::Assignment,
    },
    Rule {
        family: F::Assignment,
        pattern: assignment!(
            r"(?i)(?P<key>(?:token|(?:api|access|private|auth|encryption|signing|master|client|account|app|consumer|license)[_.-]?key|apikey|credentials?|\bcreds|\bauth\b)[\w.-]{0,30})"
        ),
        check: Check::Assignment,
    },
    // The token part only; the check also demands a digit, which prose lacks.
    Rule {
        family: F::Bearer,
        pattern: r"\b(?i:bearer)[ \t]+(?P<s>[A-Za-z0-9._~+/=-]{16,})",
        check: Check::BearerToken,
    },
];

/// Values that stand for a secret instead of being one: variables, templates, types, empty
/// words and examples.
pub(super) fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    if v.is_empty() || v.contains("REDACTED") {
        return true;
    }
    if v.starts_with(['$', '<', '%', '{', '#', '*', '@'])
        || v.starts_with("process.env")
        || v.starts_with("os.environ")
        || v.starts_with("env(")
    {
        return true;
    }
    let mut chars = v.chars();
    if let Some(first) = chars.next()
        && chars.all(|c| c == first)
    {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "null",
        "none",
        "nil",
        "true",
        "false",
        "undefined",
        "empty",
        "required",
        "optional",
        "string",
        "str",
        "bytes",
        "int",
        "bool",
        "boolean",
        "number",
        "any",
        "object",
        "unknown",
        "secret",
        "password",
        "passwd",
        "token",
        "redacted",
        "hidden",
        "masked",
    ];
    WORDS.contains(&lower.as_str())
        || [
            "example",
            "placeholder",
            "your_",
            "your-",
            "<your",
            "dummy",
            "sample",
        ]
        .iter()
        .any(|w| lower.contains(w))
}

/// Whether an assignment's value is a credential.
///
/// A password or secret is any value that is not a placeholder, a type name, a member access
/// (`self.password`), a phrase with spaces or a single title-case word (a translation:
/// `"password": "Passwort"`). Other key words (`token`, `api_key`, `auth`, …) also name ids,
/// counts and kinds, so their value must look random: 12+ characters with a letter and a
/// digit and a Shannon entropy of at least 3 bits per character.
pub(super) fn assignment_is_secret(family: F, key: &str, value: &str, quoted: bool) -> bool {
    if is_placeholder(value) || value.chars().any(char::is_whitespace) {
        return false;
    }
    let last_word = key
        .rsplit(['_', '-', '.'])
        .next()
        .unwrap_or(key)
        .to_ascii_lowercase();
    let lower = value.to_ascii_lowercase();
    if lower == key.to_ascii_lowercase() || lower == last_word {
        return false;
    }
    if is_member_access(value) || value.contains("://") || value.starts_with(['/', '.']) {
        return false;
    }
    if family == F::Password {
        if is_title_case_word(value) {
            return false;
        }
        if !quoted && is_identifier(value) && value.starts_with(|c: char| c.is_ascii_uppercase()) {
            // `password: String`, `secret: Option<Secret>`: a type, not a value.
            return false;
        }
        return value.chars().count() >= 3;
    }
    value.chars().count() >= 12
        && value.chars().any(|c| c.is_ascii_alphabetic())
        && value.chars().any(|c| c.is_ascii_digit())
        && shannon_entropy(value) >= 3.0
}

fn is_identifier(value: &str) -> bool {
    let mut chars = value.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `self.password`, `config.auth.token`, `settings.SECRET_KEY`.
fn is_member_access(value: &str) -> bool {
    value.contains('.')
        && value.split('.').all(|part| {
            is_identifier(part) && !part.chars().any(|c| c.is_ascii_digit()) || part.is_empty()
        })
        && !value.starts_with('.')
        && !value.ends_with('.')
}

/// `Passwort`, `Contraseña`, `Пароль`: one capitalised word, as in a translation file.
fn is_title_case_word(value: &str) -> bool {
    let mut chars = value.chars();
    chars.next().is_some_and(char::is_uppercase) && chars.all(char::is_lowercase)
}

fn shannon_entropy(value: &str) -> f64 {
    let mut counts = [0u32; 256];
    let mut total = 0u32;
    for b in value.bytes() {
        counts[usize::from(b)] += 1;
        total += 1;
    }
    let n = f64::from(total);
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = f64::from(*c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether `b64` (the token after `Basic `) decodes to `user:password`.
pub(super) fn is_basic_credential(b64: &str) -> bool {
    let mut bits = 0u32;
    let mut nbits = 0;
    let mut decoded = Vec::with_capacity(b64.len() * 3 / 4);
    for c in b64.bytes().take_while(|c| *c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return false,
        };
        bits = (bits << 6) | u32::from(v);
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            decoded.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    match std::str::from_utf8(&decoded) {
        Ok(s) => {
            s.split_once(':')
                .is_some_and(|(user, password)| !user.is_empty() && !password.is_empty())
                && !s.chars().any(char::is_control)
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_recognised_by_decoding() {
        assert!(is_basic_credential("dXNlcjpwYXNz")); // user:pass
        assert!(is_basic_credential("YWxhZGRpbjpvcGVuc2VzYW1l")); // aladdin:opensesame
        assert!(!is_basic_credential("authentication"));
        assert!(!is_basic_credential("dXNlcg==")); // user
    }

    #[test]
    fn entropy_orders_random_above_repetitive() {
        assert!(shannon_entropy("aaaaaaaaaaaa") < 0.1);
        assert!(shannon_entropy("4f9a1c2e8b7d6053") > 3.0);
    }
}
