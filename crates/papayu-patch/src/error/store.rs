//! [`StoreError`]: what can go wrong with the project's lock, its files and its journal — the
//! failures every operation shares.

use camino::Utf8PathBuf;
use papayu_protocol::ErrorCode;

/// A failure of the project's on-disk store: its lock, its files (always opened beneath the
/// root, never through a symlink) or its journal under `.papa-yu/tx/`. Every operation's error
/// holds one; paths are relative to the project root (or the root itself when it cannot be
/// opened).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Another papayu process holds the project lock.
    #[error("another papayu (pid {pid}) is working on this project ({lock})")]
    Locked {
        /// The holder's pid (0 when the lock kept changing hands while it was read).
        pid: u32,
        /// The lock file.
        lock: Utf8PathBuf,
    },
    /// A path would go through a symlink or leave the project root.
    #[error("`{path}` {reason}")]
    PathEscapesRoot {
        /// The offending path (relative to the root).
        path: String,
        /// Why.
        reason: EscapeReason,
    },
    /// A filesystem operation failed.
    #[error("{op} `{path}`: {source}")]
    Io {
        /// What was being done.
        op: IoOp,
        /// The path (relative to the root, or the root itself).
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A path no longer held what the transaction computed its change from (a user edited,
    /// created or removed it while the transaction ran): the transaction stopped before
    /// writing over it (`ERR_BASE_MISMATCH`) and was rolled back.
    #[error("`{path}` changed on disk while the transaction ran; nothing was written over it")]
    Changed {
        /// The path (relative to the root).
        path: String,
    },
    /// The path belongs to a transaction whose rollback did not finish: no new transaction
    /// touches it until `recover` has finished that rollback.
    #[error(
        "`{path}` is part of transaction {tx_id}, whose rollback did not finish ({error}); remove the cause and run `papayu recover`"
    )]
    Unfinished {
        /// The path (relative to the root).
        path: String,
        /// The transaction.
        tx_id: String,
        /// What stopped its rollback.
        error: String,
    },
    /// A journal file under `.papa-yu/tx/` is unreadable or does not verify; it was left in
    /// place.
    #[error("journal `{path}`: {fault}")]
    Journal {
        /// The journal file (or directory).
        path: String,
        /// What is wrong with it.
        #[source]
        fault: JournalFault,
    },
}

impl StoreError {
    /// The stable code: `ERR_LOCKED`, `ERR_PATH_ESCAPES_ROOT`, `ERR_BASE_MISMATCH` or `ERR_IO`.
    pub fn code(&self) -> ErrorCode {
        match self {
            StoreError::Locked { .. } => ErrorCode::Locked,
            StoreError::Changed { .. } => ErrorCode::BaseMismatch,
            StoreError::PathEscapesRoot { .. } => ErrorCode::PathEscapesRoot,
            StoreError::Io { .. } | StoreError::Journal { .. } | StoreError::Unfinished { .. } => {
                ErrorCode::Io
            }
        }
    }

    /// The path the error is about (none for [`StoreError::Locked`]).
    pub fn path(&self) -> Option<&str> {
        match self {
            StoreError::Locked { .. } => None,
            StoreError::PathEscapesRoot { path, .. }
            | StoreError::Changed { path }
            | StoreError::Unfinished { path, .. }
            | StoreError::Io { path, .. }
            | StoreError::Journal { path, .. } => Some(path),
        }
    }

    pub(crate) fn io(op: IoOp, path: &str, e: impl Into<std::io::Error>) -> Self {
        StoreError::Io {
            op,
            path: path.to_owned(),
            source: e.into(),
        }
    }

    /// An [`StoreError::Io`] without an OS error behind it: the path holds something the
    /// operation cannot work with.
    pub(crate) fn unusable(
        op: IoOp,
        path: &str,
        kind: std::io::ErrorKind,
        what: &'static str,
    ) -> Self {
        Self::io(op, path, std::io::Error::new(kind, what))
    }

