//! The journal `.papa-yu/tx/<tx_id>/` and the primitive operations it protects (SPEC §5.2).
//!
//! A transaction is a list of primitive [`Op`]s, each on one path. Before the first one runs,
//! the journal holds, durably: `orig.bin` (the original bytes of every file touched, packed) and
//! `manifest.json` (per op: the path's state before — existed?, sha256, mode bits, where its copy
//! is — and after, except a new file's hash). `manifest.json` appears by an atomic rename only
//! once `orig.bin` is synced, so a journal directory without it means nothing was applied yet.
//! Once every file is written and synced, the committed manifest — with every after-state, new
//! files' hashes included, and `status: committed` — is synced in a temp file; renaming it onto
//! `manifest.json` is the commit point.
//! Rollback walks the entries backwards and restores each path, skipping paths whose current
//! bytes already hash to the original, and verifying every copy's hash before writing it.

use std::collections::BTreeSet;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use serde::{Deserialize, Serialize};

use crate::error::PatchError;
use crate::fsx::{DirCache, FsError, Node, Root, parent_display};
use papayu_protocol::sha256_hex;

pub(crate) const TX_DIR: &str = ".papa-yu/tx";
pub(crate) const STACK: &str = ".papa-yu/tx/stack.json";
const MANIFEST_FORMAT: u32 = 1;
/// The temp file a manifest is written to before its atomic rename.
const MANIFEST_TMP: &str = ".manifest.json.tmp";
/// The committed manifest, written and synced with the journal, renamed onto `manifest.json` at
/// the commit point ([`commit`]).
const COMMITTED_TMP: &str = ".manifest.committed.tmp";

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
    /// The action kind (`CREATE_FILE`, …).
    pub kind: String,
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

/// What sits at a path right now, with the bytes needed to journal it.
#[derive(Debug, Clone)]
pub(crate) enum Snapshot {
    Absent,
    File { bytes: Arc<Vec<u8>>, mode: u32 },
    Dir { mode: u32 },
    Symlink { target: Vec<u8> },
}

impl Snapshot {
    pub(crate) fn read(root: &Root, path: &str) -> Result<Snapshot, PatchError> {
        Ok(match root.node(path)? {
            Node::Absent => Snapshot::Absent,
            Node::File { mode } => Snapshot::File {
                bytes: Arc::new(root.read(path)?),
                mode,
            },
            Node::Dir { mode } => Snapshot::Dir { mode },
            Node::Symlink => Snapshot::Symlink {
                target: root.read_link(path)?,
            },
            Node::Other => {
                return Err(PatchError::Io {
                    op: "journal",
                    path: path.to_owned(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::Unsupported,
                        "not a file, directory or symlink",
                    ),
                });
            }
        })
    }
}

/// File content, shared without copies between the simulated tree, the ops and the preview:
/// borrowed from the plan (a new file's `content`, as given) or computed (shared).
#[derive(Debug, Clone)]
pub(crate) enum Bytes<'p> {
    Borrowed(&'p [u8]),
    Shared(Arc<Vec<u8>>),
}

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Borrowed(b) => b,
            Bytes::Shared(b) => b,
        }
    }
}

impl<'p> From<std::borrow::Cow<'p, [u8]>> for Bytes<'p> {
    fn from(c: std::borrow::Cow<'p, [u8]>) -> Self {
        match c {
            std::borrow::Cow::Borrowed(b) => Bytes::Borrowed(b),
            std::borrow::Cow::Owned(v) => Bytes::Shared(Arc::new(v)),
        }
    }
}

/// A primitive operation: bring one path to one state.
#[derive(Debug, Clone)]
pub(crate) enum Op<'p> {
    MkDir {
        path: String,
        mode: Option<u32>,
    },
    Write {
        path: String,
        bytes: Bytes<'p>,
        mode: Option<u32>,
    },
    Symlink {
        path: String,
        target: Vec<u8>,
    },
    RemoveFile {
        path: String,
    },
    RemoveDir {
        path: String,
    },
}

