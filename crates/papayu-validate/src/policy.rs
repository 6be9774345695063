//! The project policy (SPEC §4): limits, protected globs, the extension allow-list.
//!
//! A project may tune it in `.papa-yu/policy.json`; reading that file is the caller's job.

use std::borrow::Cow;
use std::collections::BTreeSet;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use crate::path::RelPath;

/// Default limit on the number of actions in one plan.
pub const DEFAULT_MAX_ACTIONS: usize = 200;
/// Default limit on the payload (content, patch, edit texts) of a whole plan: 5 MiB.
pub const DEFAULT_MAX_TOTAL_BYTES: u64 = 5 * 1024 * 1024;
/// Default limit on the payload of one action: 1 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Extensions (lower case, without the dot) a write target may have by default.
pub const DEFAULT_EXTENSIONS: &[&str] = &[
    // systems and general purpose
    "rs",
    "c",
    "h",
    "cc",
    "cpp",
    "cxx",
    "hpp",
    "hh",
    "hxx",
    "m",
    "mm",
    "go",
    "zig",
    "nim",
    "d",
    "v",
    "swift",
    "java",
    "kt",
    "kts",
    "scala",
    "sc",
    "groovy",
    "gradle",
    "clj",
    "cljs",
    "cljc",
    "edn",
    "cs",
    "fs",
    "fsx",
    "fsi",
    "vb",
    "py",
    "pyi",
    "pyx",
    "pxd",
    "rb",
    "rake",
    "gemspec",
    "php",
    "pl",
    "pm",
    "t",
    "lua",
    "r",
    "jl",
    "dart",
    "ex",
    "exs",
    "erl",
    "hrl",
    "hs",
    "lhs",
    "ml",
    "mli",
    "elm",
    "purs",
    "sol",
    "cr",
    // web
    "js",
    "mjs",
    "cjs",
    "jsx",
    "ts",
    "mts",
    "cts",
    "tsx",
    "vue",
    "svelte",
    "astro",
    "html",
    "htm",
    "css",
    "scss",
    "sass",
    "less",
    "styl",
    "wasm",
    "wat",
    "graphql",
    "gql",
    // shell and scripts
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "psm1",
    "psd1",
    "bat",
    "cmd",
    "awk",
    "sed",
    "nu",
    // config and data
    "json",
    "jsonc",
    "json5",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "properties",
    "xml",
    "xsd",
    "xsl",
    "plist",
    "csv",
    "tsv",
    "sql",
    "prisma",
    "proto",
    "thrift",
    "avsc",
    "tf",
    "tfvars",
    "hcl",
    "nix",
    "cmake",
    "mk",
    "bazel",
    "bzl",
    "star",
    "lock",
    "mod",
    "sum",
    "editorconfig",
    "gitignore",
    "gitattributes",
    "dockerignore",
    "npmrc",
    "nvmrc",
    "babelrc",
    "eslintrc",
    "prettierrc",
    "service",
    "desktop",
    "pbxproj",
    "xcconfig",
    "sln",
    "csproj",
    "fsproj",
    "vbproj",
    "props",
    "targets",
    "cabal",
    // docs and templates
    "md",
    "markdown",
    "mdx",
    "rst",
    "txt",
    "adoc",
    "asciidoc",
    "org",
    "tex",
    "bib",
    "typ",
    "rtf",
    "svg",
    "j2",
    "jinja",
    "jinja2",
    "hbs",
    "handlebars",
    "mustache",
    "ejs",
    "erb",
    "tmpl",
    "tpl",
    "liquid",
    "pug",
    "snap",
    "diff",
    "patch",
    "http",
    "po",
    "pot",
    "ftl",
];

