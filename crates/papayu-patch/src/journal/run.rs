//! Running a journaled transaction's ops: writes staged and fsynced on a pool of threads,
//! renamed in plan order, each path checked against what the plan was computed from right
//! before it is replaced or removed; it touches the ops' paths and the journal's committed
//! manifest.

use std::collections::BTreeSet;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use papayu_protocol::sha256_hex;

use super::format::{Manifest, State, TxStatus, encode_manifest};
use super::trust::JournalKey;
use super::{COMMITTED_TMP, Op, PlannedOp, TX_DIR, parent_of, tx_path};
use crate::error::{JournalFault, StoreError};
use crate::fsx::{DirCache, Expect, Root, parent_display};

/// Why [`apply_ops`] stopped before the commit point; the caller rolls back either way.
#[derive(Debug)]
pub(crate) enum Stopped {
    /// The cancel flag was set.
    Cancelled,
    /// A write, fsync, rename or journal step failed.
    Failed(StoreError),
}

impl From<StoreError> for Stopped {
    fn from(e: StoreError) -> Self {
        Stopped::Failed(e)
    }
}

fn staging_stopped() -> StoreError {
    StoreError::journal(TX_DIR, JournalFault::StagingStopped)
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
type JobResult = (usize, Result<Done, StoreError>);

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
    /// What the path must still hold when the temp file is renamed onto it.
    expect: Expect<'a>,
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
/// Right before each rename (and each removal) the path is checked, under its directory's
/// handle, against the snapshot the plan was computed from ([`Expect`]): a file a user edited,
/// created or deleted meanwhile stops the transaction with [`StoreError::Changed`] instead of
/// being written over; a new name is created with no-replace semantics. `touched[i]` is set
/// just before op `i` changes anything, so a rollback restores only what this run touched.
///
/// Finally the committed manifest (the pending one with every after-state and `status:
/// committed`) is written to a temp file in the journal, and it and every directory changed are
/// fsynced, in parallel, before this returns it: [`commit`](super::commit) only has to rename it. Setting
/// `cancel` stops at the next op with [`Stopped::Cancelled`]; the caller rolls back, as for any
/// error.
pub(crate) fn apply_ops(
    root: &Root,
    key: &JournalKey,
    manifest: &Manifest,
    ops: &[PlannedOp<'_>],
    touched: &mut [bool],
    cancel: Option<&AtomicBool>,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<Manifest, Stopped> {
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
            key,
            touched,
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
    key: &'a JournalKey,
    /// Per op: whether it may have changed its path (set just before it does).
    touched: &'p mut [bool],
    cache: DirCache<'a>,
    job_tx: mpsc::Sender<Job<'a>>,
    res_rx: mpsc::Receiver<JobResult>,
    outstanding: usize,
    errors: Vec<(usize, StoreError)>,
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
    ) -> Result<Manifest, Stopped> {
        let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
        for (i, (p, e)) in ops.iter().zip(&manifest.entries).enumerate() {
            if cancelled() {
                return Err(Stopped::Cancelled);
            }
            self.collect(false)?;
            let path = p.op.path();
            if let Op::Write { bytes, mode, .. } = &p.op {
                let tmp = e.tmp.as_deref().ok_or_else(|| {
                    StoreError::journal(
                        tx_path(&manifest.id),
                        JournalFault::NoTempName {
                            entry: i,
                            path: path.to_owned(),
                        },
                    )
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
                    expect: p.before.expect(),
                    fd: None,
                });
                continue;
            }
            if self.pending.iter().any(|w| depends_on(path, w.path)) {
                self.flush()?;
            }
            let dir = self.cache.parent(path)?;
            self.touched[i] = true;
            let done = match &p.op {
                Op::MkDir { mode, .. } => self.root.mkdir_at(&dir, path, *mode),
                Op::Symlink { target, .. } => self.root.symlink_at(&dir, path, target),
                Op::RemoveFile { .. } => {
                    self.root.remove_verified_at(&dir, path, p.before.expect())
                }
                // A file someone added since the plan was computed: never removed.
                Op::RemoveDir { .. } => {
                    self.root
                        .remove_dir_at(&dir, path)
                        .map_err(|e| match e.raw_os_error() {
                            Some(code) if code == rustix::io::Errno::NOTEMPTY.raw_os_error() => {
                                StoreError::changed(path)
                            }
                            _ => e,
                        })
                }
                Op::Write { .. } => Ok(()),
            };
            self.untouched_if_changed(i, done)?;
            if let Op::RemoveDir { .. } = &p.op {
                self.cache.forget(path);
                self.dirty.retain(|d| !depends_on(path, d));
            }
            self.dirty.insert(parent_of(path).to_owned());
            self.step(path);
        }
        if cancelled() {
            return Err(Stopped::Cancelled);
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
    /// [`Run::hashes`] and `status: committed` — to its temp file in the journal, and queue its
    /// fsync (index `usize::MAX`: after every directory in error order). Durable before any
    /// check runs, it also tells a recovery what the transaction wrote.
    fn committed(
        &mut self,
        manifest: &Manifest,
        ops: &[PlannedOp<'_>],
    ) -> Result<Manifest, StoreError> {
        let mut m = manifest.clone();
        m.status = TxStatus::Committed;
        for ((e, p), hash) in m.entries.iter_mut().zip(ops).zip(&self.hashes) {
            if let Op::Write { mode, .. } = &p.op {
                let sha256 = hash.clone().ok_or_else(|| {
                    StoreError::journal(
                        tx_path(&m.id),
                        JournalFault::NeverSynced {
                            path: e.path.clone(),
                        },
                    )
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
        let fd = self.root.write_staged_at(
            &jdir,
            &path,
            COMMITTED_TMP,
            &encode_manifest(self.key, &m)?,
            None,
        )?;
        self.send(Job::Fsync {
            index: usize::MAX,
            fd: Arc::new(fd),
            path,
        })?;
        Ok(m)
    }

    /// An op's outcome; one refused because its path changed ([`StoreError::Changed`]) did
    /// not touch it: the path is someone else's now, and the rollback leaves it alone.
    fn untouched_if_changed(
        &mut self,
        i: usize,
        done: Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        if let Err(StoreError::Changed { .. }) = &done {
            self.touched[i] = false;
        }
        done
    }

    fn step(&mut self, item: &str) {
        self.done += 1;
        (self.progress)(self.done, self.total, item);
    }

    fn send(&mut self, job: Job<'a>) -> Result<(), StoreError> {
        self.job_tx.send(job).map_err(|_| staging_stopped())?;
        self.outstanding += 1;
        Ok(())
    }

    /// Take the finished jobs' results (all of them, waiting, with `wait`), keeping each
    /// written temp file with its pending write; the first failure in op order is the
    /// transaction's error.
    fn collect(&mut self, wait: bool) -> Result<(), StoreError> {
        while self.outstanding > 0 {
            let next = if wait {
                self.res_rx.recv().ok()
            } else {
                self.res_rx.try_recv().ok()
            };
            let Some((index, result)) = next else {
                if wait {
                    return Err(staging_stopped());
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
        Err(self.errors.swap_remove(0).1)
    }

    /// Wait for every pending temp file to be written, fsync them all (in parallel), and rename
    /// them into place in op order, each as soon as it and every write before it is synced:
    /// the renames overlap the later fsyncs, and none happens before its own fsync succeeded.
    fn flush(&mut self) -> Result<(), StoreError> {
        self.collect(true)?;
        let mut pending = std::mem::take(&mut self.pending);
        for w in &mut pending {
            let fd = w.fd.take().ok_or_else(|| {
                StoreError::journal(
                    TX_DIR,
                    JournalFault::NotWritten {
                        path: w.path.to_owned(),
                    },
                )
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
                return Err(staging_stopped());
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
                self.touched[w.index] = true;
                let done = self.root.replace_staged_at(&w.dir, w.path, w.tmp, w.expect);
                self.untouched_if_changed(w.index, done)?;
                self.dirty.insert(parent_of(w.path).to_owned());
                self.step(w.path);
                renamed += 1;
            }
            if renamed < pending.len() && self.outstanding == 0 {
                self.collect(true)?;
                return Err(StoreError::journal(TX_DIR, JournalFault::NotSynced));
            }
        }
        Ok(())
    }
}