impl Op<'_> {
    pub(crate) fn path(&self) -> &str {
        match self {
            Op::MkDir { path, .. }
            | Op::Write { path, .. }
            | Op::Symlink { path, .. }
            | Op::RemoveFile { path }
            | Op::RemoveDir { path } => path,
        }
    }

    /// The after-state, except a write's (see [`Entry::after`]).
    fn after_known(&self) -> Option<State> {
        Some(match self {
            Op::MkDir { mode, .. } => State::Dir { mode: *mode },
            Op::Write { .. } => return None,
            Op::Symlink { target, .. } => State::Symlink {
                target: hex::encode(target),
            },
            Op::RemoveFile { .. } | Op::RemoveDir { .. } => State::Absent,
        })
    }
}

/// An op with the state it replaces.
#[derive(Debug, Clone)]
pub(crate) struct PlannedOp<'p> {
    pub(crate) op: Op<'p>,
    pub(crate) before: Snapshot,
}

pub(crate) fn tx_path(id: &str) -> String {
    format!("{TX_DIR}/{id}")
}

fn tmp_name(id: &str, i: usize) -> String {
    format!(".papayu-{id}-{i}.tmp")
}

fn parent_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

fn encode_manifest(m: &Manifest) -> Result<Vec<u8>, PatchError> {
    serde_json::to_vec_pretty(m).map_err(|e| PatchError::Journal {
        path: tx_path(&m.id),
        message: format!("cannot encode manifest: {e}"),
    })
}

pub(crate) fn write_manifest(root: &Root, m: &Manifest) -> Result<(), PatchError> {
    let dir = tx_path(&m.id);
    root.write_atomic(
        &format!("{dir}/manifest.json"),
        MANIFEST_TMP,
        &encode_manifest(m)?,
        None,
    )?;
    Ok(())
}

