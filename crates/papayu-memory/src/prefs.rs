//! The two preference files: typed fields, loading with per-field errors, atomic saving.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_protocol::MEMORY_PATCH_KEYS;
use serde_json::{Map, Value};

use crate::error::MemoryError;
use crate::value::{MAX_LIST_ITEMS, RejectReason, Typed, check_rel_path, check_text, validate};

macro_rules! str_enum {
    ($(#[$doc:meta])* $name:ident { $( $(#[$vdoc:meta])* $variant:ident = $text:literal, )+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$vdoc])* $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[ $( $name::$variant, )+ ];

            /// The string stored in the file and accepted from `memory_patch`.
            pub const fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $text, )+ }
            }

            /// The value for its string form, if any.
            pub fn parse(s: &str) -> Option<Self> {
                match s { $( $text => Some($name::$variant), )+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

str_enum!(
    /// `user.preferred_style`: how verbose answers should be.
    PreferredStyle {
        /// Short and to the point.
        Brief = "brief",
        /// The usual amount of explanation.
        Normal = "normal",
        /// Detailed explanations.
        Verbose = "verbose",
    }
);

str_enum!(
    /// `user.risk_tolerance`: how bold the proposed changes may be.
    RiskTolerance {
        /// Minimal, conservative changes.
        Low = "low",
        /// The default trade-off.
        Medium = "medium",
        /// Larger changes are acceptable.
        High = "high",
    }
);

str_enum!(
    /// `user.output_format`: what the user wants first (also the mode fallback of SPEC §9).
    OutputFormat {
        /// A patch first, explanation after.
        PatchFirst = "patch_first",
        /// A plan first, then the patch.
        PlanFirst = "plan_first",
        /// Plan mode.
        Plan = "plan",
        /// Apply mode.
        Apply = "apply",
    }
);

/// The operator's preferences, `<config dir>/papayu/preferences.json`.
///
/// Every field is optional: `None` means "not set", and unset fields are neither written to the
/// file nor shown in the memory block. Values can only be set through validation
/// ([`Memory::set`](crate::Memory::set), [`Memory::apply_patch`](crate::Memory::apply_patch) or
/// loading a file), so a `UserPrefs` always holds valid values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserPrefs {
    preferred_style: Option<PreferredStyle>,
    ask_budget: Option<u8>,
    risk_tolerance: Option<RiskTolerance>,
    default_language: Option<String>,
    output_format: Option<OutputFormat>,
    unknown: Map<String, Value>,
}

/// The project's preferences, `<project>/.papa-yu/project.json` (meant to be committed).
///
/// Like [`UserPrefs`], every field is optional and always valid.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectPrefs {
    default_test_command: Option<String>,
    default_lint_command: Option<String>,
    default_format_command: Option<String>,
    package_manager: Option<String>,
    build_command: Option<String>,
    src_roots: Option<Vec<String>>,
    test_roots: Option<Vec<String>>,
    ci_notes: Option<String>,
    log_files: BTreeMap<String, String>,
    unknown: Map<String, Value>,
}

impl UserPrefs {
    /// `preferred_style`.
    pub fn preferred_style(&self) -> Option<PreferredStyle> {
        self.preferred_style
    }
    /// `ask_budget`: how many clarifying questions the model may ask (0..=2).
    pub fn ask_budget(&self) -> Option<u8> {
        self.ask_budget
    }
    /// `risk_tolerance`.
    pub fn risk_tolerance(&self) -> Option<RiskTolerance> {
        self.risk_tolerance
    }
    /// `default_language`.
    pub fn default_language(&self) -> Option<&str> {
        self.default_language.as_deref()
    }
    /// `output_format`.
    pub fn output_format(&self) -> Option<OutputFormat> {
        self.output_format
    }
    /// Fields of the file papayu does not know, kept as-is when saving (newer papayu versions
    /// may have written them). They are never shown to the model.
    pub fn unknown_fields(&self) -> &Map<String, Value> {
        &self.unknown
    }

    /// Load from `path`; a missing file gives the defaults (nothing set).
    pub fn load(path: &Utf8Path) -> Result<Self, MemoryError> {
        load_section(path)
    }

    /// Save to `path` atomically, creating its parent directories.
    pub fn save(&self, path: &Utf8Path) -> Result<(), MemoryError> {
        save_section(self, path, true)
    }
}