    /// The error for a FIFO, socket or device at `path`: papayu never touches those.
    pub(crate) fn not_a_node(op: IoOp, path: &str) -> Self {
        Self::unusable(
            op,
            path,
            std::io::ErrorKind::Unsupported,
            "not a file, directory or symlink",
        )
    }

    pub(crate) fn escape(path: &str, reason: EscapeReason) -> Self {
        StoreError::PathEscapesRoot {
            path: path.to_owned(),
            reason,
        }
    }

    pub(crate) fn journal(path: impl Into<String>, fault: JournalFault) -> Self {
        StoreError::Journal {
            path: path.into(),
            fault,
        }
    }

    pub(crate) fn changed(path: &str) -> Self {
        StoreError::Changed {
            path: path.to_owned(),
        }
    }

    /// The OS error number of an [`StoreError::Io`], if it has one.
    pub(crate) fn raw_os_error(&self) -> Option<i32> {
        match self {
            StoreError::Io { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// Whether this is an I/O error for a path that does not exist.
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, StoreError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Why a path is refused as leaving the project root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EscapeReason {
    /// Absolute, or with an empty, `.` or `..` segment.
    NotPlainRelative,
    /// The path, or a directory on the way to it, is a symbolic link.
    Symlink,
    /// The path resolves outside the project root.
    OutsideRoot,
}

impl std::fmt::Display for EscapeReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EscapeReason::NotPlainRelative => "not a plain relative path",
            EscapeReason::Symlink => "is a symbolic link; papayu never writes through symlinks",
            EscapeReason::OutsideRoot => "resolves outside the project root",
        })
    }
}

/// The filesystem operation that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IoOp {
    /// Opening the project root.
    OpenRoot,
    /// Duplicating a directory handle.
    Dup,
    /// Opening a directory below the root.
    OpenDir,
    /// Opening a file.
    Open,
    /// Reading a directory's entries.
    ReadDir,
    /// Reading a file.
    Read,
    /// Reading a symlink's target.
    ReadLink,
    /// Looking at what a path is.
    Stat,
    /// Creating a file.
    Create,
    /// Creating the temp file of an atomic write.
    CreateTemp,
    /// Writing a file's bytes.
    Write,
    /// Setting permission bits.
    Chmod,
    /// Making a file or directory durable.
    Fsync,
    /// Renaming a temp file into place.
    Rename,
    /// Creating a directory.
    CreateDir,
    /// Creating a symlink.
    CreateSymlink,
    /// Removing a file or symlink.
    RemoveFile,
    /// Removing a directory.
    RemoveDir,
    /// Taking the project lock.
    Flock,
    /// Reserving the space a rollback needs.
    Reserve,
    /// Setting aside a copy of a user's bytes (`.papa-yu/conflicts/`, `.papa-yu/displaced/`).
    SetAside,
    /// Journaling what a path holds before the transaction changes it.
    Journal,
    /// Restoring a path during rollback.
    Restore,
    /// Planning the directories a new path needs.
    CreateParentDir,
    /// Planning a DELETE_FILE.
    DeleteFile,
    /// Planning a DELETE_DIR.
    DeleteDir,
}

impl std::fmt::Display for IoOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IoOp::OpenRoot => "open project root",
            IoOp::Dup => "dup",
            IoOp::OpenDir => "open directory",
            IoOp::Open => "open",
            IoOp::ReadDir => "read directory",
            IoOp::Read => "read",
            IoOp::ReadLink => "readlink",
            IoOp::Stat => "stat",
            IoOp::Create => "create",
            IoOp::CreateTemp => "create temp file",
            IoOp::Write => "write",
            IoOp::Chmod => "chmod",
            IoOp::Fsync => "fsync",
            IoOp::Rename => "rename",
            IoOp::CreateDir => "create directory",
            IoOp::CreateSymlink => "create symlink",
            IoOp::RemoveFile => "remove file",
            IoOp::RemoveDir => "remove directory",
            IoOp::Flock => "flock",
            IoOp::Reserve => "reserve space for",
            IoOp::SetAside => "set aside",
            IoOp::Journal => "journal",
            IoOp::Restore => "restore",
            IoOp::CreateParentDir => "create parent directory",
            IoOp::DeleteFile => "delete file",
            IoOp::DeleteDir => "delete directory",
        })
    }
}

