//! Bytes papayu will not write over, and will not lose either: what a rollback found instead of
//! what its transaction wrote ([`RollbackConflict`]), and what a forced undo replaced
//! ([`Displaced`]). Copies go to `.papa-yu/conflicts/<tx>/<path>` and
//! `.papa-yu/displaced/<tx>/<path>`, which nothing prunes; it touches only those folders.

use serde::Serialize;

use super::tmp_name;
use crate::error::{IoOp, StoreError};
use crate::fsx::Root;

/// Where the originals a rollback could not put back go.
pub(crate) const CONFLICTS_DIR: &str = ".papa-yu/conflicts";
/// Where a forced undo or redo keeps the content it replaced.
pub(crate) const DISPLACED_DIR: &str = ".papa-yu/displaced";

/// A path a rollback left other than as it was before the transaction, because it held content
/// the transaction did not write (`ERR_ROLLBACK_CONFLICT`). That content was kept in place; the
/// original the rollback would have restored, if there was one, was saved in `original`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RollbackConflict {
    /// The transaction rolled back.
    pub tx_id: String,
    /// The path, relative to the project root.
    pub path: String,
    /// What was found there.
    pub found: Found,
    /// Where the original went (`.papa-yu/conflicts/<tx>/<path>`, relative to the project
    /// root), when the path held a file before the transaction.
    pub original: Option<String>,
}

/// What a rollback found at a path instead of what its transaction left there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Found {
    /// Other content: the file was edited, re-created or replaced while the transaction ran
    /// (or before a recovery); it was kept.
    Changed,
    /// A directory the transaction created holds files it did not write (a check's build log, a
    /// user's file): they and the directory were kept.
    ForeignFiles {
        /// Those files (relative to the project root), at most [`FOREIGN_LISTED`].
        files: Vec<String>,
    },
    /// The directory the path belongs in is now something else (a file, a symlink): nothing
    /// could be restored there.
    ParentReplaced,
    /// A crash came before the transaction recorded what it wrote (between its first rename
    /// and its committed manifest), so nothing proves whether the path held its write or a
    /// user's edit: the original was restored, and what it replaced kept in `saved_to`.
    Unproven {
        /// Where the replaced content went (relative to the project root).
        saved_to: String,
    },
}

/// How many foreign files a [`Found::ForeignFiles`] names.
pub const FOREIGN_LISTED: usize = 20;

impl std::fmt::Display for RollbackConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = &self.path;
        match &self.found {
            Found::Changed => write!(
                f,
                "`{path}` changed while the transaction ran: your version is kept"
            )?,
            Found::ForeignFiles { files } => write!(
                f,
                "`{path}/` holds files the transaction did not write ({}): they and the directory are kept",
                files.join(", ")
            )?,
            Found::ParentReplaced => write!(
                f,
                "`{path}`: its directory was replaced, nothing was restored there"
            )?,
            Found::Unproven { saved_to } => write!(
                f,
                "`{path}`: restored, but papayu could not prove the content it replaced was its own write (a crash came first), so that content is in `{saved_to}`"
            )?,
        }
        match &self.original {
            Some(saved) => write!(f, "; the original is in `{saved}`"),
            None => Ok(()),
        }
    }
}

/// A file a forced undo or redo replaced although it had changed since the transaction: the
/// content it held is kept in `saved_to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Displaced {
    /// The path, relative to the project root.
    pub path: String,
    /// Where its content went (`.papa-yu/displaced/<tx>/<path>`, relative to the project root).
    pub saved_to: String,
}

impl std::fmt::Display for Displaced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "your version of `{}` is in `{}`",
            self.path, self.saved_to
        )
    }
}

/// Save `bytes` (with permission bits `mode`) as `<folder>/<tx_id>/<path>`, durably, and return
/// that path. An earlier copy of the same path (a retried rollback) is replaced.
pub(crate) fn set_aside(
    root: &Root,
    folder: &str,
    tx_id: &str,
    path: &str,
    bytes: &[u8],
    mode: Option<u32>,
) -> Result<String, StoreError> {
    let dest = format!("{folder}/{tx_id}/{path}");
    let (parent, _) = crate::fsx::split_parent(&dest);
    let aside = |e: StoreError| match e {
        StoreError::Io { source, .. } => StoreError::io(IoOp::SetAside, path, source),
        other => other,
    };
    root.ensure_dirs(parent).map_err(aside)?;
    root.write_atomic(&dest, &tmp_name(tx_id, 0), bytes, mode)
        .map_err(aside)?;
    Ok(dest)
}