impl ProjectPrefs {
    /// `default_test_command`.
    pub fn default_test_command(&self) -> Option<&str> {
        self.default_test_command.as_deref()
    }
    /// `default_lint_command`.
    pub fn default_lint_command(&self) -> Option<&str> {
        self.default_lint_command.as_deref()
    }
    /// `default_format_command`.
    pub fn default_format_command(&self) -> Option<&str> {
        self.default_format_command.as_deref()
    }
    /// `package_manager`.
    pub fn package_manager(&self) -> Option<&str> {
        self.package_manager.as_deref()
    }
    /// `build_command`.
    pub fn build_command(&self) -> Option<&str> {
        self.build_command.as_deref()
    }
    /// `src_roots`: project-relative source directories.
    pub fn src_roots(&self) -> Option<&[String]> {
        self.src_roots.as_deref()
    }
    /// `test_roots`: project-relative test directories.
    pub fn test_roots(&self) -> Option<&[String]> {
        self.test_roots.as_deref()
    }
    /// `ci_notes`.
    pub fn ci_notes(&self) -> Option<&str> {
        self.ci_notes.as_deref()
    }
    /// `log_files`: log name → project-relative path (for `logs` context requests).
    pub fn log_files(&self) -> &BTreeMap<String, String> {
        &self.log_files
    }
    /// Fields of the file papayu does not know, kept as-is when saving.
    pub fn unknown_fields(&self) -> &Map<String, Value> {
        &self.unknown
    }

    /// Load from `path`; a missing file gives the defaults (nothing set).
    pub fn load(path: &Utf8Path) -> Result<Self, MemoryError> {
        load_section(path)
    }

    /// Save to `path` atomically. Creates the `.papa-yu` directory but not the project root
    /// above it, so a mistyped project root is an error rather than a new directory.
    pub fn save(&self, path: &Utf8Path) -> Result<(), MemoryError> {
        save_section(self, path, false)
    }

    pub(crate) fn set_log_file(&mut self, name: &str, value: &Value) -> Result<(), RejectReason> {
        check_log_name(name)?;
        let path = check_log_path(value)?;
        if !self.log_files.contains_key(name) && self.log_files.len() >= MAX_LIST_ITEMS {
            return Err(RejectReason::Invalid {
                detail: format!("at most {MAX_LIST_ITEMS} log files allowed"),
            });
        }
        self.log_files.insert(name.to_owned(), path);
        Ok(())
    }

    pub(crate) fn unset_log_file(&mut self, name: &str) -> bool {
        self.log_files.remove(name).is_some()
    }
}

fn check_log_name(name: &str) -> Result<(), RejectReason> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(RejectReason::Invalid {
            detail: format!(
                "log name `{name}` must be 1–64 characters of A–Z, a–z, 0–9, `-`, `_`, `.`"
            ),
        })
    }
}

fn check_log_path(value: &Value) -> Result<String, RejectReason> {
    let s = value.as_str().ok_or_else(|| RejectReason::WrongType {
        expected: "string".to_owned(),
        found: crate::value::json_type(value).to_owned(),
    })?;
    check_text(s)?;
    check_rel_path(s)?;
    Ok(s.to_owned())
}

/// One preferences file: the whitelisted keys under `PREFIX`, plus any extra fields.
pub(crate) trait Section: Default {
    /// `"user."` or `"project."`.
    const PREFIX: &'static str;
    /// Store a validated value under `field` (without prefix).
    fn assign(&mut self, field: &str, value: Typed) -> Result<(), RejectReason>;
    /// The value of `field` as JSON, if set.
    fn get(&self, field: &str) -> Option<Value>;
    /// Unset `field`; whether it was set.
    fn clear(&mut self, field: &str) -> bool;
    /// Take and validate the section's non-whitelisted known fields (`log_files`).
    fn load_special(&mut self, map: &mut Map<String, Value>) -> Result<(), (String, RejectReason)>;
    /// Write the section's non-whitelisted known fields.
    fn save_special(&self, map: &mut Map<String, Value>);
    fn unknown_mut(&mut self) -> &mut Map<String, Value>;
    fn unknown(&self) -> &Map<String, Value>;
}

/// The whitelisted field names of a section, in whitelist order, with their kinds.
pub(crate) fn section_fields<S: Section>()
-> impl Iterator<Item = (&'static str, &'static str, papayu_protocol::MemoryValueKind)> {
    MEMORY_PATCH_KEYS.iter().filter_map(|(key, kind)| {
        key.strip_prefix(S::PREFIX)
            .map(|field| (*key, field, *kind))
    })
}

fn enum_mismatch(allowed: &[&str], got: &str) -> RejectReason {
    RejectReason::NotOneOf {
        allowed: allowed.iter().map(|s| (*s).to_owned()).collect(),
        got: got.to_owned(),
    }
}

fn typed_str(value: Typed) -> Result<String, RejectReason> {
    match value {
        Typed::Str(s) => Ok(s),
        other => Err(internal_kind(&other)),
    }
}

