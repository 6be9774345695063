//! Confinement: every path the model names must stay inside the project.
//!
//! A request path first passes papayu-validate's [`RelPath::parse`] (SPEC §4 path rules), then
//! the protected-path check (secrets are never sent to a model), then it is resolved on disk
//! with every symlink followed and the result must still lie under the canonical project root.
//! A symlink inside the project pointing inside is fine; one pointing outside is refused; a
//! symlink whose *target* is protected (`notes.txt -> .env`) is refused too.
//!
//! Residual risk, stated so nobody relies on more: the check and the open are two syscalls, so
//! a local process that swaps a directory for a symlink between them could redirect the read.
//! The model cannot create symlinks (papayu-patch never writes through or creates one), so the
//! attacker would already be a local user with access to the tree.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use camino::{Utf8Path, Utf8PathBuf};
use papayu_validate::{ErrorCode, Policy, RelPath};

use crate::ContextError;

/// Why a path was not read. Rendered as a short English note inside the block.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The path breaks a SPEC §4 path rule (`..`, absolute, drive, control character, …).
    InvalidPath(String),
    /// The path (or a symlink's target) is a protected file: secrets and papayu's own state.
    Protected(String),
    /// The path resolves outside the project through a symlink.
    EscapesRoot,
    /// No such file.
    Missing,
    /// A directory or special file.
    NotAFile,
    /// Over the size limit.
    TooLarge {
        /// Actual size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The bytes are not UTF-8 text.
    NotUtf8 {
        /// Size of the file.
        bytes: u64,
    },
    /// Another I/O failure (permission denied, …).
    Io(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::InvalidPath(m) => write!(f, "refused: invalid path ({m})"),
            Refusal::Protected(p) => {
                write!(
                    f,
                    "refused: `{p}` is a protected file (secrets and papayu state are never sent)"
                )
            }
            Refusal::EscapesRoot => {
                f.write_str("refused: the path leaves the project through a symlink")
            }
            Refusal::Missing => f.write_str("missing: no such file in the project"),
            Refusal::NotAFile => f.write_str("refused: not a regular file"),
            Refusal::TooLarge { bytes, limit } => {
                write!(
                    f,
                    "not sent: the file is {bytes} bytes, over the {limit}-byte limit"
                )
            }
            Refusal::NotUtf8 { bytes } => {
                write!(f, "not sent: the file is not UTF-8 text ({bytes} bytes)")
            }
            Refusal::Io(m) => write!(f, "not read: {m}"),
        }
    }
}

/// Whether a directory entry met during a walk is protected, by papayu-validate's policy
/// (SPEC §4 built-ins plus the project's globs), so its content never reaches a model. A
/// protected directory (`.git`, `secrets`) is pruned whole.
pub(crate) fn is_protected_entry(policy: &Policy, root: &Path, entry: &ignore::DirEntry) -> bool {
    if entry.depth() == 0 {
        return false;
    }
    let Ok(rel) = entry.path().strip_prefix(root) else {
        return false;
    };
    let Some(rel) = rel.to_str() else {
        return false;
    };
    match RelPath::parse(rel) {
        Ok(rel) => policy.is_protected(&rel),
        // A name that is a protected one in macOS's or Windows' reading (`.g\u{200c}it`).
        Err(e) => e.code == ErrorCode::ProtectedPath,
    }
}

/// The first bytes of a `CACHEDIR.TAG` file by the Cache Directory Tagging Specification
/// (<https://bford.info/cachedir/>): cargo's `target/`, pytest's, mypy's and ruff's caches carry
/// one.
const CACHEDIR_SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";

/// Whether a directory entry met during a walk is a build or tool cache: a directory tagged by
/// a `CACHEDIR.TAG` (the Cache Directory Tagging Specification) or Python's `__pycache__`. Its
/// files are generated — build output, bytecode — so the map, the search and the goal's file
/// pointers skip it whole: cargo's `target/` alone lists hundreds of hashed names that say
/// nothing about the code and cost a small model thousands of prompt tokens (issue #16).
pub(crate) fn is_cache_dir(entry: &ignore::DirEntry) -> bool {
    if entry.depth() == 0 || !entry.file_type().is_some_and(|t| t.is_dir()) {
        return false;
    }
    if entry.file_name() == "__pycache__" {
        return true;
    }
    let mut head = [0_u8; CACHEDIR_SIGNATURE.len()];
    fs_err::File::open(entry.path().join("CACHEDIR.TAG"))
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| head == CACHEDIR_SIGNATURE)
}

/// Whether a path lies in a third-party directory that stack-trace gathering skips.
pub(crate) fn is_vendored(path: &str) -> bool {
    path.split('/').any(|s| {
        matches!(
            s,
            "node_modules"
                | "site-packages"
                | "dist-packages"
                | ".venv"
                | "venv"
                | ".tox"
                | "vendor"
        )
    })
}

