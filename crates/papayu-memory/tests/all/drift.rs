//! The typed enums agree with papayu-protocol's whitelist, the single source of truth.

use papayu_memory::{OutputFormat, PreferredStyle, RiskTolerance};
use papayu_protocol::{MEMORY_PATCH_KEYS, MemoryValueKind};

fn protocol_enum(key: &str) -> Vec<&'static str> {
    match MEMORY_PATCH_KEYS.iter().find(|(k, _)| *k == key).unwrap().1 {
        MemoryValueKind::Enum(values) => values.to_vec(),
        other => panic!("{key} is {other:?}, not an enum"),
    }
}

#[test]
fn typed_enums_match_protocol_whitelist() {
    let style: Vec<_> = PreferredStyle::ALL.iter().map(|v| v.as_str()).collect();
    assert_eq!(style, protocol_enum("user.preferred_style"));
    let risk: Vec<_> = RiskTolerance::ALL.iter().map(|v| v.as_str()).collect();
    assert_eq!(risk, protocol_enum("user.risk_tolerance"));
    let format: Vec<_> = OutputFormat::ALL.iter().map(|v| v.as_str()).collect();
    assert_eq!(format, protocol_enum("user.output_format"));
}

#[test]
fn whitelist_has_thirteen_user_and_project_keys() {
    assert_eq!(MEMORY_PATCH_KEYS.len(), 13);
    assert!(
        MEMORY_PATCH_KEYS
            .iter()
            .all(|(k, _)| k.starts_with("user.") || k.starts_with("project."))
    );
}
