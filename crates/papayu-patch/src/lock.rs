//! The project lock (SPEC §5.2 step 1): an exclusive `flock` on the `.papa-yu/` directory.
//!
//! The kernel releases an `flock` when its holder dies, so no lock is ever stale: whatever is
//! left on disk — a note from a crashed run, a `.papa-yu/lock` committed to a repository with
//! `pid=1`, a FIFO put there — means nothing. Taking it writes no data (it works on a full disk)
//! and cannot be blocked by what sits at any path. `.papa-yu/lock` is only a note naming the
//! holder (pid and start time) for the `ERR_LOCKED` message of the others; it is written after
//! the lock is taken, best effort, never fsynced, and removed on release. Each acquisition
//! opens the directory anew, so two threads of one process (`papayu ui`) exclude each other
//! like two processes.

use camino::Utf8PathBuf;

use crate::error::StoreError;
use crate::fsx::Root;
use crate::state::{STATE_DIR, ensure_state_dir};

/// The note naming the lock's holder.
pub(crate) const LOCK: &str = ".papa-yu/lock";

/// A held lock; released on drop.
pub(crate) struct LockGuard<'r> {
    root: &'r Root,
    /// The flocked `.papa-yu/` directory: closing it releases the lock.
    _held: std::os::fd::OwnedFd,
    /// The note written, if it could be.
    note: Option<Vec<u8>>,
}

fn proc_stat(pid: u32) -> Option<(char, u64)> {
    let text = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // starttime is field 22 overall, i.e. the 20th after the state (field 3).
    let start = fields.nth(18)?.parse().ok()?;
    Some((state, start))
}

fn parse(content: &[u8]) -> Option<(u32, u64)> {
    let text = std::str::from_utf8(content).ok()?;
    let mut pid = None;
    let mut start = 0;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("pid=") {
            pid = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("start=") {
            start = v.trim().parse().unwrap_or(0);
        }
    }
    pid.map(|p| (p, start))
}

/// Whether the process a note names is still running (a note may be older than the lock).
fn holder_alive(pid: u32, start: u64) -> bool {
    let Some(p) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(p) {
        Ok(()) | Err(rustix::io::Errno::PERM) => {}
        Err(_) => return false,
    }
    match proc_stat(pid) {
        // A zombie holds no lock; a different start time means the pid was recycled.
        Some((state, s)) => state != 'Z' && state != 'X' && (start == 0 || s == start),
        None => true,
    }
}

/// The holder the note names, for the message (0 when it names no live process: the holder
/// has not written it yet, or could not).
fn holder(root: &Root) -> u32 {
    match root.read(LOCK).ok().as_deref().and_then(parse) {
        Some((pid, start)) if holder_alive(pid, start) => pid,
        _ => 0,
    }
}

pub(crate) fn acquire(root: &Root) -> Result<LockGuard<'_>, StoreError> {
    ensure_state_dir(root)?;
    let Some(held) = root.try_flock_dir(STATE_DIR)? else {
        return Err(StoreError::Locked {
            pid: holder(root),
            lock: lock_path(root),
        });
    };
    let pid = std::process::id();
    let start = proc_stat(pid).map_or(0, |(_, s)| s);
    let content = format!("pid={pid}\nstart={start}\n").into_bytes();
    let note = match root.replace_unsynced(LOCK, &content) {
        Ok(()) => Some(content),
        Err(e) => {
            // Only the others' message loses the pid (a full disk, say): the lock is held.
            tracing::debug!(error = %e, "could not write the lock note");
            None
        }
    };
    Ok(LockGuard {
        root,
        _held: held,
        note,
    })
}

/// The lock's note, as the error shows it.
fn lock_path(root: &Root) -> Utf8PathBuf {
    Utf8PathBuf::from(root.path().join(LOCK).to_string_lossy().into_owned())
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        // Still holding the lock, so the note is ours unless someone wrote over it by hand.
        if self.note.is_some() && self.root.read(LOCK).ok() == self.note {
            let _ = self.root.remove_file_unsynced(LOCK);
        }
    }
}
