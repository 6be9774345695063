//! Writing a journal before the first change (`orig.bin`, the pending manifest and the space
//! its rollback needs, durably), and the commit point after the last; both touch only the
//! journal's directory.

use std::os::fd::AsFd;

use papayu_protocol::sha256_hex;

use super::format::{Entry, Manifest, State, TxStatus, encode_manifest};
use super::trust::JournalKey;
use super::{
    COMMITTED_TMP, MANIFEST_TMP, Op, PlannedOp, RESERVE, Snapshot, TX_DIR, tmp_name, tx_path,
};
use crate::error::StoreError;
use crate::fsx::{Root, parent_display};

/// Space kept for a rollback beyond the originals it writes back: directories, temp-file
/// metadata, the copies set aside under `.papa-yu/conflicts/`, per entry and in all.
const RESERVE_SLACK: u64 = 256 * 1024;
const RESERVE_PER_ENTRY: u64 = 4096;

/// Write the journal for `ops`: `orig.bin` with every original file, the space reserve, then
/// `manifest.json`. Returns the pending manifest. Nothing in the project has been touched when
/// this returns.
///
/// The manifest records every path's state before, and after except a new file's sha256 (it is
/// computed while the file is synced, see [`apply_ops`](super::apply_ops), and recorded in the
/// committed manifest, durable before any check runs); it is sealed with `key`.
///
/// When the transaction replaces or deletes files, `reserve` is allocated (`fallocate`) with
/// room for every original: the rollback frees it first, so it can write them back even when
/// the disk filled up meanwhile (a check writing a build, another program). A disk too full
/// for it refuses the transaction here, before any change.
///
/// Durable on return: `orig.bin` (bytes and name), the reserve, `manifest.json` (likewise) and
/// the journal directory's own name. `manifest.json` is renamed into place only once `orig.bin`,
/// its name and the manifest's bytes are synced. The files are written and their write-back
/// started before anything is fsynced, and the fsyncs that may run together do (two groups:
/// before and after the rename), so the filesystem writes the metadata they share once and the
/// device flushes overlap: two rounds of fsyncs instead of four in a row.
pub(crate) fn write_journal(
    root: &Root,
    key: &JournalKey,
    mut header: Manifest,
    ops: &[PlannedOp<'_>],
) -> Result<Manifest, StoreError> {
    let dir = tx_path(&header.id);
    // Synced below with the journal directory's own entry.
    let created = root.ensure_dirs_unsynced(TX_DIR)?;
    let tx_dir = root.open_dir(TX_DIR)?;
    root.mkdir_at(&tx_dir, &dir, None)?;
    let jdir = root.open_dir(&dir)?;
    let mut pack = Vec::new();
    let mut entries = Vec::with_capacity(ops.len());
    for (i, (p, before_sha256)) in ops.iter().zip(hash_originals(ops)).enumerate() {
        let path = p.op.path().to_owned();
        let before = match &p.before {
            Snapshot::Absent => State::Absent,
            Snapshot::File { bytes, mode } => {
                let start = pack.len() as u64;
                pack.extend_from_slice(bytes);
                State::File {
                    // `hash_originals` hashes exactly the file snapshots.
                    sha256: before_sha256.unwrap_or_default(),
                    mode: Some(*mode),
                    copy: Some((start, bytes.len() as u64)),
                }
            }
            Snapshot::Dir { mode } => State::Dir { mode: Some(*mode) },
            Snapshot::Symlink { target } => State::Symlink {
                target: hex::encode(target),
            },
        };
        let (after, tmp) = match &p.op {
            Op::Write { .. } => (None, Some(tmp_name(&header.id, i))),
            Op::MkDir { mode, .. } => (Some(State::Dir { mode: *mode }), None),
            Op::Symlink { target, .. } => (
                Some(State::Symlink {
                    target: hex::encode(target),
                }),
                None,
            ),
            Op::RemoveFile { .. } | Op::RemoveDir { .. } => (Some(State::Absent), None),
        };
        entries.push(Entry {
            path,
            before,
            after,
            tmp,
        });
    }
    header.entries = entries;
    header.status = TxStatus::Pending;
    let orig_path = format!("{dir}/orig.bin");
    let manifest_path = format!("{dir}/manifest.json");
    let reserve_path = format!("{dir}/{RESERVE}");
    let orig = root.create_new_at(&jdir, &orig_path, &pack)?;
    let reserve = match pack.len() as u64 {
        0 => None,
        originals => root.reserve_at(
            &jdir,
            &reserve_path,
            originals + RESERVE_SLACK + RESERVE_PER_ENTRY * ops.len() as u64,
        )?,
    };
    let manifest = root.write_staged_at(
        &jdir,
        &manifest_path,
        MANIFEST_TMP,
        &encode_manifest(key, &header)?,
        None,
    )?;
    // orig.bin's bytes and name, the reserve's blocks, and the manifest's bytes, before
    // manifest.json can appear. On error the caller removes the whole journal directory, temp
    // files included.
    let mut wave = vec![
        (orig.as_fd(), orig_path.as_str()),
        (manifest.as_fd(), manifest_path.as_str()),
        (jdir.as_fd(), dir.as_str()),
    ];
    if let Some(fd) = &reserve {
        wave.push((fd.as_fd(), reserve_path.as_str()));
    }
    root.fsync_all(&wave)?;
    drop(wave);
    drop((orig, manifest, reserve));
    root.rename_staged_at(&jdir, &manifest_path, MANIFEST_TMP)?;
    // manifest.json's name, and the journal directory's own (its mkdir above was not synced),
    // and `.papa-yu/tx`'s if this is the project's first transaction.
    let created = created
        .iter()
        .map(|d| root.open_dir(d).map(|fd| (fd, parent_display(d))))
        .collect::<Result<Vec<_>, _>>()?;
    let mut wave = vec![(jdir.as_fd(), dir.as_str()), (tx_dir.as_fd(), TX_DIR)];
    wave.extend(created.iter().map(|(fd, d)| (fd.as_fd(), *d)));
    root.fsync_all(&wave)?;
    Ok(header)
}

/// Below this many bytes of original file content their hashes are computed on one thread.
const PARALLEL_HASH_BYTES: usize = 1 << 20;

/// For each op: the sha256 of the original file it replaces, if any. With enough bytes they are
/// computed on up to four threads, in chunks of ops.
fn hash_originals(ops: &[PlannedOp<'_>]) -> Vec<Option<String>> {
    let one = |p: &PlannedOp<'_>| match &p.before {
        Snapshot::File { bytes, .. } => Some(sha256_hex(bytes)),
        _ => None,
    };
    let size = |p: &PlannedOp<'_>| match &p.before {
        Snapshot::File { bytes, .. } => bytes.len(),
        _ => 0,
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    if threads < 2 || ops.iter().map(size).sum::<usize>() < PARALLEL_HASH_BYTES {
        return ops.iter().map(one).collect();
    }
    let chunk = ops.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let mut chunks = ops.chunks(chunk);
        let first = chunks.next().unwrap_or_default();
        let others: Vec<_> = chunks
            .map(|c| {
                let hash = move || c.iter().map(one).collect::<Vec<_>>();
                // Out of threads: hash this chunk here instead.
                std::thread::Builder::new()
                    .spawn_scoped(scope, hash)
                    .map_err(|_| hash())
            })
            .collect();
        let mut out: Vec<_> = first.iter().map(one).collect();
        for other in others {
            match other {
                Ok(handle) => match handle.join() {
                    Ok(hashes) => out.extend(hashes),
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                Err(hashes) => out.extend(hashes),
            }
        }
        out
    })
}

/// The commit point: rename the committed manifest that [`apply_ops`](super::apply_ops) left
/// synced in a temp file onto `manifest.json`, and fsync the journal directory; then free the
/// rollback's reserve.
pub(crate) fn commit(root: &Root, manifest: &Manifest) -> Result<(), StoreError> {
    let dir = tx_path(&manifest.id);
    let jdir = root.open_dir(&dir)?;
    root.rename_staged_at(&jdir, &format!("{dir}/manifest.json"), COMMITTED_TMP)?;
    root.fsync(&jdir, &dir)?;
    // Committed: no rollback will need the space. A removal lost in a crash only leaves the
    // reserve until the journal is pruned.
    let _ = root.remove_file_at(&jdir, &format!("{dir}/{RESERVE}"));
    Ok(())
}