/// Extension-less (or dot-) file names a write target may have by default, compared
/// case-insensitively.
pub const DEFAULT_NAMES: &[&str] = &[
    "README",
    "LICENSE",
    "LICENCE",
    "LICENSE-MIT",
    "LICENSE-APACHE",
    "COPYING",
    "NOTICE",
    "AUTHORS",
    "CONTRIBUTORS",
    "CHANGELOG",
    "CHANGES",
    "CODEOWNERS",
    "OWNERS",
    "VERSION",
    "Makefile",
    "GNUmakefile",
    "Dockerfile",
    "Containerfile",
    "Justfile",
    "Procfile",
    "Gemfile",
    "Rakefile",
    "Podfile",
    "Brewfile",
    "Pipfile",
    "Vagrantfile",
    "Jenkinsfile",
    "Caddyfile",
    "Tiltfile",
    "BUILD",
    "WORKSPACE",
    ".gitignore",
    ".gitattributes",
    ".gitkeep",
    ".editorconfig",
    ".dockerignore",
    ".npmrc",
    ".nvmrc",
    ".node-version",
    ".python-version",
    ".ruby-version",
    ".tool-versions",
    ".prettierrc",
    ".prettierignore",
    ".eslintrc",
    ".eslintignore",
    ".babelrc",
    ".browserslistrc",
    ".stylelintrc",
    ".clang-format",
    ".clang-tidy",
    ".rustfmt.toml",
    ".env.example",
];

/// Directories under which no write target may lie (any depth), compared case-insensitively.
pub const DEFAULT_FORBIDDEN_DIRS: &[&str] = &["node_modules", "target", "__pycache__", ".venv"];

/// The protected patterns every policy enforces (SPEC §4), as documentation and for messages; a
/// policy file can add globs, never remove these. They are matched case-insensitively in every
/// directory (a nested `.git` of a submodule is as sensitive as the root one), and also under
/// the names other file systems give the same entry: HFS+ ignores some invisible code points
/// (`.g\u{200c}it` is `.git` on macOS), NTFS drops trailing dots and spaces and reads `:` as
/// a stream separator, and Windows answers to 8.3 short names (`GIT~1` is `.git`).
pub const BUILTIN_PROTECTED: &[&str] = &[
    ".env",
    ".env.* (except .env.example)",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.pkcs12",
    "*.p8",
    "*.ppk",
    "*.kdbx",
    "*.keystore",
    "*.jks",
    "*.keychain",
    "*.keychain-db",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".envrc",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".pgpass",
    ".my.cnf",
    ".htpasswd",
    ".htdigest",
    ".dockercfg",
    ".s3cfg",
    ".boto",
    ".vault-token",
    ".terraformrc",
    "credentials.tfrc.json",
    "credentials.json",
    "application_default_credentials.json",
    ".aws/credentials",
    ".docker/config.json",
    ".kube/config",
    ".cargo/credentials*",
    ".gem/credentials",
    ".config/gcloud/**",
    "**/secrets/**",
    ".ssh/**",
    ".gnupg/**",
    ".git/**",
    ".papa-yu/**",
    "8.3 short names (GIT~1, PAPA-Y~1, …)",
];

/// Directories protected whole, wherever they are.
const PROTECTED_DIRS: &[(&str, &str)] = &[
    (".git", ".git/**"),
    (".papa-yu", ".papa-yu/**"),
    ("secrets", "**/secrets/**"),
    (".ssh", ".ssh/**"),
    (".gnupg", ".gnupg/**"),
];

/// Extensions of key stores and private keys.
const PROTECTED_EXTENSIONS: &[(&str, &str)] = &[
    ("pem", "*.pem"),
    ("key", "*.key"),
    ("p12", "*.p12"),
    ("pfx", "*.pfx"),
    ("pkcs12", "*.pkcs12"),
    ("p8", "*.p8"),
    ("ppk", "*.ppk"),
    ("kdbx", "*.kdbx"),
    ("keystore", "*.keystore"),
    ("jks", "*.jks"),
    ("keychain", "*.keychain"),
    ("keychain-db", "*.keychain-db"),
];

/// `(directory, name prefix)`: a file directly in that directory whose name starts so.
const PROTECTED_FILES_IN: &[(&str, &str, &str)] = &[
    (".aws", "credentials", ".aws/credentials"),
    (".docker", "config.json", ".docker/config.json"),
    (".kube", "config", ".kube/config"),
    (".cargo", "credentials", ".cargo/credentials*"),
    (".gem", "credentials", ".gem/credentials"),
];

const SHORT_NAME: &str = "8.3 short names (GIT~1, PAPA-Y~1, …)";