/// A project root, canonicalised once.
#[derive(Debug, Clone)]
pub(crate) struct Root {
    given: Utf8PathBuf,
    canonical: Utf8PathBuf,
    policy: Policy,
}

/// A request path that passed every check: its normalised form and the file to open.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub rel: RelPath,
    pub abs: PathBuf,
    pub len: u64,
}

impl Root {
    pub fn open(root: &Utf8Path, policy: Policy) -> Result<Self, ContextError> {
        let canonical =
            fs_err::canonicalize(root.as_std_path()).map_err(|source| ContextError::Root {
                path: root.to_owned(),
                source,
            })?;
        let canonical =
            Utf8PathBuf::from_path_buf(canonical).map_err(|_| ContextError::RootNotUtf8 {
                path: root.to_owned(),
            })?;
        if !canonical.is_dir() {
            return Err(ContextError::RootNotDirectory {
                path: root.to_owned(),
            });
        }
        Ok(Self {
            given: root.to_owned(),
            canonical,
            policy,
        })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn canonical(&self) -> &Utf8Path {
        &self.canonical
    }

    /// Validate and resolve `raw` (a path string from the model).
    pub fn resolve(&self, raw: &str) -> Result<Resolved, Refusal> {
        let rel = RelPath::parse(raw).map_err(|e| match e.code {
            ErrorCode::ProtectedPath => Refusal::Protected(display_raw(raw)),
            _ => Refusal::InvalidPath(e.message),
        })?;
        self.resolve_rel(rel)
    }

    /// Resolve an already validated path.
    pub fn resolve_rel(&self, rel: RelPath) -> Result<Resolved, Refusal> {
        if self.policy.is_protected(&rel) {
            return Err(Refusal::Protected(rel.as_str().to_owned()));
        }
        let joined = self.canonical.as_std_path().join(rel.as_str());
        let real = match fs_err::canonicalize(&joined) {
            Ok(p) => p,
            Err(e) => return Err(io_refusal(&e)),
        };
        let inside = real
            .strip_prefix(self.canonical.as_std_path())
            .map_err(|_| Refusal::EscapesRoot)?;
        if inside.as_os_str() != Path::new(rel.as_str()).as_os_str() {
            // Reached through a symlink: the target itself must pass the same rules.
            let target = inside
                .to_str()
                .map(|s| s.replace('\\', "/"))
                .ok_or(Refusal::EscapesRoot)?;
            let target_rel = RelPath::parse(&target).map_err(|_| Refusal::EscapesRoot)?;
            if self.policy.is_protected(&target_rel) {
                return Err(Refusal::Protected(target_rel.as_str().to_owned()));
            }
        }
        let meta = fs_err::metadata(&real).map_err(|e| io_refusal(&e))?;
        if !meta.is_file() {
            return Err(Refusal::NotAFile);
        }
        Ok(Resolved {
            rel,
            abs: real,
            len: meta.len(),
        })
    }

    /// Map a path seen in a stack trace to a project-relative path, if it lies inside the root.
    pub fn relativize(&self, raw: &str) -> Option<String> {
        let unified = raw
            .strip_prefix("file://")
            .unwrap_or(raw)
            .replace('\\', "/");
        let is_abs = unified.starts_with('/') || unified.as_bytes().get(1) == Some(&b':');
        if !is_abs {
            return Some(unified.strip_prefix("./").unwrap_or(&unified).to_owned());
        }
        for root in [self.given.as_str(), self.canonical.as_str()] {
            let root = root.replace('\\', "/");
            let root = root.trim_end_matches('/');
            if root.is_empty() {
                continue;
            }
            if let Some(rest) = strip_prefix_ci_drive(&unified, root)
                && let Some(rest) = rest.strip_prefix('/')
            {
                return Some(rest.to_owned());
            }
        }
        None
    }
}

fn strip_prefix_ci_drive<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    if let Some(rest) = s.strip_prefix(prefix) {
        return Some(rest);
    }
    // Windows paths compare case-insensitively.
    if prefix.as_bytes().get(1) == Some(&b':')
        && s.len() >= prefix.len()
        && s.is_char_boundary(prefix.len())
    {
        let (head, rest) = s.split_at(prefix.len());
        if head.eq_ignore_ascii_case(prefix) {
            return Some(rest);
        }
    }
    None
}

fn io_refusal(e: &io::Error) -> Refusal {
    match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => Refusal::Missing,
        io::ErrorKind::PermissionDenied => Refusal::Io("permission denied".to_owned()),
        _ => Refusal::Io(e.kind().to_string()),
    }
}

/// Make a model-supplied string safe to echo inside a block header: no control characters, at
/// most 240 characters.
pub(crate) fn display_raw(raw: &str) -> String {
    let mut out = String::new();
    for c in raw.chars().take(240) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if raw.chars().count() > 240 {
        out.push('…');
    }
    out
}
