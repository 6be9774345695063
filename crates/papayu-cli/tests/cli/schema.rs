use papayu_protocol::{ProtocolVersion, schema_hash, sha256_hex};

use crate::{papayu, repo_root};

#[test]
fn prints_the_shipped_schema_bytes() {
    for (flag, version) in [
        ("1", ProtocolVersion::V1),
        ("2", ProtocolVersion::V2),
        ("3", ProtocolVersion::V3),
    ] {
        let run = papayu(&repo_root(), &["schema", "--protocol", flag]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(sha256_hex(run.stdout.as_bytes()), schema_hash(version));
        let file = std::fs::read(repo_root().join("schemas").join(
            papayu_protocol::schema::file_name(version, papayu_protocol::SchemaVariant::Normal),
        ))
        .unwrap();
        assert_eq!(run.stdout.as_bytes(), file.as_slice());
    }
    let strict = papayu(&repo_root(), &["schema", "--protocol", "3", "--strict"]);
    let value: serde_json::Value = serde_json::from_str(&strict.stdout).unwrap();
    assert_eq!(value["additionalProperties"], false);
}

#[test]
fn environment_selects_the_default_protocol() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_papayu"))
        .args(["schema"])
        .env("PAPAYU_PROTOCOL_VERSION", "3")
        .output()
        .unwrap();
    assert_eq!(sha256_hex(&out.stdout), schema_hash(ProtocolVersion::V3));
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_papayu"))
        .args(["schema"])
        .env("PAPAYU_PROTOCOL_VERSION", "7")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("PAPAYU_PROTOCOL_VERSION"));
}

#[test]
fn bad_protocol_flag_is_a_usage_error() {
    let run = papayu(&repo_root(), &["schema", "--protocol", "4"]);
    assert_eq!(run.code, 2);
}
