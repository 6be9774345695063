//! The built-in protected list and how a path is read against it on every file system.

use std::borrow::Cow;

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
