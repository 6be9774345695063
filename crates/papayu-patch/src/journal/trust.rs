//! Which journals papayu may act on: only those written with this user's [`JournalKey`], an
//! HMAC-SHA256 key kept outside every project. A journal that came with a repository, an
//! archive or another user cannot carry a valid MAC, so recovery and undo never replay it.
//! It touches only the key file it is given.

use std::io::Write;
use std::os::unix::fs::DirBuilderExt;

use fs_err::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What the MAC covers besides the manifest: a version tag, so a MAC can never be taken for
/// one over other data.
const DOMAIN: &[u8] = b"papayu journal manifest v2\n";

/// The per-user key that proves a journal was written by this user's papayu (see
/// [`use_journal_key_file`]).
#[derive(Clone)]
pub struct JournalKey([u8; 32]);

impl std::fmt::Debug for JournalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JournalKey(..)")
    }
}

/// Why a [`JournalKey`] could not be loaded or created.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// Reading, creating or writing the key file failed.
    #[error("journal key `{}`: {source}", path.display())]
    Io {
        /// The key file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The key file does not hold 64 hexadecimal digits.
    #[error("journal key `{}` is not 64 hexadecimal digits", path.display())]
    Malformed {
        /// The key file.
        path: PathBuf,
    },
    /// The operating system gave no random bytes.
    #[error("no random bytes for a journal key: {0}")]
    Random(String),
}

impl JournalKey {
    /// The key in `path`, created (32 random bytes, hex, mode 0600, in a directory created
    /// 0700) when the file does not exist yet. Two processes creating it at once end up with
    /// the same key: the file appears by a hard link, which fails when the name exists.
    ///
    /// # Errors
    ///
    /// [`KeyError`] when the file cannot be read or created, or does not hold a key.
    pub fn load_or_create(path: impl AsRef<Path>) -> Result<JournalKey, KeyError> {
        let path = path.as_ref();
        let io = |source| KeyError::Io {
            path: path.to_path_buf(),
            source,
        };
        match fs_err::read_to_string(path) {
            Ok(text) => return Self::parse(path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(io)?;
        }
        let key = Self::generate()?;
        // Unique per call: threads of one process may create the key at once.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = path.with_extension(format!("{}-{n}.tmp", std::process::id()));
        let written = (|| {
            let mut file = fs_err::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            file.write_all(format!("{}\n", hex::encode(key.0)).as_bytes())?;
            file.sync_all()?;
            match fs_err::hard_link(&tmp, path) {
                Ok(()) => Ok(()),
                // Another process created it first: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
                Err(e) => Err(e),
            }
        })();
        let _ = fs_err::remove_file(&tmp);
        written.map_err(io)?;
        let text = fs_err::read_to_string(path).map_err(io)?;
        Self::parse(path, &text)
    }

    /// A new random key. Journals written with it can be proven only while it is kept: give
    /// it to every process that should trust them (see [`JournalKey::load_or_create`]).
    ///
    /// # Errors
    ///
    /// [`KeyError::Random`] when the operating system has no random bytes to give.
    pub fn generate() -> Result<JournalKey, KeyError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| KeyError::Random(e.to_string()))?;
        Ok(JournalKey(bytes))
    }

    /// A key from its 32 bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> JournalKey {
        JournalKey(bytes)
    }

    fn parse(path: &Path, text: &str) -> Result<JournalKey, KeyError> {
        let malformed = || KeyError::Malformed {
            path: path.to_path_buf(),
        };
        let bytes = hex::decode(text.trim()).map_err(|_| malformed())?;
        Ok(JournalKey(bytes.try_into().map_err(|_| malformed())?))
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC pads a key shorter than the hash's block with zeros: padding it here gives the
        // same MAC, through the constructor that cannot fail.
        let mut block = [0u8; 64];
        block[..32].copy_from_slice(&self.0);
        let mut mac = <Hmac<Sha256> as hmac::digest::KeyInit>::new(&block.into());
        mac.update(DOMAIN);
        mac
    }

    /// The MAC of `data` (a manifest's encoding without its own MAC), hex.
    pub(crate) fn sign(&self, data: &[u8]) -> String {
        let mut mac = self.mac();
        mac.update(data);
        hex::encode(mac.finalize().into_bytes())
    }

    /// Whether `mac_hex` is the MAC of `data` under this key (compared in constant time).
    pub(crate) fn verify(&self, data: &[u8], mac_hex: &str) -> bool {
        let Ok(tag) = hex::decode(mac_hex) else {
            return false;
        };
        let mut mac = self.mac();
        mac.update(data);
        mac.verify_slice(&tag).is_ok()
    }
}

/// The key file named by [`use_journal_key_file`].
static KEY_FILE: OnceLock<PathBuf> = OnceLock::new();
/// The key every project opened without one of its own uses, decided on first use.
static DEFAULT_KEY: OnceLock<Arc<JournalKey>> = OnceLock::new();

/// Name the file holding this user's journal key (created on first use, see
/// [`JournalKey::load_or_create`]) for every project this process opens with
/// [`crate::Project::open`] or [`crate::recover`]. The library reads no environment, so a
/// frontend calls this once, before opening any project, with a path outside every project
/// (`papayu` uses `<config dir>/papayu/journal.key`). Returns `false` when it comes too late
/// (a key is already in use, or another file was named first): one process uses one key.
///
/// Without it, a process makes a random key of its own: its journals are then trusted by that
/// process only, so a crash is rolled back by the next process only when a key file is used.
pub fn use_journal_key_file(path: impl Into<PathBuf>) -> bool {
    DEFAULT_KEY.get().is_none() && KEY_FILE.set(path.into()).is_ok()
}

/// The default key: from the named key file, else (or when that fails, said in a warning) one
/// made for this process.
pub(crate) fn default_key() -> Arc<JournalKey> {
    DEFAULT_KEY
        .get_or_init(|| {
            let loaded = KEY_FILE.get().map(JournalKey::load_or_create);
            match loaded {
                Some(Ok(key)) => Arc::new(key),
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "no journal key: this process trusts only its own journals");
                    Arc::new(process_key())
                }
                None => Arc::new(process_key()),
            }
        })
        .clone()
}

/// A key for this process only. Without random bytes it is derived from what this process
/// alone knows (its pid, the time and an address): nothing outside it has seen the key, and
/// it signs only journals this process writes.
fn process_key() -> JournalKey {
    JournalKey::generate().unwrap_or_else(|_| {
        use sha2::Digest;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let marker = 0u8;
        let seed = format!(
            "{}:{}:{:p}",
            std::process::id(),
            now.as_nanos(),
            std::ptr::addr_of!(marker)
        );
        JournalKey(Sha256::digest(seed.as_bytes()).into())
    })
}
