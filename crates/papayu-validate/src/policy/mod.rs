//! The project policy (SPEC §4): limits, protected globs, the extension allow-list.
//! Touches only values: a project may tune it in `.papa-yu/policy.json`, which the caller reads.

mod defaults;
mod protected;

use std::collections::BTreeSet;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use crate::path::RelPath;

pub use defaults::{
    DEFAULT_EXTENSIONS, DEFAULT_FORBIDDEN_DIRS, DEFAULT_MAX_ACTIONS, DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_TOTAL_BYTES, DEFAULT_NAMES,
};
pub use protected::BUILTIN_PROTECTED;
pub(crate) use protected::{builtin_protected, is_hfs_ignorable};

/// Why a policy could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The policy file is not valid JSON or has an unknown field or a wrong type.
    #[error("invalid policy JSON at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde's message (names an unknown field and lists the known ones).
        message: String,
    },
    /// A protected glob does not compile.
    #[error("invalid protected glob `{glob}`: {message}")]
    InvalidGlob {
        /// The glob as written.
        glob: String,
        /// globset's message.
        message: String,
    },
    /// An extension or name entry is empty or holds a `/`, `\` or whitespace.
    #[error("invalid entry `{entry}` in `{field}`: {reason}")]
    InvalidEntry {
        /// The policy field.
        field: &'static str,
        /// The entry as written.
        entry: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A limit is zero.
    #[error("`{field}` must be greater than zero")]
    ZeroLimit {
        /// The policy field.
        field: &'static str,
    },
    /// A limit is above the ceiling papayu-protocol enforces on every answer
    /// ([`papayu_protocol::MAX_ACTIONS`], [`papayu_protocol::MAX_ANSWER_BYTES`]): a plan that
    /// large could never reach the policy check.
    #[error("`{field}` is {value}; the most papayu reads in one answer is {max}")]
    LimitTooHigh {
        /// The policy field.
        field: &'static str,
        /// The value given.
        value: u64,
        /// The ceiling.
        max: u64,
    },
}

/// The JSON shape of `.papa-yu/policy.json`. Every field is optional; unknown fields are an
/// error so a typo does not silently leave the default in place.
///
/// ```json
/// { "max_actions": 50, "add_extensions": ["proto"], "remove_extensions": ["sh"],
///   "protected_globs": ["deploy/prod/**"], "reject_placeholders": true }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// Most actions in one plan (default 200).
    pub max_actions: usize,
    /// Most payload bytes in one plan (default 5 MiB).
    pub max_total_bytes: u64,
    /// Most payload bytes in one action (default 1 MiB).
    pub max_file_bytes: u64,
    /// Extra protected globs (`*` stays within a segment, `**` crosses them; matched
    /// case-insensitively), in addition to [`BUILTIN_PROTECTED`].
    pub protected_globs: Vec<String>,
    /// Replaces [`DEFAULT_EXTENSIONS`] entirely when present.
    pub extensions: Option<Vec<String>>,
    /// Extensions added to the list (with or without the leading dot).
    pub add_extensions: Vec<String>,
    /// Extensions removed from the list.
    pub remove_extensions: Vec<String>,
    /// Extension-less file names added to [`DEFAULT_NAMES`].
    pub add_names: Vec<String>,
    /// File names removed from the known-name list.
    pub remove_names: Vec<String>,
    /// Directories added to [`DEFAULT_FORBIDDEN_DIRS`].
    pub add_forbidden_dirs: Vec<String>,
    /// Directories removed from the forbidden list (e.g. a Rust module called `target`).
    pub remove_forbidden_dirs: Vec<String>,
    /// Reject full-content actions holding lazy-elision placeholder lines (default true).
    pub reject_placeholders: bool,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        Self {
            max_actions: DEFAULT_MAX_ACTIONS,
            max_total_bytes: DEFAULT_MAX_TOTAL_BYTES,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            protected_globs: Vec::new(),
            extensions: None,
            add_extensions: Vec::new(),
            remove_extensions: Vec::new(),
            add_names: Vec::new(),
            remove_names: Vec::new(),
            add_forbidden_dirs: Vec::new(),
            remove_forbidden_dirs: Vec::new(),
            reject_placeholders: true,
        }
    }
}

/// A compiled policy. Build it with [`Policy::default`], [`Policy::from_json`] or
/// [`Policy::new`].
#[derive(Debug, Clone)]
pub struct Policy {
    config: PolicyConfig,
    protected: GlobSet,
    extensions: BTreeSet<String>,
    names: BTreeSet<String>,
    forbidden_dirs: BTreeSet<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            config: PolicyConfig::default(),
            protected: GlobSet::empty(),
            extensions: DEFAULT_EXTENSIONS.iter().map(|e| (*e).to_owned()).collect(),
            names: DEFAULT_NAMES.iter().map(|n| n.to_lowercase()).collect(),
            forbidden_dirs: DEFAULT_FORBIDDEN_DIRS
                .iter()
                .map(|d| (*d).to_owned())
                .collect(),
        }
    }
}

fn entry(field: &'static str, raw: &str, strip_dot: bool) -> Result<String, PolicyError> {
    let trimmed = if strip_dot {
        raw.trim().trim_start_matches('.')
    } else {
        raw.trim()
    };
    let bad = |reason| PolicyError::InvalidEntry {
        field,
        entry: raw.to_owned(),
        reason,
    };
    if trimmed.is_empty() {
        return Err(bad("it is empty"));
    }
    if trimmed.contains(['/', '\\']) || trimmed.chars().any(char::is_whitespace) {
        return Err(bad("it must be a single name without separators or spaces"));
    }
    Ok(trimmed.to_lowercase())
}

