//! The corpus of the families ported from gitleaks' rule set, plus passwords, URL and HTTP
//! credentials: for each, strings that must be redacted and look-alikes that must survive.
//! Fake secrets are assembled at run time so this file holds nothing a scanner would flag.

use papayu_llm::{SecretFamily as F, find_secrets, redact};

/// `s` repeated and cut to exactly `n` characters.
pub fn take(s: &str, n: usize) -> String {
    s.repeat(n / s.len() + 1)[..n].to_owned()
}

pub struct Case {
    pub family: F,
    pub positives: Vec<String>,
    pub negatives: Vec<String>,
}

fn case(family: F, positives: Vec<String>, negatives: &[&str]) -> Case {
    Case {
        family,
        positives,
        negatives: negatives.iter().map(|s| (*s).to_owned()).collect(),
    }
}

const HEX: &str = "0123456789abcdef";

/// One case per family that the original corpus (redaction.rs) does not cover.
pub fn more_cases() -> Vec<Case> {
    vec![
        case(
            F::AgeSecretKey,
            vec![format!(
                "AGE-SECRET-KEY-1{}",
                take("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
            )],
            &["AGE-SECRET-KEY-1SHORT", "age-secret-key is the prefix"],
        ),
        case(
            F::Stripe,
            vec![
                format!("sk_live_{}", take("4eC39HqLyjWDarjt", 24)),
                format!("rk_test_{}", take("Ab12", 24)),
                format!("whsec_{}", take("Xy9", 32)),
            ],
            &["sk_live_", "task_live_demo_helper", "disk_test_utilities"],
        ),
        case(
            F::GitLab,
            vec![
                format!("glpat-{}", take("Ab3dE", 20)),
                format!("glrt-{}", take("x9Y8", 20)),
                format!("GR1348941{}", take("aB3", 20)),
            ],
            &["glpat-short", "the glpat- prefix"],
        ),
        case(
            F::AwsSecretKey,
            vec![
                format!(
                    "aws_secret_access_key = {}",
                    take("wJalrXUtnF/K7MDENG+bPx", 40)
                ),
                format!("AWS_SECRET_ACCESS_KEY={}", take("Zq9/Ab3+", 40)),
                format!("AKIA{},{}", take("ABCD", 16), take("Zq9/Xc7+", 40)),
            ],
            &[
                "aws_region = us-east-1",
                "aws_secret_access_key = ${AWS_SECRET}",
            ],
        ),
        case(
            F::AwsBedrock,
            vec![format!("ABSK{}", take("QmVkcm9ja0FQSUtleS", 126))],
            &["ABSK is a prefix", "ABSKshort"],
        ),
        case(
            F::GoogleApiKey,
            vec![format!("AIza{}", take("SyD9t_rke7-2PouQ", 35))],
            &["AIzaShort", "the AIza prefix"],
        ),
        case(
            F::GoogleOAuth,
            vec![
                format!("GOCSPX-{}", take("1a2B3c4D", 28)),
                format!("ya29.{}", take("a0AfH6SMB", 40)),
            ],
            &["GOCSPX-", "ya29.1"],
        ),
        case(
            F::Azure,
            vec![
                format!("abc8Q~{}", take("Ab1_~.z", 34)),
                format!(
                    "https://acct.blob.core.windows.net/c?sv=2020-08-04&sig={}",
                    take("AbC%2Bd9", 44)
                ),
            ],
            &[
                "version 1Q~ is fine",
                "https://acct.blob.core.windows.net/c?sig=short",
            ],
        ),
        case(
            F::WebhookUrl,
            vec![
                format!(
                    "https://hooks.slack.com/services/T{}/B{}/{}",
                    take("ABC123", 8),
                    take("DEF456", 8),
                    take("xYz789", 24)
                ),
                format!(
                    "https://discord.com/api/webhooks/123456789012345678/{}",
                    take("aB3-_x", 68)
                ),
            ],
            &[
                "https://hooks.slack.com/services/",
                "https://discord.com/api/webhooks/1/x",
            ],
        ),
        case(
            F::Npm,
            vec![format!("npm_{}", take("a1B2c3D4e5", 36))],
            &["npm_install", "npm_config_cache"],
        ),
        case(
            F::PyPi,
            vec![format!(
                "pypi-AgEIcHlwaS5vcmc{}",
                take("CJGY2NkNTAwLTg", 60)
            )],
            &["pypi-AgEI", "pypi-upload"],
        ),
        case(
            F::RubyGems,
            vec![format!("rubygems_{}", take(HEX, 48))],
            &["rubygems_version", "rubygems_ab12"],
        ),
        case(
            F::HuggingFace,
            vec![
                format!("hf_{}", take("aBcDeFgHiJ", 34)),
                format!("api_org_{}", take("XyZw", 34)),
            ],
            &["hf_hub_download", "hf_short"],
        ),
        case(
            F::DigitalOcean,
            vec![format!("dop_v1_{}", take(HEX, 64))],
            &["dop_v1_short", "dop_v2_x"],
        ),
        case(
            F::Shopify,
            vec![
                format!("shpat_{}", take(HEX, 32)),
                format!("shpss_{}", take(HEX, 32)),
            ],
            &["shpat_x", "shpat_notahexvalue"],
        ),
        case(
            F::SendGrid,
            vec![format!(
                "SG.{}.{}",
                take("aBcDeF12", 22),
                take("gHiJ34_-", 43)
            )],
            &["SG.short", "SG.x.y"],
        ),
        case(
            F::Brevo,
            vec![format!(
                "xkeysib-{}-{}",
                take(HEX, 64),
                take("AbCd1234", 16)
            )],
            &["xkeysib-", "xkeysib-12"],
        ),
        case(
            F::Twilio,
            vec![format!("SK{}", take(HEX, 32))],
            &["SKIP_TESTS", "SK12"],
        ),
        case(
            F::Databricks,
            vec![format!("dapi{}", take(HEX, 32))],
            &["dapi_client", "dapi1234"],
        ),
        case(
            F::Doppler,
            vec![format!("dp.pt.{}", take("aBcD1234", 43))],
            &["dp.pt.short", "dp.pt."],
        ),
        case(
            F::Dynatrace,
            vec![format!(
                "dt0c01.{}.{}",
                take("ABCD1234", 24),
                take("abcd5678", 64)
            )],
            &["dt0c01.short", "dt0c01."],
        ),
        case(
            F::Pulumi,
            vec![format!("pul-{}", take(HEX, 40))],
            &["pul-short", "pull-request"],
        ),
        case(
            F::Postman,
            vec![format!("PMAK-{}-{}", take(HEX, 24), take(HEX, 34))],
            &["PMAK-", "PMAK-1234"],
        ),
        case(
            F::PlanetScale,
            vec![format!("pscale_tkn_{}", take("aB3_x.Y9", 40))],
            &["pscale_tkn_", "pscale_tkn_short"],
        ),
        case(
            F::Grafana,
            vec![
                format!("glc_{}", take("eyJvIjoiMTIz", 40)),
                format!("glsa_{}_{}", take("AbCd1234", 32), "0a1b2c3d"),
            ],
            &["glc_short", "glsa_x_y"],
        ),
        case(
            F::HashiCorp,
            vec![
                format!("hvs.{}", take("CAESIJ1k2", 90)),
                format!("{}.atlasv1.{}", take("abcd1234", 14), take("xYz_-=09", 65)),
            ],
            &["hvs.short", "atlasv1 is a word"],
        ),
        case(
            F::Linear,
            vec![format!("lin_api_{}", take("aB3dE6", 40))],
            &["lin_api_short", "lin_api_"],
        ),
        case(
            F::Notion,
            vec![format!(
                "ntn_{}{}",
                take("12345678901", 11),
                take("aBcD3", 35)
            )],
            &["ntn_short", "secret_sauce"],
        ),
        case(
            F::Perplexity,
            vec![format!("pplx-{}", take("aBc123", 48))],
            &["pplx-short", "pplx-"],
        ),
        case(
            F::Sentry,
            vec![format!("sntryu_{}", take(HEX, 64))],
            &["sntryu_short", "sentry_dsn"],
        ),
        case(
            F::Atlassian,
            vec![format!("ATATT3{}", take("xFfGF0_-=Ab", 186))],
            &["ATATT3short", "ATATT3"],
        ),
        case(
            F::Square,
            vec![
                format!("sq0atp-{}", take("aB3_-x", 22)),
                format!("EAAA{}", take("l9Xy_-", 40)),
            ],
            &["sq0atp-short", "EAAAshort"],
        ),
        case(
            F::Facebook,
            vec![format!("EAAC{}", take("ZAZB1a2b", 110))],
            &["EAACshort", "EAAC"],
        ),
        case(
            F::Alibaba,
            vec![format!("LTAI{}", take("aB3dE6fG9h", 20))],
            &["LTAIshort", "LTAI"],
        ),
        case(
            F::Artifactory,
            vec![format!("AKCp{}", take("aB3dE6", 69))],
            &["AKCpshort", "AKCp"],
        ),
        case(
            F::OnePassword,
            vec![format!(
                "A3-{}-{}-{}-{}-{}",
                take("ASWWYB", 6),
                take("798JRYLJVD4", 11),
                take("23DC2", 5),
                take("86TVM", 5),
                take("H43EB", 5)
            )],
            &["A3-paper-size", "A3-ABC"],
        ),
        case(
            F::FlyIo,
            vec![format!("fo1_{}", take("aB3_-x", 43))],
            &["fo1_short", "fo1_"],
        ),
        case(
            F::Heroku,
            vec![format!("HRKU-AA{}", take("aB3_-x", 58))],
            &["HRKU-AAshort", "HRKU-"],
        ),
        case(
            F::Telegram,
            vec![format!("123456789:AA{}", take("Fl3gT9_-x", 33))],
            &["12:30 AA meeting", "123456789:AB"],
        ),
        case(
            F::Discord,
            vec![format!(
                "M{}.{}.{}",
                take("TAxMjM0NTY3ODkw", 23),
                take("GaBcDe", 6),
                take("x9_-Yz", 30)
            )],
            &["M.x.y", "Main.rs.bak"],
        ),
        case(
            F::Mapbox,
            vec![format!(
                "pk.eyJ1{}.{}",
                take("IjoibWFwYm94", 30),
                take("aB3_-x", 22)
            )],
            &["pk.eyJ1", "pk.short"],
        ),
        case(
            F::ServiceToken,
            vec![
                format!("duffel_live_{}", take("aB3_=-", 43)),
                format!("EZAK{}", take("aB3", 54)),
                format!("pnu_{}", take("aB3dE6", 36)),
                format!("sha256~{}", take("aB3_-x", 43)),
                format!("rdme_{}", take("ab3de6", 70)),
            ],
            &["duffel_live_short", "pnu_short", "sha256~short"],
        ),
        case(
            F::UrlCredentials,
            vec![
                "postgres://app:pa55w0rd@db.internal:5432/app".into(),
                "mysql://root:hunter2@127.0.0.1/test".into(),
                format!(
                    "https://x-access-token:{}@github.com/o/r.git",
                    take("gh0x", 20)
                ),
                "amqp://guest:Gu3st!pw@rabbit:5672/".into(),
            ],
            &[
                "postgres://localhost/db",
                "https://user@host/path",
                "postgres://user:${DB_PASSWORD}@host/db",
                "http://localhost:8080/path",
                "http://[::1]:8080/x",
                "ssh://git@github.com:22/o/r.git",
            ],
        ),
        case(
            F::BasicAuth,
            vec![
                "Authorization: Basic dXNlcjpwYXNzd29yZA==".into(),
                "curl -H 'Authorization: basic YWxhZGRpbjpvcGVuc2VzYW1l'".into(),
            ],
            &[
                "Basic authentication is enabled",
                "basic settingsarefine",
                "Basic usage",
            ],
        ),
        case(
            F::Password,
            vec![
                "password=hunter2".into(),
                "DB_PASSWORD=correcthorse".into(),
                "\"passwd\": \"s3cr3t!\"".into(),
                "password: s3cret".into(),
                "PGPASSWORD='qwerty123'".into(),
                "machine api.host.org login me password t0ps3cret".into(),
                "curl -u admin:s3cr3tpass https://api.host.org".into(),
                "<add key=\"ClearTextPassword\" value=\"nuget-pw-1\" />".into(),
                "<password>xml-pw-9</password>".into(),
                "SECRET_KEY = 'django-insecure-4f9a1c2e8b'".into(),
                "client_secret: 9f8e7d6c5b4a".into(),
                "_auth=dXNlcjpwYXNzd29yZDEyMw==".into(),
            ],
            &[
                "password = getpass()",
                "self.password = password",
                "password: String,",
                "if password == other:",
                "\"password\": \"Passwort\"",
                "password_hint: \"at least 8 characters\"",
                "password=${DB_PASSWORD}",
                "password: null",
                "forgot your password?",
                "PASSWORD_FIELD = \"password\"",
                "password = os.environ[\"DB_PASSWORD\"]",
                "let password = prompt_password()?;",
                "secret: Option<Secret>",
                "password = settings.DB_PASSWORD",
            ],
        ),
        case(
            F::Assignment,
            vec![
                "api_key = \"a1b2c3d4e5f6g7h8i9\"".into(),
                "AUTH_TOKEN=4f9a1c2e8b7d6053aa".into(),
                "access_key: AbC123xYz789QwE".into(),
                "\"auth\": \"dXNlcjpwYXNzd29yZDEyMw==\"".into(),
                "?access_token=Zx81Kq02Lm93Pw&x=1".into(),
            ],
            &[
                "token_type: \"bearer\"",
                "max_tokens = 4096",
                "let token = next_token();",
                "api_key_header = \"X-Api-Key\"",
                "csrf_token_name = \"csrftoken\"",
                "token_url = \"https://auth.myco.io/v1/token\"",
                "checksum = \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"",
                "api_key = config.api_key",
            ],
        ),
    ]
}

/// The values inside the positives of the families that redact only part of a match (the
/// key, scheme or user stays): none of them may survive.
fn hidden_values() -> Vec<String> {
    let mut values: Vec<String> = [
        "pa55w0rd",
        "hunter2",
        "Gu3st!pw",
        "dXNlcjpwYXNzd29yZA==",
        "YWxhZGRpbjpvcGVuc2VzYW1l",
        "correcthorse",
        "s3cr3t!",
        "s3cret",
        "qwerty123",
        "t0ps3cret",
        "s3cr3tpass",
        "nuget-pw-1",
        "xml-pw-9",
        "django-insecure-4f9a1c2e8b",
        "9f8e7d6c5b4a",
        "dXNlcjpwYXNzd29yZDEyMw==",
        "a1b2c3d4e5f6g7h8i9",
        "4f9a1c2e8b7d6053aa",
        "AbC123xYz789QwE",
        "Zx81Kq02Lm93Pw",
    ]
    .iter()
    .map(|v| (*v).to_owned())
    .collect();
    values.push(take("wJalrXUtnF/K7MDENG+bPx", 40));
    values.push(take("Zq9/Ab3+", 40));
    values.push(take("Zq9/Xc7+", 40));
    values.push(take("gh0x", 20));
    values
}

fn value_of(positive: &str) -> Vec<String> {
    let hidden: Vec<String> = hidden_values()
        .into_iter()
        .filter(|v| positive.contains(v.as_str()))
        .collect();
    if hidden.is_empty() {
        vec![positive.to_owned()]
    } else {
        hidden
    }
}

#[test]
fn redacted_values_never_survive_and_lines_keep_their_shape() {
    for case in more_cases() {
        for secret in &case.positives {
            let line = format!("before {secret} after\nnext line");
            let out = redact(&line);
            for value in value_of(secret) {
                assert!(
                    !out.contains(value.as_str()),
                    "{:?}: {value:?} survived in {out}",
                    case.family
                );
            }
            assert_eq!(out.lines().count(), 2, "{out}");
            assert!(out.ends_with(" after\nnext line"), "{out}");
        }
    }
}

#[test]
fn ordinary_code_and_data_are_left_alone() {
    let sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    let header = format!("FILE[src/token_store.rs] (sha256={sha}):");
    let texts = [
        header.clone(),
        format!("FILE[config/api_key.txt] (sha256={sha}):"),
        format!("FILE[secret_notes.md] (sha256={sha}):\n1|# notes"),
        format!("checksum = \"{sha}\""),
        format!(
            "\"integrity\": \"sha512-{}\"",
            take("z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXc", 86)
        ),
        "id = \"123e4567-e89b-12d3-a456-426614174000\"".into(),
        "let uuid = Uuid::parse_str(\"550e8400-e29b-41d4-a716-446655440000\")?;".into(),
        format!(
            "const FIXTURE: &str = \"{}\";",
            take("aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQ=", 64)
        ),
        "fn tokenize(input: &str) -> Vec<Token> { lexer::tokens(input) }".into(),
        "let secret = derive_secret(&seed);".into(),
        "password_field.set_placeholder(\"Password\");".into(),
        "if token.kind == TokenKind::Ident { return None; }".into(),
        "max_tokens: 4096,".into(),
        "keys = [\"a\", \"b\"]".into(),
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8".into(),
        "https://example.com/path?page=2&sort=asc".into(),
        "git@github.com:owner/repo.git".into(),
        "Bearer token authentication is described in RFC 6750.".into(),
        "The private key never leaves the HSM; see docs/keys.md.".into(),
        "docker run -e POSTGRES_PASSWORD -p 5432:5432 postgres".into(),
        "pub struct Credentials { pub username: String, pub password: SecretString }".into(),
    ];
    for text in texts {
        assert_eq!(redact(&text), text, "false positive");
        assert!(
            find_secrets(&text).is_empty(),
            "{text}: {:?}",
            find_secrets(&text)
        );
    }
}

#[test]
fn r_numbered_private_key_in_a_file_block_is_redacted_line_by_line() {
    let body = take(
        "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
        64,
    );
    let mut file = String::from("-----BEGIN RSA PRIVATE KEY-----\n");
    for i in 0..20 {
        file.push_str(&format!("{}{i:02}\n", &body[..62]));
    }
    file.push_str("-----END RSA PRIVATE KEY-----\nfn main() {}\n");
    let numbered: String = file
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{}|{l}\n", i + 1))
        .collect();
    let sha = "a".repeat(64);
    let block = format!("FILE[deploy/key.txt] (sha256={sha}):\n{numbered}");
    for text in [block.clone(), file.clone()] {
        let out = redact(&text);
        assert!(!out.contains(&body[..40]), "{out}");
        assert_eq!(out.lines().count(), text.lines().count(), "{out}");
        assert!(out.contains("fn main() {}"), "{out}");
        assert!(out.contains("[REDACTED:private_key]"), "{out}");
    }
    let out = redact(&block);
    assert!(
        out.starts_with(&format!(
            "FILE[deploy/key.txt] (sha256={sha}):\n1|[REDACTED:private_key]\n2|\n3|\n"
        )),
        "{out}"
    );
    assert!(out.contains("\n23|fn main() {}"), "{out}");

    // The diet cut the middle out: the tail still holds key lines and the footer.
    let tail_only = format!(
        "...[TRUNCATED 900 chars]...\n{}",
        numbered.lines().skip(15).collect::<Vec<_>>().join("\n")
    );
    let out = redact(&tail_only);
    assert!(!out.contains(&body[..40]), "{out}");
    assert_eq!(out.lines().count(), tail_only.lines().count(), "{out}");

    // JSON-escaped, as in a service-account credentials file.
    let escaped = format!(
        "{{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{}\\n{}\\n-----END PRIVATE KEY-----\\n\", \"client_email\": \"a@b.iam\"}}",
        &body[..60],
        &body[..60]
    );
    let out = redact(&escaped);
    assert!(!out.contains(&body[..40]), "{out}");
    assert!(out.contains("\"client_email\": \"a@b.iam\""), "{out}");
}