fn internal_kind(value: &Typed) -> RejectReason {
    RejectReason::Invalid {
        detail: format!("internal: unexpected value shape {value:?}"),
    }
}

fn parse_enum<T>(
    value: Typed,
    parse: fn(&str) -> Option<T>,
    all: &[T],
    as_str: fn(T) -> &'static str,
) -> Result<T, RejectReason>
where
    T: Copy,
{
    let s = typed_str(value)?;
    parse(&s).ok_or_else(|| {
        let allowed: Vec<&str> = all.iter().map(|v| as_str(*v)).collect();
        enum_mismatch(&allowed, &s)
    })
}

impl Section for UserPrefs {
    const PREFIX: &'static str = "user.";

    fn assign(&mut self, field: &str, value: Typed) -> Result<(), RejectReason> {
        match field {
            "preferred_style" => {
                self.preferred_style = Some(parse_enum(
                    value,
                    PreferredStyle::parse,
                    PreferredStyle::ALL,
                    PreferredStyle::as_str,
                )?);
            }
            "ask_budget" => match value {
                Typed::Int(i) => {
                    self.ask_budget =
                        Some(u8::try_from(i).map_err(|_| RejectReason::OutOfRange {
                            min: 0,
                            max: i64::from(u8::MAX),
                            got: i.to_string(),
                        })?);
                }
                other => return Err(internal_kind(&other)),
            },
            "risk_tolerance" => {
                self.risk_tolerance = Some(parse_enum(
                    value,
                    RiskTolerance::parse,
                    RiskTolerance::ALL,
                    RiskTolerance::as_str,
                )?);
            }
            "default_language" => self.default_language = Some(typed_str(value)?),
            "output_format" => {
                self.output_format = Some(parse_enum(
                    value,
                    OutputFormat::parse,
                    OutputFormat::ALL,
                    OutputFormat::as_str,
                )?);
            }
            _ => return Err(RejectReason::UnknownKey),
        }
        Ok(())
    }

    fn get(&self, field: &str) -> Option<Value> {
        match field {
            "preferred_style" => self.preferred_style.map(|v| v.as_str().into()),
            "ask_budget" => self.ask_budget.map(Value::from),
            "risk_tolerance" => self.risk_tolerance.map(|v| v.as_str().into()),
            "default_language" => self.default_language.clone().map(Value::from),
            "output_format" => self.output_format.map(|v| v.as_str().into()),
            _ => None,
        }
    }

    fn clear(&mut self, field: &str) -> bool {
        match field {
            "preferred_style" => self.preferred_style.take().is_some(),
            "ask_budget" => self.ask_budget.take().is_some(),
            "risk_tolerance" => self.risk_tolerance.take().is_some(),
            "default_language" => self.default_language.take().is_some(),
            "output_format" => self.output_format.take().is_some(),
            _ => false,
        }
    }

    fn load_special(&mut self, _: &mut Map<String, Value>) -> Result<(), (String, RejectReason)> {
        Ok(())
    }

    fn save_special(&self, _: &mut Map<String, Value>) {}

    fn unknown_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.unknown
    }

    fn unknown(&self) -> &Map<String, Value> {
        &self.unknown
    }
}

impl ProjectPrefs {
    fn string_slot(&mut self, field: &str) -> Option<&mut Option<String>> {
        Some(match field {
            "default_test_command" => &mut self.default_test_command,
            "default_lint_command" => &mut self.default_lint_command,
            "default_format_command" => &mut self.default_format_command,
            "package_manager" => &mut self.package_manager,
            "build_command" => &mut self.build_command,
            "ci_notes" => &mut self.ci_notes,
            _ => return None,
        })
    }

    fn list_slot(&mut self, field: &str) -> Option<&mut Option<Vec<String>>> {
        Some(match field {
            "src_roots" => &mut self.src_roots,
            "test_roots" => &mut self.test_roots,
            _ => return None,
        })
    }
}

impl Section for ProjectPrefs {
    const PREFIX: &'static str = "project.";

    fn assign(&mut self, field: &str, value: Typed) -> Result<(), RejectReason> {
        if let Some(slot) = self.string_slot(field) {
            *slot = Some(typed_str(value)?);
        } else if let Some(slot) = self.list_slot(field) {
            match value {
                Typed::List(items) => *slot = Some(items),
                other => return Err(internal_kind(&other)),
            }
        } else {
            return Err(RejectReason::UnknownKey);
        }
        Ok(())
    }

    fn get(&self, field: &str) -> Option<Value> {
        match field {
            "default_test_command" => self.default_test_command.clone().map(Value::from),
            "default_lint_command" => self.default_lint_command.clone().map(Value::from),
            "default_format_command" => self.default_format_command.clone().map(Value::from),
            "package_manager" => self.package_manager.clone().map(Value::from),
            "build_command" => self.build_command.clone().map(Value::from),
            "src_roots" => self.src_roots.clone().map(Value::from),
            "test_roots" => self.test_roots.clone().map(Value::from),
            "ci_notes" => self.ci_notes.clone().map(Value::from),
            _ => None,
        }
    }

