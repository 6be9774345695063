//! The manifest format (`manifest.json` of a journal): what a transaction was, its status, and
//! every path's state before and after; reading and writing one touches only its journal.

use papayu_protocol::ActionKind;
use serde::{Deserialize, Serialize};

use super::{MANIFEST_TMP, tx_path};
use crate::error::{JournalFault, StoreError};
use crate::fsx::Root;

/// The manifest format this papayu writes and reads.
pub(crate) const MANIFEST_FORMAT: u32 = 1;

/// What a transaction was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxKind {
    /// A plan was applied.
    Apply,
    /// An undo of an earlier transaction.
    Undo,
    /// A redo (the undo of an undo).
    Redo,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TxStatus {
    Pending,
    Committed,
}

/// A path's state, as journaled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum State {
    Absent,
    File {
        sha256: String,
        /// Permission bits (`None` for a new file: whatever the umask gave it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
        /// Byte range of the original copy in `orig.bin` (before-states only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        copy: Option<(u64, u64)>,
    },
    Dir {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    Symlink {
        /// The link target, hex-encoded bytes.
        target: String,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub(crate) path: String,
    pub(crate) before: State,
    /// The state the transaction leaves the path in. `None` only in a pending manifest, for a
    /// file write: its sha256 is computed while its temp file is synced, and recorded in the
    /// committed manifest (the only one undo reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) after: Option<State>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tmp: Option<String>,
}

/// One action as recorded in the manifest (for `history`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionRecord {
    /// The action kind (`CREATE_FILE`, … as a string in the manifest).
    pub kind: ActionKind,
    /// The normalised path.
    pub path: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub(crate) format: u32,
    pub(crate) id: String,
    pub(crate) seq: u64,
    pub(crate) kind: TxKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reverts: Option<String>,
    pub(crate) status: TxStatus,
    pub(crate) created_unix_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) protocol: Option<u8>,
    pub(crate) actions: Vec<ActionRecord>,
    pub(crate) entries: Vec<Entry>,
}

pub(super) fn encode_manifest(m: &Manifest) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec_pretty(m)
        .map_err(|e| StoreError::journal(tx_path(&m.id), JournalFault::EncodeManifest(e)))
}

pub(crate) fn write_manifest(root: &Root, m: &Manifest) -> Result<(), StoreError> {
    let dir = tx_path(&m.id);
    root.write_atomic(
        &format!("{dir}/manifest.json"),
        MANIFEST_TMP,
        &encode_manifest(m)?,
        None,
    )
}

pub(crate) fn read_manifest(root: &Root, id: &str) -> Result<Option<Manifest>, StoreError> {
    let path = format!("{}/manifest.json", tx_path(id));
    let bytes = match root.read(&path) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e),
    };
    let m: Manifest = serde_json::from_slice(&bytes)
        .map_err(|e| StoreError::journal(path.clone(), JournalFault::UnreadableManifest(e)))?;
    if m.format != MANIFEST_FORMAT {
        return Err(StoreError::journal(
            path,
            JournalFault::UnknownFormat(m.format),
        ));
    }
    Ok(Some(m))
}