/// The built-in rules, written out rather than as globs so they cannot fail to compile.
/// `folded` is a lower-cased, `/`-separated path; each segment is first read the way HFS+
/// and NTFS would read it ([`as_other_file_systems_read`]).
pub(crate) fn builtin_protected(folded: &str) -> Option<&'static str> {
    let segments: Vec<Cow<'_, str>> = folded.split('/').map(as_other_file_systems_read).collect();
    for (i, segment) in segments.iter().enumerate() {
        let segment = segment.as_ref();
        if let Some((_, pattern)) = PROTECTED_DIRS.iter().find(|(d, _)| *d == segment) {
            return Some(pattern);
        }
        if is_short_name(segment) {
            return Some(SHORT_NAME);
        }
        let parent = i.checked_sub(1).map(|p| segments[p].as_ref());
        if parent == Some(".config") && segment == "gcloud" {
            return Some(".config/gcloud/**");
        }
        if i + 1 < segments.len() {
            continue;
        }
        if let Some(pattern) = protected_file_name(segment, parent) {
            return Some(pattern);
        }
    }
    None
}

fn protected_file_name(name: &str, parent: Option<&str>) -> Option<&'static str> {
    // The plain names of the list (`.npmrc`, `credentials.json`, …) are matched as they are.
    if let Some(n) = BUILTIN_PROTECTED
        .iter()
        .find(|p| !p.contains(['*', '/', ' ']) && **p == name)
    {
        return Some(n);
    }
    if name.starts_with(".env.") && name != ".env.example" {
        return Some(".env.*");
    }
    if let Some((_, pattern)) = PROTECTED_EXTENSIONS.iter().find(|(ext, _)| {
        name.strip_suffix(ext)
            .is_some_and(|stem| stem.ends_with('.'))
    }) {
        return Some(pattern);
    }
    for prefix in ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"] {
        if name.starts_with(prefix) {
            return Some(match prefix {
                "id_rsa" => "id_rsa*",
                "id_dsa" => "id_dsa*",
                "id_ecdsa" => "id_ecdsa*",
                _ => "id_ed25519*",
            });
        }
    }
    PROTECTED_FILES_IN
        .iter()
        .find(|(dir, prefix, _)| parent == Some(*dir) && name.starts_with(prefix))
        .map(|(_, _, pattern)| *pattern)
}

/// Code points HFS+ ignores in names, the set git's `is_hfs_dotgit` strips: zero-width
/// non-joiner to right-to-left mark, the bidi embeddings and overrides, the deprecated format
/// characters and the BOM.
pub(crate) fn is_hfs_ignorable(c: char) -> bool {
    matches!(c, '\u{200C}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{206A}'..='\u{206F}' | '\u{FEFF}')
}

/// A segment as macOS and Windows would resolve it: HFS+-ignorable code points removed, an
/// NTFS stream suffix (`:…`) cut, trailing dots and spaces dropped (git's `is_ntfs_dotgit`
/// reads `.git . .` and `.git::$INDEX_ALLOCATION` as `.git` for the same reason).
fn as_other_file_systems_read(segment: &str) -> Cow<'_, str> {
    let needs =
        segment.chars().any(|c| is_hfs_ignorable(c) || c == ':') || segment.ends_with(['.', ' ']);
    if !needs {
        return Cow::Borrowed(segment);
    }
    let mut read: String = segment.chars().filter(|c| !is_hfs_ignorable(*c)).collect();
    if let Some(colon) = read.find(':') {
        read.truncate(colon);
    }
    let kept = read.trim_end_matches(['.', ' ']).len();
    if kept > 0 {
        read.truncate(kept);
    }
    Cow::Owned(read)
}

/// A Windows 8.3 short name such as `git~1`, `papa-y~1` or `gi7eba~1.txt`: up to eight
/// characters ending in `~` and digits, and at most a three-character extension. Windows opens
/// the long-named entry it stands for (`.git`, `.papa-yu`, `.env.local`, …), and which one
/// cannot be known from the name alone, so every such name is refused.
fn is_short_name(segment: &str) -> bool {
    let (base, ext) = match segment.split_once('.') {
        Some((b, e)) => (b, Some(e)),
        None => (segment, None),
    };
    let Some((stem, digits)) = base.rsplit_once('~') else {
        return false;
    };
    !stem.is_empty()
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && base.chars().count() <= 8
        && ext.is_none_or(|e| e.chars().count() <= 3 && !e.contains(['.', '~']))
}

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