pub(crate) fn read_manifest(root: &Root, id: &str) -> Result<Option<Manifest>, PatchError> {
    let path = format!("{}/manifest.json", tx_path(id));
    let bytes = match root.read(&path) {
        Ok(b) => b,
        Err(FsError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    let m: Manifest = serde_json::from_slice(&bytes).map_err(|e| PatchError::Journal {
        path: path.clone(),
        message: format!("unreadable manifest: {e}"),
    })?;
    if m.format != MANIFEST_FORMAT {
        return Err(PatchError::Journal {
            path,
            message: format!("unknown manifest format {}", m.format),
        });
    }
    Ok(Some(m))
}

/// Write the journal for `ops`: `orig.bin` with every original file, then `manifest.json`.
/// Returns the pending manifest. Nothing in the project has been touched when this returns.
///
/// Durable on return: `orig.bin` (bytes and name), `manifest.json` (likewise) and the journal
/// directory's own name. `manifest.json` is renamed into place only once `orig.bin`, its name
/// and the manifest's bytes are synced. Both files are written and their write-back started
/// before anything is fsynced, and the fsyncs that may run together do (two groups: before and
/// after the rename), so the filesystem writes the metadata they share once and the device
/// flushes overlap: two rounds of fsyncs instead of four in a row. The new files' hashes are not
/// computed here ([`Entry::after`]): [`apply_ops`] computes them while the files are synced,
/// when the CPU would otherwise wait for the device.
pub(crate) fn write_journal(
    root: &Root,
    mut header: Manifest,
    ops: &[PlannedOp<'_>],
) -> Result<Manifest, PatchError> {
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
        let tmp = matches!(p.op, Op::Write { .. }).then(|| tmp_name(&header.id, i));
        entries.push(Entry {
            path,
            before,
            after: p.op.after_known(),
            tmp,
        });
    }
    header.entries = entries;
    header.status = TxStatus::Pending;
    let orig_path = format!("{dir}/orig.bin");
    let manifest_path = format!("{dir}/manifest.json");
    let orig = root.create_new_at(&jdir, &orig_path, &pack)?;
    let manifest = root.write_staged_at(
        &jdir,
        &manifest_path,
        MANIFEST_TMP,
        &encode_manifest(&header)?,
        None,
    )?;
    // orig.bin's bytes and name, and the manifest's bytes, before manifest.json can appear.
    // On error the caller removes the whole journal directory, temp files included.
    root.fsync_all(&[
        (orig.as_fd(), &orig_path),
        (manifest.as_fd(), &manifest_path),
        (jdir.as_fd(), &dir),
    ])?;
    drop((orig, manifest));
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

/// The commit point: rename the committed manifest that [`apply_ops`] left synced in a temp
/// file onto `manifest.json`, and fsync the journal directory.
pub(crate) fn commit(root: &Root, manifest: &Manifest) -> Result<(), PatchError> {
    let dir = tx_path(&manifest.id);
    let jdir = root.open_dir(&dir)?;
    root.rename_staged_at(&jdir, &format!("{dir}/manifest.json"), COMMITTED_TMP)?;
    root.fsync(&jdir, &dir)?;
    Ok(())
}

/// Threads that stage a transaction's new file contents (temp file, write) and then fsync
/// them, in parallel: fsyncs of different files overlap on the device.
const STAGING_THREADS: usize = 8;

/// Temp files kept open between their write and their fsync. Beyond this many the pending
/// writes are flushed early (fsynced and renamed: still in plan order), so a huge transaction
/// stays far below the usual limit of 1 024 open files.
const MAX_PENDING_WRITES: usize = 256;

/// Work for a staging thread.
enum Job<'a> {
    /// Write `bytes` to the temp file `tmp` next to `path`, start its write-back and hand the
    /// open temp file back (it is fsynced later, by a [`Job::Sync`]).
    Write {
        index: usize,
        dir: Arc<OwnedFd>,
        path: &'a str,
        tmp: &'a str,
        bytes: &'a [u8],
        mode: Option<u32>,
    },
    /// Hash `bytes` (the after-state the committed manifest records), then fsync (and close)
    /// the temp file a [`Job::Write`] wrote them to: the hashing overlaps the device's work.
    Sync {
        index: usize,
        dir: Arc<OwnedFd>,
        fd: OwnedFd,
        path: &'a str,
        tmp: &'a str,
        bytes: &'a [u8],
    },
    /// fsync a directory (or the committed manifest).
    Fsync {
        index: usize,
        fd: Arc<OwnedFd>,
        path: String,
    },
}

/// What a staging thread sends back: the job's index and its outcome.
type JobResult = (usize, Result<Done, FsError>);

/// A staging thread's job that did not fail.
enum Done {
    /// A [`Job::Write`]: the temp file, open for its fsync.
    Written(OwnedFd),
    /// A [`Job::Sync`] (with the sha256 of its bytes) or a [`Job::Fsync`]: the fsync succeeded.
    Synced(Option<String>),
    /// Not run, because another job failed: the transaction rolls back. Never taken for a
    /// success (a skipped fsync must not let its file be renamed).
    Skipped,
}

/// A write whose temp file is written (or being written) and waits for its fsync and rename.
struct PendingWrite<'a> {
    index: usize,
    dir: Arc<OwnedFd>,
    path: &'a str,
    tmp: &'a str,
    bytes: &'a [u8],
    /// The temp file, once written and not yet fsynced.
    fd: Option<OwnedFd>,
}

/// Whether op path `op` must see the pending write to `write` done first (same path, or a
/// directory above it).
fn depends_on(op: &str, write: &str) -> bool {
    op == write || (write.starts_with(op) && write[op.len()..].starts_with('/'))
}

/// Run the ops of a journaled transaction with the effect of running them in order.
///
/// New file contents go through two phases on [`STAGING_THREADS`] threads. While the other ops
/// run, each is written to its temp file and its write-back started (`sync_file_range`, Linux)
/// without waiting. When the renames are due — at the end, before an op on a path that a
/// pending write touches (or a directory above it), or once [`MAX_PENDING_WRITES`] are pending
/// — every pending temp file is fsynced, in parallel, and each is renamed into place as soon as
/// it and every write before it in op order are synced: renames stay in plan order and none
/// happens before its own fsync succeeded (SPEC §5.2 step 4, unchanged). Because all the
/// write-backs were started before the first fsync, the filesystem writes the metadata the
/// files share once instead of once per fsync (ext4 with a journal: one journal commit; without
/// one, each inode-table and directory block once), and most fsyncs find their file already
/// written. Each file's sha256 is computed just before its fsync, by the thread that then waits
/// for the device. Directory handles are opened once per transaction ([`DirCache`]).
///
/// Finally the committed manifest (the pending one with every after-state and `status:
/// committed`) is written to a temp file in the journal, and it and every directory changed are
/// fsynced, in parallel, before this returns it: [`commit`] only has to rename it. Setting
/// `cancel` stops at the next op with [`PatchError::Cancelled`]; the caller rolls back, as for
/// any error.
pub(crate) fn apply_ops(
    root: &Root,
    manifest: &Manifest,
    ops: &[PlannedOp<'_>],
    cancel: Option<&AtomicBool>,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<Manifest, PatchError> {
    let total = ops.len();
    let writes = ops
        .iter()
        .filter(|p| matches!(p.op, Op::Write { .. }))
        .count();
    let workers = writes.clamp(1, STAGING_THREADS);
    let failed = AtomicBool::new(false);
    let (job_tx, job_rx) = mpsc::channel::<Job<'_>>();
    let job_rx = Mutex::new(job_rx);
    let (res_tx, res_rx) = mpsc::channel::<JobResult>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let res_tx = res_tx.clone();
            let (job_rx, failed) = (&job_rx, &failed);
            scope.spawn(move || {
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    let (index, result) = match job {
                        // After a failure the transaction rolls back: skip what is queued (a
                        // skipped temp file is closed unsynced; rollback removes it).
                        Job::Write { index, .. }
                        | Job::Sync { index, .. }
                        | Job::Fsync { index, .. }
                            if failed.load(Ordering::Relaxed) =>
                        {
                            (index, Ok(Done::Skipped))
                        }
                        Job::Write {
                            index,
                            dir,
                            path,
                            tmp,
                            bytes,
                            mode,
                        } => (
                            index,
                            root.write_staged_at(&dir, path, tmp, bytes, mode)
                                .map(Done::Written),
                        ),
                        Job::Sync {
                            index,
                            dir,
                            fd,
                            path,
                            tmp,
                            bytes,
                        } => {
                            let sha256 = sha256_hex(bytes);
                            (
                                index,
                                root.sync_staged_at(&dir, fd, path, tmp)
                                    .map(|()| Done::Synced(Some(sha256))),
                            )
                        }
                        Job::Fsync { index, fd, path } => {
                            (index, root.fsync(&*fd, &path).map(|()| Done::Synced(None)))
                        }
                    };
                    if result.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    if res_tx.send((index, result)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(res_tx);
        let mut run = Run {
            root,
            cache: DirCache::new(root),
            job_tx,
            res_rx,
            outstanding: 0,
            errors: Vec::new(),
            pending: Vec::new(),
            hashes: vec![None; ops.len()],
            dirty: BTreeSet::new(),
            done: 0,
            total,
            progress,
        };
        let result = run.all(manifest, ops, cancel);
        if result.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        // Dropping `run` closes the job queue, so the threads finish and the scope joins them.
        drop(run);
        result
    })
}

/// The state of one [`apply_ops`] run on the calling thread.
struct Run<'a, 'p> {
    root: &'a Root,
    cache: DirCache<'a>,
    job_tx: mpsc::Sender<Job<'a>>,
    res_rx: mpsc::Receiver<JobResult>,
    outstanding: usize,
    errors: Vec<(usize, FsError)>,
    pending: Vec<PendingWrite<'a>>,
    /// Per op: the sha256 of the bytes written, once its temp file is synced.
    hashes: Vec<Option<String>>,
    dirty: BTreeSet<String>,
    done: usize,
    total: usize,
    progress: &'p mut dyn FnMut(usize, usize, &str),
}

impl<'a> Run<'a, '_> {
    fn all(
        &mut self,
        manifest: &'a Manifest,
        ops: &'a [PlannedOp<'_>],
        cancel: Option<&AtomicBool>,
    ) -> Result<Manifest, PatchError> {
        let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
        for (i, (p, e)) in ops.iter().zip(&manifest.entries).enumerate() {
            if cancelled() {
                return Err(PatchError::Cancelled);
            }
            self.collect(false)?;
            let path = p.op.path();
            if let Op::Write { bytes, mode, .. } = &p.op {
                let tmp = e.tmp.as_deref().ok_or_else(|| PatchError::Journal {
                    path: tx_path(&manifest.id),
                    message: format!("entry {i} ({path}) has no temp file name"),
                })?;
                if self.pending.len() >= MAX_PENDING_WRITES {
                    self.flush()?;
                }
                let dir = self.cache.parent(path)?;
                self.send(Job::Write {
                    index: i,
                    dir: dir.clone(),
                    path,
                    tmp,
                    bytes,
                    mode: *mode,
                })?;
                self.pending.push(PendingWrite {
                    index: i,
                    dir,
                    path,
                    tmp,
                    bytes,
                    fd: None,
                });
                continue;
            }
            if self.pending.iter().any(|w| depends_on(path, w.path)) {
                self.flush()?;
            }
            let dir = self.cache.parent(path)?;
            match &p.op {
                Op::MkDir { mode, .. } => self.root.mkdir_at(&dir, path, *mode)?,
                Op::Symlink { target, .. } => self.root.symlink_at(&dir, path, target)?,
                Op::RemoveFile { .. } => self.root.remove_file_at(&dir, path)?,
                Op::RemoveDir { .. } => {
                    self.root.remove_dir_at(&dir, path)?;
                    self.cache.forget(path);
                    self.dirty.retain(|d| !depends_on(path, d));
                }
                Op::Write { .. } => {}
            }
            self.dirty.insert(parent_of(path).to_owned());
            self.step(path);
        }
        if cancelled() {
            return Err(PatchError::Cancelled);
        }
        self.flush()?;
        // The committed manifest and every changed directory, durably, before the commit.
        let committed = self.committed(manifest, ops)?;
        let dirty = std::mem::take(&mut self.dirty);
        for (index, d) in dirty.into_iter().enumerate() {
            let fd = self.cache.dir(&d)?;
            self.send(Job::Fsync {
                index,
                fd,
                path: parent_display(&d).to_owned(),
            })?;
        }
        self.collect(true)?;
        Ok(committed)
    }

    /// Write the committed manifest — `manifest` with every write's after-state from
    /// [`Run::hashes`] — to its temp file in the journal, and queue its fsync (index
    /// `usize::MAX`: after every directory in error order).
    fn committed(
        &mut self,
        manifest: &Manifest,
        ops: &[PlannedOp<'_>],
    ) -> Result<Manifest, PatchError> {
        let mut m = manifest.clone();
        m.status = TxStatus::Committed;
        for ((e, p), hash) in m.entries.iter_mut().zip(ops).zip(&self.hashes) {
            if let Op::Write { mode, .. } = &p.op {
                let sha256 = hash.clone().ok_or_else(|| PatchError::Journal {
                    path: tx_path(&m.id),
                    message: format!("`{}` was written but never synced", e.path),
                })?;
                e.after = Some(State::File {
                    sha256,
                    mode: *mode,
                    copy: None,
                });
            }
        }
        let dir = tx_path(&m.id);
        let jdir = self.root.open_dir(&dir)?;
        let path = format!("{dir}/manifest.json");
        let fd =
            self.root
                .write_staged_at(&jdir, &path, COMMITTED_TMP, &encode_manifest(&m)?, None)?;
        self.send(Job::Fsync {
            index: usize::MAX,
            fd: Arc::new(fd),
            path,
        })?;
        Ok(m)
    }

    fn step(&mut self, item: &str) {
        self.done += 1;
        (self.progress)(self.done, self.total, item);
    }

    fn send(&mut self, job: Job<'a>) -> Result<(), PatchError> {
        self.job_tx.send(job).map_err(|_| PatchError::Journal {
            path: TX_DIR.to_owned(),
            message: "the file staging threads stopped".to_owned(),
        })?;
        self.outstanding += 1;
        Ok(())
    }

    /// Take the finished jobs' results (all of them, waiting, with `wait`), keeping each
    /// written temp file with its pending write; the first failure in op order is the
    /// transaction's error.
    fn collect(&mut self, wait: bool) -> Result<(), PatchError> {
        while self.outstanding > 0 {
            let next = if wait {
                self.res_rx.recv().ok()
            } else {
                self.res_rx.try_recv().ok()
            };
            let Some((index, result)) = next else {
                if wait {
                    return Err(PatchError::Journal {
                        path: TX_DIR.to_owned(),
                        message: "a file staging thread stopped".to_owned(),
                    });
                }
                break;
            };
            self.outstanding -= 1;
            match result {
                Ok(Done::Written(fd)) => {
                    if let Ok(at) = self.pending.binary_search_by_key(&index, |w| w.index) {
                        self.pending[at].fd = Some(fd);
                    }
                }
                Ok(Done::Synced(_) | Done::Skipped) => {}
                Err(e) => self.errors.push((index, e)),
            }
        }
        if self.errors.is_empty() {
            return Ok(());
        }
        if wait || self.outstanding == 0 {
            self.errors.sort_by_key(|(i, _)| *i);
        }
        Err(self.errors.swap_remove(0).1.into())
    }

    /// Wait for every pending temp file to be written, fsync them all (in parallel), and rename
    /// them into place in op order, each as soon as it and every write before it is synced:
    /// the renames overlap the later fsyncs, and none happens before its own fsync succeeded.
    fn flush(&mut self) -> Result<(), PatchError> {
        self.collect(true)?;
        let mut pending = std::mem::take(&mut self.pending);
        for w in &mut pending {
            let fd = w.fd.take().ok_or_else(|| PatchError::Journal {
                path: TX_DIR.to_owned(),
                message: format!("the temp file of `{}` was not written", w.path),
            })?;
            self.send(Job::Sync {
                index: w.index,
                dir: w.dir.clone(),
                fd,
                path: w.path,
                tmp: w.tmp,
                bytes: w.bytes,
            })?;
        }
        let mut synced = vec![false; pending.len()];
        let mut renamed = 0;
        while renamed < pending.len() {
            let Ok((index, result)) = self.res_rx.recv() else {
                return Err(PatchError::Journal {
                    path: TX_DIR.to_owned(),
                    message: "a file staging thread stopped".to_owned(),
                });
            };
            self.outstanding -= 1;
            match result {
                Err(e) => {
                    self.errors.push((index, e));
                    // Wait for the other fsyncs: the error reported is the first in op order.
                    return self.collect(true);
                }
                Ok(Done::Synced(sha256)) => {
                    if let Ok(at) = pending.binary_search_by_key(&index, |w| w.index) {
                        synced[at] = true;
                        self.hashes[index] = sha256;
                    }
                }
                // Skipped: another fsync failed, and its error is on its way.
                Ok(Done::Skipped | Done::Written(_)) => {}
            }
            while renamed < pending.len() && synced[renamed] {
                let w = &pending[renamed];
                self.root.rename_staged_at(&w.dir, w.path, w.tmp)?;
                self.dirty.insert(parent_of(w.path).to_owned());
                self.step(w.path);
                renamed += 1;
            }
            if renamed < pending.len() && self.outstanding == 0 {
                self.collect(true)?;
                return Err(PatchError::Journal {
                    path: TX_DIR.to_owned(),
                    message: "a staged file was not synced".to_owned(),
                });
            }
        }
        Ok(())
    }
}

/// Restore every path of `manifest` to its before-state (idempotent, hash-verified), then
/// delete the journal.
pub(crate) fn rollback(root: &Root, manifest: &Manifest) -> Result<(), PatchError> {
    let dir = tx_path(&manifest.id);
    let pack_path = format!("{dir}/orig.bin");
    let pack = if manifest
        .entries
        .iter()
        .any(|e| matches!(e.before, State::File { .. }))
    {
        root.read(&pack_path)?
    } else {
        Vec::new()
    };
    for e in &manifest.entries {
        if let Some(tmp) = &e.tmp {
            match root.remove_file(&join(parent_of(&e.path), tmp)) {
                Ok(()) => {}
                Err(FsError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound => {}
                // A parent that is now missing or a symlink holds no temp file of ours.
                Err(FsError::Escape { .. }) => {}
                Err(err) => return Err(err.into()),
            }
        }
    }
    for (i, e) in manifest.entries.iter().enumerate().rev() {
        restore(root, manifest, i, e, &pack, &pack_path)?;
    }
    root.remove_file(&format!("{dir}/manifest.json"))?;
    root.remove_tree(&dir)?;
    Ok(())
}

fn restore(
    root: &Root,
    m: &Manifest,
    i: usize,
    e: &Entry,
    pack: &[u8],
    pack_path: &str,
) -> Result<(), PatchError> {
    let path = e.path.as_str();
    let now = root.node(path)?;
    match &e.before {
        State::Absent => match now {
            Node::Absent => {}
            Node::Dir { .. } => root.remove_dir(path)?,
            Node::File { .. } | Node::Symlink => root.remove_file(path)?,
            Node::Other => return Err(unsupported(path)),
        },
        State::File { sha256, mode, copy } => {
            if matches!(now, Node::File { .. }) && sha256_hex(&root.read(path)?) == *sha256 {
                return Ok(());
            }
            let (start, len) =
                copy.ok_or_else(|| journal_err(pack_path, path, "no copy recorded"))?;
            let bytes = usize::try_from(start)
                .ok()
                .zip(usize::try_from(start + len).ok())
                .and_then(|(s, end)| pack.get(s..end))
                .ok_or_else(|| journal_err(pack_path, path, "copy out of range"))?;
            if sha256_hex(bytes) != *sha256 {
                return Err(journal_err(
                    pack_path,
                    path,
                    "the journaled copy does not match its sha256; refusing to restore it",
                ));
            }
            match now {
                Node::Dir { .. } => root.remove_tree(path)?,
                Node::Symlink => root.remove_file(path)?,
                _ => {}
            }
            root.write_atomic(path, &tmp_name(&m.id, i), bytes, *mode)?;
        }
        State::Dir { mode } => match now {
            Node::Dir { .. } => {}
            Node::Absent => root.mkdir(path, *mode)?,
            Node::File { .. } | Node::Symlink => {
                root.remove_file(path)?;
                root.mkdir(path, *mode)?;
            }
            Node::Other => return Err(unsupported(path)),
        },
        State::Symlink { target } => {
            let target = hex::decode(target)
                .map_err(|_| journal_err(pack_path, path, "bad symlink target"))?;
            match now {
                Node::Symlink if root.read_link(path)? == target => {}
                Node::Absent => root.symlink(path, &target)?,
                Node::Symlink | Node::File { .. } => {
                    root.remove_file(path)?;
                    root.symlink(path, &target)?;
                }
                Node::Dir { .. } => {
                    root.remove_tree(path)?;
                    root.symlink(path, &target)?;
                }
                Node::Other => return Err(unsupported(path)),
            }
        }
    }
    Ok(())
}

fn journal_err(pack_path: &str, path: &str, msg: &str) -> PatchError {
    PatchError::Journal {
        path: pack_path.to_owned(),
        message: format!("`{path}`: {msg}"),
    }
}

fn unsupported(path: &str) -> PatchError {
    PatchError::Io {
        op: "restore",
        path: path.to_owned(),
        source: std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "not a file, directory or symlink",
        ),
    }
}

/// Whether `path` currently holds exactly `state` (for undo/redo conflict detection).
pub(crate) fn holds(root: &Root, path: &str, state: &State) -> Result<bool, PatchError> {
    let now = root.node(path)?;
    Ok(match (state, now) {
        (State::Absent, Node::Absent) => true,
        (State::Dir { .. }, Node::Dir { .. }) => true,
        (State::File { sha256, .. }, Node::File { .. }) => sha256_hex(&root.read(path)?) == *sha256,
        (State::Symlink { target }, Node::Symlink) => hex::encode(root.read_link(path)?) == *target,
        _ => false,
    })
}

/// The undo/redo stacks (`.papa-yu/tx/stack.json`). Derived state: committed manifests with a
/// `seq` above `through_seq` are folded in by [`fold_committed`], so a crash between a commit
/// and the stack update loses nothing.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Stack {
    pub(crate) through_seq: u64,
    pub(crate) undo: Vec<String>,
    pub(crate) redo: Vec<String>,
}

pub(crate) fn read_stack(root: &Root) -> Result<Stack, PatchError> {
    match root.read(STACK) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| PatchError::Journal {
            path: STACK.to_owned(),
            message: format!("unreadable: {e}"),
        }),
        Err(FsError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(Stack::default())
        }
        Err(e) => Err(e.into()),
    }
}

