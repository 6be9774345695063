//! The manifest format (`manifest.json` of a journal): what a transaction was, its status, and
//! every path's state before and after, sealed with a MAC under the user's [`JournalKey`];
//! reading and writing one touches only its journal.

use papayu_protocol::ActionKind;
use serde::{Deserialize, Serialize};

use super::trust::JournalKey;
use super::{COMMITTED_TMP, MANIFEST_TMP, tx_path};
use crate::error::{JournalFault, StoreError};
use crate::fsx::Root;

/// The manifest format this papayu writes and reads: 2 is sealed with a MAC (1, without one, is
/// never acted on: nothing proves who wrote it).
pub(crate) const MANIFEST_FORMAT: u32 = 2;

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
    /// The state the transaction leaves the path in: a rollback restores a path only while it
    /// holds this (or nothing), never over bytes someone else wrote. `None` only in a pending
    /// manifest, for a file write: its sha256 is computed while its temp file is synced, and
    /// recorded in the committed manifest — written (as a temp file) before any check runs, so
    /// a recovery reads it from there.
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
    /// HMAC-SHA256 (hex) of this manifest's encoding without it, under the user's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mac: Option<String>,
}

/// The encoding the MAC covers: the manifest without its MAC (compact JSON).
fn unsealed(m: &Manifest) -> Result<Vec<u8>, StoreError> {
    let mut m = m.clone();
    m.mac = None;
    serde_json::to_vec(&m)
        .map_err(|e| StoreError::journal(tx_path(&m.id), JournalFault::EncodeManifest(e)))
}

/// `m` encoded with its MAC under `key`: what `manifest.json` holds. The MAC is the last field,
/// so the sealed encoding is the unsealed one with it appended (one encoding, not two).
pub(super) fn encode_manifest(key: &JournalKey, m: &Manifest) -> Result<Vec<u8>, StoreError> {
    let mut bytes = unsealed(m)?;
    let mac = key.sign(&bytes);
    if bytes.pop() != Some(b'}') {
        return Err(StoreError::journal(
            tx_path(&m.id),
            JournalFault::EncodeManifest(serde::ser::Error::custom("not a JSON object")),
        ));
    }
    bytes.extend_from_slice(format!(",\"mac\":\"{mac}\"}}").as_bytes());
    Ok(bytes)
}

pub(crate) fn write_manifest(
    root: &Root,
    key: &JournalKey,
    m: &Manifest,
) -> Result<(), StoreError> {
    let dir = tx_path(&m.id);
    root.write_atomic(
        &format!("{dir}/manifest.json"),
        MANIFEST_TMP,
        &encode_manifest(key, m)?,
        None,
    )
}

/// The manifest of journal `id`, if it has one — only when `key` proves this user's papayu
/// wrote it for this journal, and every path it names is one papayu may write. Anything else
/// is an error naming what is wrong, and the journal is left as it is.
pub(crate) fn read_manifest(
    root: &Root,
    key: &JournalKey,
    id: &str,
) -> Result<Option<Manifest>, StoreError> {
    read_sealed(root, key, id, &format!("{}/manifest.json", tx_path(id)))
}

/// The committed manifest of journal `id` that its run left in a temp file (every after-state,
/// durable before the checks ran), if it is there and proven: what a recovery compares the
/// paths with.
pub(crate) fn read_committed_tmp(root: &Root, key: &JournalKey, id: &str) -> Option<Manifest> {
    let path = format!("{}/{COMMITTED_TMP}", tx_path(id));
    read_sealed(root, key, id, &path)
        .ok()
        .flatten()
        .filter(|m| m.status == TxStatus::Committed)
}

fn read_sealed(
    root: &Root,
    key: &JournalKey,
    id: &str,
    path: &str,
) -> Result<Option<Manifest>, StoreError> {
    let path = path.to_owned();
    let bytes = match root.read(&path) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e),
    };
    let fault = |fault| StoreError::journal(path.clone(), fault);
    let mut m: Manifest =
        serde_json::from_slice(&bytes).map_err(|e| fault(JournalFault::UnreadableManifest(e)))?;
    if m.format != MANIFEST_FORMAT {
        return Err(fault(JournalFault::UnknownFormat(m.format)));
    }
    let mac = m.mac.take().unwrap_or_default();
    if m.id != id || !key.verify(&unsealed(&m)?, &mac) {
        return Err(fault(JournalFault::Untrusted));
    }
    for e in &m.entries {
        if let Some(rule) = crate::plan::protected_by(&e.path) {
            return Err(fault(JournalFault::ProtectedEntry {
                path: e.path.clone(),
                rule,
            }));
        }
        if e.after.is_none() && m.status == TxStatus::Committed {
            return Err(fault(JournalFault::NoAfterState {
                path: e.path.clone(),
            }));
        }
    }
    Ok(Some(m))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn manifest(id: &str, path: &str) -> Manifest {
        Manifest {
            format: MANIFEST_FORMAT,
            id: id.to_owned(),
            seq: 1,
            kind: TxKind::Apply,
            reverts: None,
            status: TxStatus::Pending,
            created_unix_ms: 0,
            protocol: None,
            actions: Vec::new(),
            entries: vec![Entry {
                path: path.to_owned(),
                before: State::Absent,
                after: Some(State::Absent),
                tmp: None,
            }],
            mac: None,
        }
    }

    #[test]
    fn a_sealed_journal_naming_a_protected_path_is_still_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        let key = JournalKey::generate().unwrap();
        for path in [
            ".git/hooks/pre-commit",
            ".GIT/config",
            "GIT~1/config",
            ".papa-yu/lock",
            "sub/.git/config",
            "a/../b",
        ] {
            let id = "0000000001-00000000";
            root.ensure_dirs(&tx_path(id)).unwrap();
            write_manifest(&root, &key, &manifest(id, path)).unwrap();
            let err = read_manifest(&root, &key, id).unwrap_err();
            assert!(
                matches!(
                    &err,
                    StoreError::Journal {
                        fault: JournalFault::ProtectedEntry { .. },
                        ..
                    }
                ),
                "{path}: {err}"
            );
        }
    }

    #[test]
    fn a_manifest_moved_to_another_journal_or_edited_is_untrusted() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        let key = JournalKey::generate().unwrap();
        let (a, b) = ("0000000001-00000000", "0000000002-00000000");
        root.ensure_dirs(&tx_path(a)).unwrap();
        root.ensure_dirs(&tx_path(b)).unwrap();
        write_manifest(&root, &key, &manifest(a, "x.txt")).unwrap();
        assert!(read_manifest(&root, &key, a).unwrap().is_some());
        let bytes = root.read(&format!("{}/manifest.json", tx_path(a))).unwrap();
        let untrusted = |id| {
            matches!(
                read_manifest(&root, &key, id),
                Err(StoreError::Journal {
                    fault: JournalFault::Untrusted,
                    ..
                })
            )
        };
        root.write_atomic(&format!("{}/manifest.json", tx_path(b)), ".t", &bytes, None)
            .unwrap();
        assert!(untrusted(b), "sealed for another journal");
        let edited = String::from_utf8(bytes).unwrap().replace("x.txt", "y.txt");
        root.write_atomic(
            &format!("{}/manifest.json", tx_path(a)),
            ".t",
            edited.as_bytes(),
            None,
        )
        .unwrap();
        assert!(untrusted(a), "edited after sealing");
    }
}