    fn clear(&mut self, field: &str) -> bool {
        if let Some(slot) = self.string_slot(field) {
            slot.take().is_some()
        } else if let Some(slot) = self.list_slot(field) {
            slot.take().is_some()
        } else {
            false
        }
    }

    fn load_special(&mut self, map: &mut Map<String, Value>) -> Result<(), (String, RejectReason)> {
        let Some(value) = map.shift_remove("log_files") else {
            return Ok(());
        };
        match value {
            Value::Null => Ok(()),
            Value::Object(entries) => {
                for (name, path) in &entries {
                    if path.is_null() {
                        continue;
                    }
                    self.set_log_file(name, path)
                        .map_err(|r| (format!("log_files.{name}"), r))?;
                }
                Ok(())
            }
            other => Err((
                "log_files".to_owned(),
                RejectReason::WrongType {
                    expected: "object of name → relative path".to_owned(),
                    found: crate::value::json_type(&other).to_owned(),
                },
            )),
        }
    }

    fn save_special(&self, map: &mut Map<String, Value>) {
        if !self.log_files.is_empty() {
            let entries: Map<String, Value> = self
                .log_files
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect();
            map.insert("log_files".to_owned(), Value::Object(entries));
        }
    }

    fn unknown_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.unknown
    }

    fn unknown(&self) -> &Map<String, Value> {
        &self.unknown
    }
}

/// Parse a section from the file's text; errors name `path` and the field.
pub(crate) fn parse_section<S: Section>(path: &Utf8Path, text: &str) -> Result<S, MemoryError> {
    let value: Value = serde_json::from_str(text).map_err(|e| MemoryError::Malformed {
        path: path.to_owned(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let Value::Object(mut map) = value else {
        return Err(MemoryError::NotAnObject {
            path: path.to_owned(),
        });
    };
    let invalid = |field: &str, reason| MemoryError::InvalidField {
        path: path.to_owned(),
        field: field.to_owned(),
        reason,
    };
    let mut section = S::default();
    for (key, field, kind) in section_fields::<S>() {
        let Some(raw) = map.shift_remove(field) else {
            continue;
        };
        // `null` means "not set", as in strict-mode model answers.
        if raw.is_null() {
            continue;
        }
        let typed = validate(key, kind, &raw).map_err(|r| invalid(field, r))?;
        section
            .assign(field, typed)
            .map_err(|r| invalid(field, r))?;
    }
    section
        .load_special(&mut map)
        .map_err(|(field, r)| invalid(&field, r))?;
    *section.unknown_mut() = map;
    Ok(section)
}

/// The file content of a section: whitelisted fields in whitelist order, then the special
/// fields, then unknown fields in their original order.
pub(crate) fn section_to_json<S: Section>(section: &S) -> Map<String, Value> {
    let mut map = Map::new();
    for (_, field, _) in section_fields::<S>() {
        if let Some(value) = section.get(field) {
            map.insert(field.to_owned(), value);
        }
    }
    section.save_special(&mut map);
    for (k, v) in section.unknown() {
        map.entry(k.clone()).or_insert_with(|| v.clone());
    }
    map
}

fn load_section<S: Section>(path: &Utf8Path) -> Result<S, MemoryError> {
    match fs_err::read_to_string(path) {
        Ok(text) => parse_section(path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(S::default()),
        Err(source) => Err(MemoryError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

fn save_section<S: Section>(
    section: &S,
    path: &Utf8Path,
    create_parents: bool,
) -> Result<(), MemoryError> {
    let map = section_to_json(section);
    let mut text =
        serde_json::to_string_pretty(&Value::Object(map)).map_err(|e| MemoryError::Io {
            path: path.to_owned(),
            source: std::io::Error::other(e),
        })?;
    text.push('\n');
    if !create_parents {
        // The directory of the file may be created, the one above it (the project root) not.
        if let Some(above) = path
            .parent()
            .and_then(Utf8Path::parent)
            .filter(|a| !a.as_str().is_empty())
        {
            fs_err::metadata(above).map_err(|source| MemoryError::Io {
                path: above.to_owned(),
                source,
            })?;
        }
    }
    papayu_fs::write_atomic(path, text.as_bytes()).map_err(|e| MemoryError::Io {
        path: Utf8PathBuf::from_path_buf(e.path().to_owned()).unwrap_or_else(|_| path.to_owned()),
        source: e.into_io(),
    })
}
