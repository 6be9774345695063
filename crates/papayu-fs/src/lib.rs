#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

use std::ffi::OsStr;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why an atomic write failed. Every variant names the path it was about; the old file (if
/// any) is unchanged unless the variant is [`FsError::SyncDir`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// The target has no file name (`/`, `..`).
    #[error("{path} is not a file path")]
    NotAFile {
        /// The path given.
        path: PathBuf,
    },
    /// A missing parent directory could not be created.
    #[error("cannot create directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The temporary file could not be created next to the target.
    #[error("cannot create a temporary file next to {path}: {source}")]
    CreateTemp {
        /// The target.
        path: PathBuf,
        /// The OS error (it names the temporary file).
        #[source]
        source: io::Error,
    },
    /// Writing the temporary file failed (disk full, quota).
    #[error("cannot write {path}: {source}")]
    Write {
        /// The target.
        path: PathBuf,
        /// The OS error (it names the temporary file).
        #[source]
        source: io::Error,
    },
    /// The temporary file could not be flushed to disk.
    #[error("cannot flush {path} to disk: {source}")]
    Sync {
        /// The target.
        path: PathBuf,
        /// The OS error (it names the temporary file).
        #[source]
        source: io::Error,
    },
    /// The temporary file could not be renamed over the target (a directory is in the way).
    #[error("cannot replace {path}: {source}")]
    Rename {
        /// The target.
        path: PathBuf,
        /// The OS error (it names both paths).
        #[source]
        source: io::Error,
    },
    /// The new file is in place but its directory could not be flushed to disk, so a crash may
    /// still bring the old one back.
    #[error("cannot flush directory {path} to disk: {source}")]
    SyncDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl FsError {
    /// The path the error is about: the target file, or the directory for
    /// [`FsError::CreateDir`] and [`FsError::SyncDir`].
    pub fn path(&self) -> &Path {
        match self {
            Self::NotAFile { path }
            | Self::CreateDir { path, .. }
            | Self::CreateTemp { path, .. }
            | Self::Write { path, .. }
            | Self::Sync { path, .. }
            | Self::Rename { path, .. }
            | Self::SyncDir { path, .. } => path,
        }
    }

    /// The OS error underneath, for callers whose own error type carries one.
    pub fn into_io(self) -> io::Error {
        match self {
            Self::NotAFile { path } => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a file path", path.display()),
            ),
            Self::CreateDir { source, .. }
            | Self::CreateTemp { source, .. }
            | Self::Write { source, .. }
            | Self::Sync { source, .. }
            | Self::Rename { source, .. }
            | Self::SyncDir { source, .. } => source,
        }
    }
}

/// Write `bytes` to `path` atomically and durably: a temporary file in the same directory,
/// write, fsync, rename over `path`, fsync of the directory. Missing parent directories are
/// created. On error the temporary file is removed and an existing `path` keeps its content
/// (except after [`FsError::SyncDir`], when the new content is in place but not yet durable).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("state/plan.json");
/// papayu_fs::write_atomic(&path, b"{}")?;
/// papayu_fs::write_atomic(&path, b"{\"saved\": true}")?;
/// assert_eq!(fs_err::read_to_string(&path)?, "{\"saved\": true}");
/// # Ok(())
/// # }
/// ```
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<(), FsError> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes).map_err(|source| FsError::Write {
        path: file.target.clone(),
        source,
    })?;
    file.commit()
}

/// A file being written that replaces its target only on [`AtomicFile::commit`]: the
/// streaming form of [`write_atomic`], for files too big to hold in memory.
///
/// Writes go to a temporary file next to the target. Dropping an `AtomicFile` without
/// committing removes the temporary file and leaves the target as it was.
#[derive(Debug)]
pub struct AtomicFile {
    file: fs_err::File,
    temp: PathBuf,
    target: PathBuf,
    dir: PathBuf,
    committed: bool,
}

/// Temporary files created by this process so far: with the pid, a name no other live writer
/// uses.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Longest part of the target's name that goes into the temporary name, so that the latter
/// stays within the 255 bytes most filesystems allow.
const NAME_IN_TEMP: usize = 160;

impl AtomicFile {
    /// Start writing a new version of `target`: create missing parent directories and an empty
    /// temporary file `.<name>.<pid>.<n>.tmp` beside it (created exclusively, so two writers
    /// never share one).
    pub fn create(target: impl AsRef<Path>) -> Result<Self, FsError> {
        let target = target.as_ref().to_owned();
        let Some(name) = target.file_name().map(OsStr::to_string_lossy) else {
            return Err(FsError::NotAFile { path: target });
        };
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => PathBuf::from("."),
        };
        create_parents(&dir)?;
        let mut stem: String = name.chars().take(NAME_IN_TEMP).collect();
        while stem.len() > NAME_IN_TEMP {
            stem.pop();
        }
        let pid = std::process::id();
        let mut attempt = 0;
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let temp = dir.join(format!(".{stem}.{pid}.{n}.tmp"));
            match fs_err::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)
            {
                Ok(file) => {
                    return Ok(Self {
                        file,
                        temp,
                        target,
                        dir,
                        committed: false,
                    });
                }
                // Left behind by a crashed process that had the same pid.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(source) => {
                    return Err(FsError::CreateTemp {
                        path: target,
                        source,
                    });
                }
            }
        }
    }

    /// The file that [`AtomicFile::commit`] replaces.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The temporary file, for writers that only take a path. They must write to this path in
    /// place (open and truncate it, not delete and recreate it).
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Change the target's file name (it stays in the same directory), for names that depend on
    /// the content, such as a digest.
    pub fn set_file_name(&mut self, name: impl AsRef<OsStr>) {
        self.target = self.dir.join(name.as_ref());
    }

    /// Make the written bytes the target's content: fsync the temporary file, rename it over
    /// the target, fsync the directory. On error before the rename the temporary file is
    /// removed and the target is unchanged.
    pub fn commit(mut self) -> Result<(), FsError> {
        self.file.sync_all().map_err(|source| FsError::Sync {
            path: self.target.clone(),
            source,
        })?;
        fs_err::rename(&self.temp, &self.target).map_err(|source| FsError::Rename {
            path: self.target.clone(),
            source,
        })?;
        self.committed = true;
        sync_dir(&self.dir)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: the caller already has the error that made it give up.
            let _ = fs_err::remove_file(&self.temp);
        }
    }
}

/// Create `dir` and its missing ancestors, and make each new directory's entry durable (the
/// directory of the target itself is flushed after the rename).
fn create_parents(dir: &Path) -> Result<(), FsError> {
    if dir.is_dir() {
        return Ok(());
    }
    let missing: Vec<&Path> = dir.ancestors().take_while(|a| !a.exists()).collect();
    fs_err::create_dir_all(dir).map_err(|source| FsError::CreateDir {
        path: dir.to_owned(),
        source,
    })?;
    for new in missing {
        if let Some(parent) = new.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<(), FsError> {
    fs_err::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| FsError::SyncDir {
            path: dir.to_owned(),
            source,
        })
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<(), FsError> {
    // A directory cannot be opened for flushing here; the rename is as durable as it gets.
    Ok(())
}