/// Replace `stack.json` atomically. Its bytes are always synced before the rename (a torn stack
/// would make the project unreadable); the rename itself is synced only with `sync_rename`.
fn write_stack(root: &Root, s: &Stack, sync_rename: bool) -> Result<(), PatchError> {
    let bytes = serde_json::to_vec_pretty(s).map_err(|e| PatchError::Journal {
        path: STACK.to_owned(),
        message: e.to_string(),
    })?;
    root.write_atomic_with(STACK, ".stack.json.tmp", &bytes, None, sync_rename)?;
    Ok(())
}

/// Journal directory names (transaction ids), sorted (ids start with a zero-padded seq).
pub(crate) fn tx_ids(root: &Root) -> Result<Vec<String>, PatchError> {
    match root.node(TX_DIR)? {
        Node::Dir { .. } => {}
        _ => return Ok(Vec::new()),
    }
    Ok(root
        .list(TX_DIR)?
        .into_iter()
        .filter(|n| {
            n.split('-')
                .next()
                .is_some_and(|s| s.parse::<u64>().is_ok())
        })
        .collect())
}

pub(crate) fn seq_of(id: &str) -> u64 {
    id.split('-')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Fold every committed, not yet folded transaction into the stacks; prune to `depth`.
pub(crate) fn fold_committed(root: &Root, depth: usize) -> Result<Stack, PatchError> {
    let mut stack = read_stack(root)?;
    let mut changed = false;
    let mut drop_dirs = Vec::new();
    for id in tx_ids(root)? {
        if seq_of(&id) <= stack.through_seq {
            continue;
        }
        let Some(m) = read_manifest(root, &id)? else {
            continue;
        };
        if m.status != TxStatus::Committed {
            continue;
        }
        match m.kind {
            TxKind::Apply => {
                drop_dirs.append(&mut stack.redo);
                stack.undo.push(m.id.clone());
            }
            TxKind::Undo => {
                if let Some(t) = &m.reverts {
                    stack.undo.retain(|x| x != t);
                    drop_dirs.push(t.clone());
                }
                stack.redo.push(m.id.clone());
            }
            TxKind::Redo => {
                if let Some(t) = &m.reverts {
                    stack.redo.retain(|x| x != t);
                    drop_dirs.push(t.clone());
                }
                stack.undo.push(m.id.clone());
            }
        }
        stack.through_seq = m.seq;
        changed = true;
    }
    while stack.undo.len() > depth {
        drop_dirs.push(stack.undo.remove(0));
        changed = true;
    }
    if changed {
        // The stack is derived from the committed manifests: if a crash loses the rename, the
        // old stack plus the manifests above its `through_seq` fold into the same one again.
        // Only journals removed below rely on the new stack being on disk first.
        write_stack(root, &stack, !drop_dirs.is_empty())?;
        for id in drop_dirs {
            // Only after the stack no longer names it; a leftover is harmless (seq ≤ through_seq).
            root.remove_tree(&tx_path(&id))?;
        }
    }
    Ok(stack)
}

/// The next transaction sequence number.
pub(crate) fn next_seq(root: &Root) -> Result<u64, PatchError> {
    let stack = read_stack(root)?;
    let max_dir = tx_ids(root)?.iter().map(|id| seq_of(id)).max().unwrap_or(0);
    Ok(stack.through_seq.max(max_dir) + 1)
}

/// What recovery (`papayu recover`, or opening a project) did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    /// Transactions found unfinished and rolled back.
    pub rolled_back: Vec<String>,
    /// Journals discarded because they were never complete (nothing had been applied).
    pub discarded: Vec<String>,
}

