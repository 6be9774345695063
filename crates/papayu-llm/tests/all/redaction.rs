//! The redaction corpus: for every secret family, strings that must be redacted and look-alikes
//! that must survive untouched. Fake secrets are assembled at run time so this file itself
//! holds nothing a secret scanner would flag.

use papayu_llm::{SecretFamily, find_secrets, redact};

fn rep(s: &str, n: usize) -> String {
    s.repeat(n)
}

struct Case {
    family: SecretFamily,
    positives: Vec<String>,
    negatives: Vec<String>,
}

fn corpus() -> Vec<Case> {
    let mut cases = original_corpus();
    cases.extend(
        crate::secret_corpus::more_cases()
            .into_iter()
            .map(|c| Case {
                family: c.family,
                positives: c.positives,
                negatives: c.negatives,
            }),
    );
    cases
}

fn original_corpus() -> Vec<Case> {
    vec![
        Case {
            family: SecretFamily::OpenAi,
            positives: vec![
                format!("sk-{}", rep("A1b2C3d4", 6)),
                format!("sk-{}", rep("x9", 10)),
            ],
            negatives: vec![
                "sk-learn".into(),
                "risk-assessment-framework-for-large-projects".into(),
                "task-1234567890123456789012".into(),
                format!("sk-{}", rep("ab-", 10)),
                "sk-short1234".into(),
            ],
        },
        Case {
            family: SecretFamily::OpenAiProject,
            positives: vec![
                format!("sk-proj-{}", rep("Ab3_dE-f", 8)),
                format!("sk-svcacct-{}", rep("Zz90", 8)),
                format!("sk-admin-{}", rep("Qq12", 8)),
            ],
            negatives: vec![
                "sk-proj-".into(),
                "sk-proj-short".into(),
                "ask-proj-planning-notes".into(),
            ],
        },
        Case {
            family: SecretFamily::Anthropic,
            positives: vec![
                format!("sk-ant-api03-{}", rep("aB3-_x", 16)),
                format!("sk-ant-admin01-{}", rep("Yy7", 10)),
            ],
            negatives: vec![
                "sk-ant-".into(),
                "sk-ant-api03-short".into(),
                "desk-ant-api03-is-a-phrase".into(),
            ],
        },
        Case {
            family: SecretFamily::GitHubToken,
            positives: vec![
                format!("ghp_{}", rep("a1B2c3", 6)),
                format!("gho_{}", rep("Z9", 18)),
                format!("ghs_{}", rep("k", 36)),
            ],
            negatives: vec![
                "ghp_short".into(),
                format!("xghp_{}", rep("a1", 18)),
                "ghp_ is the prefix of personal tokens".into(),
                format!("ghx_{}", rep("a1", 18)),
            ],
        },
        Case {
            family: SecretFamily::GitHubPat,
            positives: vec![format!(
                "github_pat_{}_{}",
                rep("11ABCDEFG", 3),
                rep("xYz0", 14)
            )],
            negatives: vec![
                "github_pat_".into(),
                "github_pat_short".into(),
                "my_github_path_variable".into(),
            ],
        },
        Case {
            family: SecretFamily::AwsAccessKey,
            positives: vec![
                format!("AKIA{}", rep("IOSFODNN", 2)),
                format!("ASIA{}", rep("Y3FV", 4)),
            ],
            negatives: vec![
                "AKIA".into(),
                format!("AKIA{}", rep("ABC", 3)),
                format!("AKIA{}", rep("abcd", 4)),
                format!("XAKIA{}", rep("ABCD", 4)),
                format!("AKIA{}X", rep("ABCD", 4)),
            ],
        },
        Case {
            family: SecretFamily::Slack,
            positives: vec![
                format!("xoxb-{}-{}", rep("1234", 3), rep("aBcD", 6)),
                format!("xoxp-{}", rep("98-76", 4)),
            ],
            negatives: vec![
                "xoxb-".into(),
                "xoxb-123".into(),
                "xoxz-1234567890123".into(),
                "boxox-12345678901".into(),
            ],
        },
        Case {
            family: SecretFamily::Jwt,
            positives: vec![format!(
                "eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}",
                rep("zdWIiOiIxMjM0", 2),
                rep("SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", 1)
            )],
            negatives: vec![
                "eyJhbGciOiJIUzI1NiJ9".into(),
                "eyJ.eyJ.".into(),
                "keyJson.eyJunk.value".into(),
            ],
        },
        Case {
            family: SecretFamily::PemPrivateKey,
            positives: vec![
                format!(
                    "-----BEGIN RSA PRIVATE KEY-----\n{}\n{}\n-----END RSA PRIVATE KEY-----",
                    rep("MIIEow", 10),
                    rep("AbC+/=", 5)
                ),
                format!(
                    "-----BEGIN PRIVATE KEY-----\r\n{}\r\n-----END PRIVATE KEY-----",
                    rep("MC4CAQAw", 5)
                ),
                format!(
                    "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
                    rep("b3BlbnNzaC1rZXktdjEAAAAA", 3)
                ),
                // A block cut off by truncation is still redacted up to the end.
                format!("-----BEGIN EC PRIVATE KEY-----\n{}", rep("MHcCAQEE", 6)),
            ],
            negatives: vec![
                format!(
                    "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----",
                    rep("MIIBIjAN", 5)
                ),
                format!(
                    "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----",
                    rep("MIIDdzCC", 5)
                ),
                "the PRIVATE KEY header starts with five dashes".into(),
            ],
        },
        Case {
            family: SecretFamily::Bearer,
            positives: vec![
                format!("Authorization: Bearer {}", rep("abc123DEF456", 3)),
                format!("authorization: bearer {}", rep("tok.en-9_", 3)),
            ],
            negatives: vec![
                "Bearer authentication scheme".into(),
                "Bearer tokenizationstrategy".into(),
                "Bearer ${API_TOKEN}".into(),
                "Bearer 1234".into(),
            ],
        },
    ]
}

