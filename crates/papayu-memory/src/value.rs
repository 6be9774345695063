//! Validation of one memory value against its whitelisted kind: shared by file loading,
//! `memory_patch` and `papayu memory set`, so all three accept exactly the same values.

use std::fmt;

use papayu_protocol::{MEMORY_PATCH_KEYS, MemoryValueKind};
use serde::Serialize;
use serde_json::Value;

/// Longest accepted string value, in characters (keeps the memory block near 1–2 KB).
pub const MAX_STRING_CHARS: usize = 300;
/// Most items accepted in a list value (`src_roots`, `test_roots`) or in `log_files`.
pub const MAX_LIST_ITEMS: usize = 20;

/// Why a memory value (or key) was refused. Serialised with a `reason` tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RejectReason {
    /// The key is not in the whitelist.
    UnknownKey,
    /// The JSON type is wrong (e.g. a string for an integer key).
    WrongType {
        /// What the key accepts, e.g. `integer`.
        expected: String,
        /// What was given, e.g. `string`.
        found: String,
    },
    /// A string outside the key's fixed set of values.
    NotOneOf {
        /// The accepted values.
        allowed: Vec<String>,
        /// The value given.
        got: String,
    },
    /// An integer outside the key's range.
    OutOfRange {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
        /// The value given, as written.
        got: String,
    },
    /// The type is right but the value is not acceptable (empty, too long, not a relative
    /// path, ...).
    Invalid {
        /// What is wrong with it.
        detail: String,
    },
    /// A valid `memory_patch` entry that was not applied because the user did not ask papayu
    /// to remember anything and autopatch is off.
    NotRequested,
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RejectReason::UnknownKey => f.write_str("not a whitelisted memory key"),
            RejectReason::WrongType { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            RejectReason::NotOneOf { allowed, got } => {
                write!(f, "`{got}` is not one of {}", allowed.join("|"))
            }
            RejectReason::OutOfRange { min, max, got } => {
                write!(f, "{got} is out of range {min}..={max}")
            }
            RejectReason::Invalid { detail } => f.write_str(detail),
            RejectReason::NotRequested => f.write_str(
                "not applied: the user did not ask to remember anything and autopatch is off",
            ),
        }
    }
}

/// A value that passed validation, in its storage shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Typed {
    Str(String),
    Int(i64),
    List(Vec<String>),
}

/// The kind of a whitelisted dotted key (`user.ask_budget`), from papayu-protocol's list.
pub(crate) fn kind_of(key: &str) -> Option<MemoryValueKind> {
    MEMORY_PATCH_KEYS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, kind)| *kind)
}

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "non-integer number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn wrong_type(expected: &str, value: &Value) -> RejectReason {
    RejectReason::WrongType {
        expected: expected.to_owned(),
        found: json_type(value).to_owned(),
    }
}

fn invalid(detail: impl Into<String>) -> RejectReason {
    RejectReason::Invalid {
        detail: detail.into(),
    }
}

/// Whether list items of this key are project-relative paths.
fn is_path_list(key: &str) -> bool {
    matches!(key, "project.src_roots" | "project.test_roots")
}