/// Roll back every uncommitted journal; the caller holds the lock.
pub(crate) fn recover_locked(root: &Root, depth: usize) -> Result<RecoveryReport, PatchError> {
    let mut report = RecoveryReport::default();
    let stack = read_stack(root)?;
    for id in tx_ids(root)? {
        // On a stack means folded, and only committed manifests are folded, after their commit
        // rename is synced; the one way back to pending (a failure right after the commit
        // rename) happens in the committing call, before any fold. So there is no need to read
        // it: with a full undo stack of large transactions, reading every manifest made each
        // open cost tens of milliseconds.
        if seq_of(&id) <= stack.through_seq
            && (stack.undo.contains(&id) || stack.redo.contains(&id))
        {
            continue;
        }
        match read_manifest(root, &id)? {
            None => {
                root.remove_tree(&tx_path(&id))?;
                report.discarded.push(id);
            }
            Some(m) if m.status == TxStatus::Pending => {
                tracing::warn!(tx = %id, "rolling back an unfinished transaction");
                rollback(root, &m)?;
                report.rolled_back.push(id);
            }
            Some(m) => {
                // A committed journal the stack no longer references is finished garbage.
                if m.seq <= stack.through_seq
                    && !stack.undo.contains(&m.id)
                    && !stack.redo.contains(&m.id)
                {
                    root.remove_tree(&tx_path(&id))?;
                }
            }
        }
    }
    if !report.rolled_back.is_empty() || !report.discarded.is_empty() {
        root.fsync_dir(TX_DIR)?;
    }
    fold_committed(root, depth)?;
    Ok(report)
}