fn entries(
    field: &'static str,
    list: &[String],
    strip_dot: bool,
) -> Result<Vec<String>, PolicyError> {
    list.iter().map(|e| entry(field, e, strip_dot)).collect()
}

impl Policy {
    /// Compile a policy from its configuration.
    pub fn new(config: PolicyConfig) -> Result<Self, PolicyError> {
        for (field, value) in [
            ("max_actions", config.max_actions as u64),
            ("max_total_bytes", config.max_total_bytes),
            ("max_file_bytes", config.max_file_bytes),
        ] {
            if value == 0 {
                return Err(PolicyError::ZeroLimit { field });
            }
        }
        for (field, value, max) in [
            (
                "max_actions",
                config.max_actions as u64,
                papayu_protocol::MAX_ACTIONS as u64,
            ),
            (
                "max_total_bytes",
                config.max_total_bytes,
                papayu_protocol::MAX_ANSWER_BYTES as u64,
            ),
            (
                "max_file_bytes",
                config.max_file_bytes,
                papayu_protocol::MAX_ANSWER_BYTES as u64,
            ),
        ] {
            if value > max {
                return Err(PolicyError::LimitTooHigh { field, value, max });
            }
        }
        let mut globs = GlobSetBuilder::new();
        for glob in &config.protected_globs {
            let compiled = GlobBuilder::new(glob)
                .case_insensitive(true)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| PolicyError::InvalidGlob {
                    glob: glob.clone(),
                    message: e.kind().to_string(),
                })?;
            globs.add(compiled);
        }
        let protected = globs.build().map_err(|e| PolicyError::InvalidGlob {
            glob: String::new(),
            message: e.to_string(),
        })?;

        let mut extensions: BTreeSet<String> = match &config.extensions {
            Some(list) => entries("extensions", list, true)?.into_iter().collect(),
            None => DEFAULT_EXTENSIONS.iter().map(|e| (*e).to_owned()).collect(),
        };
        extensions.extend(entries("add_extensions", &config.add_extensions, true)?);
        for e in entries("remove_extensions", &config.remove_extensions, true)? {
            extensions.remove(&e);
        }
        let mut names: BTreeSet<String> = DEFAULT_NAMES.iter().map(|n| n.to_lowercase()).collect();
        names.extend(entries("add_names", &config.add_names, false)?);
        for n in entries("remove_names", &config.remove_names, false)? {
            names.remove(&n);
        }
        let mut forbidden_dirs: BTreeSet<String> = DEFAULT_FORBIDDEN_DIRS
            .iter()
            .map(|d| (*d).to_owned())
            .collect();
        forbidden_dirs.extend(entries(
            "add_forbidden_dirs",
            &config.add_forbidden_dirs,
            false,
        )?);
        for d in entries(
            "remove_forbidden_dirs",
            &config.remove_forbidden_dirs,
            false,
        )? {
            forbidden_dirs.remove(&d);
        }
        Ok(Self {
            config,
            protected,
            extensions,
            names,
            forbidden_dirs,
        })
    }

    /// Parse and compile the JSON of `.papa-yu/policy.json`.
    ///
    /// ```
    /// use papayu_validate::{Policy, PolicyError};
    /// let p = Policy::from_json(r#"{"max_actions": 10, "add_extensions": [".proto"]}"#).unwrap();
    /// assert_eq!(p.config().max_actions, 10);
    /// assert!(matches!(Policy::from_json(r#"{"max_action": 10}"#), Err(PolicyError::Json { .. })));
    /// ```
    pub fn from_json(text: &str) -> Result<Self, PolicyError> {
        let config: PolicyConfig = serde_json::from_str(text).map_err(|e| PolicyError::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        Self::new(config)
    }

    /// The configuration this policy was built from.
    pub fn config(&self) -> &PolicyConfig {
        &self.config
    }

    /// The protected pattern `path` matches (a built-in one or a project glob), if any.
    pub fn protected_by(&self, path: &RelPath) -> Option<String> {
        let folded = path.folded();
        if let Some(pattern) = builtin_protected(&folded) {
            return Some(pattern.to_owned());
        }
        let index = self.protected.matches(&folded).into_iter().next()?;
        self.config.protected_globs.get(index).cloned()
    }

    /// Whether `path` is protected (secrets, `.git/`, `.papa-yu/`, or a project glob).
    pub fn is_protected(&self, path: &RelPath) -> bool {
        self.protected_by(path).is_some()
    }

    /// Whether the file name of `path` is allowed as a write target (known extension or known
    /// extension-less name). Compared case-insensitively.
    pub fn is_allowed_file_name(&self, path: &RelPath) -> bool {
        let name = path.file_name().to_lowercase();
        if self.names.contains(&name) {
            return true;
        }
        match path.extension() {
            Some(ext) => self.extensions.contains(&ext.to_lowercase()),
            None => false,
        }
    }

    /// The forbidden directory `path` lies under, if any.
    pub fn forbidden_dir<'p>(&self, path: &'p RelPath) -> Option<&'p str> {
        let mut segments: Vec<&str> = path.segments().collect();
        segments.pop();
        segments
            .into_iter()
            .find(|s| self.forbidden_dirs.contains(&s.to_lowercase()))
    }
}