/// Validate `value` for the whitelisted dotted `key` of the given kind.
pub(crate) fn validate(
    key: &str,
    kind: MemoryValueKind,
    value: &Value,
) -> Result<Typed, RejectReason> {
    match kind {
        MemoryValueKind::String => {
            let s = value.as_str().ok_or_else(|| wrong_type("string", value))?;
            check_text(s)?;
            Ok(Typed::Str(s.to_owned()))
        }
        MemoryValueKind::Enum(allowed) => {
            let s = value.as_str().ok_or_else(|| wrong_type("string", value))?;
            if allowed.contains(&s) {
                Ok(Typed::Str(s.to_owned()))
            } else {
                Err(RejectReason::NotOneOf {
                    allowed: allowed.iter().map(|a| (*a).to_owned()).collect(),
                    got: s.to_owned(),
                })
            }
        }
        MemoryValueKind::Integer { min, max } => {
            let Value::Number(n) = value else {
                return Err(wrong_type("integer", value));
            };
            let out_of_range = || RejectReason::OutOfRange {
                min,
                max,
                got: n.to_string(),
            };
            match n.as_i64() {
                Some(i) if (min..=max).contains(&i) => Ok(Typed::Int(i)),
                Some(_) => Err(out_of_range()),
                None if n.is_u64() => Err(out_of_range()),
                None => Err(wrong_type("integer", value)),
            }
        }
        MemoryValueKind::StringList => {
            let items = value
                .as_array()
                .ok_or_else(|| wrong_type("array of strings", value))?;
            if items.is_empty() {
                return Err(invalid("the list is empty (unset the key instead)"));
            }
            if items.len() > MAX_LIST_ITEMS {
                return Err(invalid(format!(
                    "{} items, at most {MAX_LIST_ITEMS} allowed",
                    items.len()
                )));
            }
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let s = item.as_str().ok_or_else(|| RejectReason::WrongType {
                    expected: "array of strings".to_owned(),
                    found: format!("{} at index {i}", json_type(item)),
                })?;
                check_text(s).map_err(|r| invalid(format!("item {i}: {r}")))?;
                if is_path_list(key) {
                    check_rel_path(s).map_err(|r| invalid(format!("item {i}: {r}")))?;
                }
                out.push(s.to_owned());
            }
            Ok(Typed::List(out))
        }
    }
}

/// A string value: not blank, at most [`MAX_STRING_CHARS`], no control characters other than
/// newline and tab.
pub(crate) fn check_text(s: &str) -> Result<(), RejectReason> {
    if s.trim().is_empty() {
        return Err(invalid("the string is empty (unset the key instead)"));
    }
    let chars = s.chars().count();
    if chars > MAX_STRING_CHARS {
        return Err(invalid(format!(
            "{chars} characters, at most {MAX_STRING_CHARS} allowed"
        )));
    }
    if s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(invalid("contains control characters"));
    }
    Ok(())
}

/// A project-relative path: not absolute, no drive letter, no `..` component.
pub(crate) fn check_rel_path(s: &str) -> Result<(), RejectReason> {
    let bytes = s.as_bytes();
    let absolute = s.starts_with('/')
        || s.starts_with('\\')
        || (bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':');
    if absolute {
        return Err(invalid(format!(
            "`{s}` is not a path relative to the project root"
        )));
    }
    if s.split(['/', '\\']).any(|part| part == "..") {
        return Err(invalid(format!("`{s}` leaves the project root (`..`)")));
    }
    Ok(())
}

/// Parse a command-line string (`papayu memory set KEY VALUE`) into the JSON value the key's
/// kind expects: integers from digits, lists from a JSON array or a comma-separated list,
/// everything else verbatim. Validation proper happens afterwards in [`validate`].
pub(crate) fn parse_cli(kind: MemoryValueKind, raw: &str) -> Result<Value, RejectReason> {
    match kind {
        MemoryValueKind::String | MemoryValueKind::Enum(_) => Ok(Value::String(raw.to_owned())),
        MemoryValueKind::Integer { min, max } => {
            let digits = raw.strip_prefix('-').unwrap_or(raw);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(RejectReason::WrongType {
                    expected: "integer".to_owned(),
                    found: format!("`{raw}`"),
                });
            }
            match raw.parse::<i64>() {
                Ok(i) => Ok(Value::from(i)),
                Err(_) => Err(RejectReason::OutOfRange {
                    min,
                    max,
                    got: raw.to_owned(),
                }),
            }
        }
        MemoryValueKind::StringList => {
            if raw.trim_start().starts_with('[') {
                serde_json::from_str::<Value>(raw)
                    .map_err(|e| invalid(format!("not a JSON array of strings: {e}")))
            } else {
                let items: Vec<Value> = raw
                    .split(',')
                    .map(|item| Value::String(item.trim().to_owned()))
                    .collect();
                Ok(Value::Array(items))
            }
        }
    }
}