#[test]
fn every_family_redacts_its_positives_and_spares_its_negatives() {
    let corpus = corpus();
    assert_eq!(
        corpus.len(),
        SecretFamily::ALL.len(),
        "a family has no corpus"
    );
    for case in &corpus {
        let marker = format!("[REDACTED:{}]", case.family.name());
        for secret in &case.positives {
            let line = format!("before {secret} after");
            let out = redact(&line);
            assert!(
                out.contains(&marker),
                "{:?} not redacted as {marker}: {out}",
                case.family
            );
            assert!(
                !out.contains(secret.as_str()),
                "{:?} leaked: {out}",
                case.family
            );
            assert!(out.starts_with("before "), "{out}");
            assert!(
                out.ends_with(" after") || case.family == SecretFamily::PemPrivateKey,
                "{out}"
            );
            assert!(
                find_secrets(&line).contains(&case.family),
                "{:?}: {line}",
                case.family
            );
        }
        for innocent in &case.negatives {
            let line = format!("before {innocent} after");
            assert_eq!(redact(&line), line, "{:?} false positive", case.family);
            assert!(
                find_secrets(&line).is_empty(),
                "{:?} false positive: {line}",
                case.family
            );
        }
    }
}

#[test]
fn bearer_keeps_the_scheme_and_keys_inside_bearer_are_named_by_family() {
    let token = rep("abc123DEF456", 3);
    assert_eq!(
        redact(&format!("Bearer {token}")),
        "Bearer [REDACTED:bearer_token]"
    );
    let key = format!("sk-ant-api03-{}", rep("Qw9", 10));
    assert_eq!(
        redact(&format!("Bearer {key}")),
        "Bearer [REDACTED:anthropic_key]"
    );
}

#[test]
fn clean_text_is_borrowed_and_non_ascii_is_left_alone() {
    let text = "Привет sk-мир ghp_日本語 AKIA漢字 — nothing secret here";
    assert!(matches!(redact(text), std::borrow::Cow::Borrowed(_)));
    // ASCII-only classes: a non-ASCII letter ends a token instead of extending it.
    let key = format!("sk-{}", rep("A1", 12));
    assert_eq!(
        redact(&format!("ключ={key}é")),
        "ключ=[REDACTED:openai_key]é"
    );
}

#[test]
fn truncated_private_key_inside_json_is_redacted_up_to_the_cut() {
    let text = format!(
        "{{\"path\":\"id_rsa\",\"content\":\"-----BEGIN RSA PRIVATE KEY-----\n{}\"}}",
        rep("MIIEowIBAAKCAQEA", 4)
    );
    // The line break inside the cut block stays, so line numbers stay right.
    assert_eq!(
        redact(&text),
        "{\"path\":\"id_rsa\",\"content\":\"[REDACTED:private_key]\n\"}"
    );
}

#[test]
fn several_secrets_in_one_text() {
    let text = format!(
        "OPENAI=sk-{} GH=ghp_{} AWS=AKIA{}",
        rep("Z1", 12),
        rep("y2", 18),
        rep("Q7", 8)
    );
    assert_eq!(
        redact(&text),
        "OPENAI=[REDACTED:openai_key] GH=[REDACTED:github_token] AWS=[REDACTED:aws_access_key]"
    );
}