/// What is wrong with a journal (the path it is about is in [`StoreError::Journal`]; project
/// paths named here are the journaled entries').
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalFault {
    /// A manifest could not be encoded.
    #[error("cannot encode manifest: {0}")]
    EncodeManifest(#[source] serde_json::Error),
    /// A manifest is not valid JSON of the expected shape.
    #[error("unreadable manifest: {0}")]
    UnreadableManifest(#[source] serde_json::Error),
    /// A manifest of a format this papayu does not know.
    #[error("unknown manifest format {0}")]
    UnknownFormat(u32),
    /// The undo/redo stack could not be encoded.
    #[error("{0}")]
    EncodeStack(#[source] serde_json::Error),
    /// The undo/redo stack is not valid JSON of the expected shape.
    #[error("unreadable: {0}")]
    UnreadableStack(#[source] serde_json::Error),
    /// The journal of the transaction to undo or redo is gone.
    #[error("the transaction's journal is missing")]
    Missing,
    /// An entry's original file has no copy in `orig.bin`.
    #[error("`{path}`: no copy recorded")]
    NoCopy {
        /// The journaled path.
        path: String,
    },
    /// An entry's copy lies outside `orig.bin`.
    #[error("`{path}`: copy out of range")]
    CopyOutOfRange {
        /// The journaled path.
        path: String,
    },
    /// An entry's copy does not hash to the sha256 the manifest recorded.
    #[error("`{path}`: the journaled copy does not match its sha256; refusing to restore it")]
    CopyCorrupt {
        /// The journaled path.
        path: String,
    },
    /// A journaled symlink target is not valid hex.
    #[error("`{path}`: bad symlink target")]
    BadSymlinkTarget {
        /// The journaled path.
        path: String,
    },
    /// A file write's entry has no temp file name.
    #[error("entry {entry} ({path}) has no temp file name")]
    NoTempName {
        /// The entry's position in the manifest.
        entry: usize,
        /// The journaled path.
        path: String,
    },
    /// The manifest's MAC does not verify under this user's journal key, or it names another
    /// journal: this papayu did not write it (it came with a repository, an archive, another
    /// user), so nothing in it is ever acted on.
    #[error(
        "not written by papayu for this user on this machine; it was left alone (delete the directory if you do not know where it came from)"
    )]
    Untrusted,
    /// The manifest names a path papayu never writes.
    #[error("names `{path}`, which papayu never writes ({rule}); it was left alone")]
    ProtectedEntry {
        /// The path.
        path: String,
        /// The rule that protects it.
        rule: String,
    },
    /// A committed manifest's entry has no after-state.
    #[error("`{path}`: no after-state recorded")]
    NoAfterState {
        /// The journaled path.
        path: String,
    },
    /// A file the transaction wrote was never fsynced (an internal inconsistency).
    #[error("`{path}` was written but never synced")]
    NeverSynced {
        /// The journaled path.
        path: String,
    },
    /// A temp file was due for its fsync but had not been written (an internal inconsistency).
    #[error("the temp file of `{path}` was not written")]
    NotWritten {
        /// The journaled path.
        path: String,
    },
    /// The threads that stage files stopped before their work was done.
    #[error("the file staging threads stopped")]
    StagingStopped,
    /// A staged file was left unsynced when every fsync had reported (an internal
    /// inconsistency).
    #[error("a staged file was not synced")]
    NotSynced,
}
