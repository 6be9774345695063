//! The project lock `.papa-yu/lock` (SPEC §5.2 step 1).
//!
//! Created atomically with its content (a temporary file hard-linked to the name, which fails
//! when the name exists: the `O_CREAT|O_EXCL` of SPEC §5.2 without an empty moment); holds the
//! owner's pid and its start time (from `/proc/<pid>/stat`) so a lock left by a dead process —
//! or by a recycled pid — is recognised as stale and reclaimed. Reclaims are serialised by an
//! `flock` on `.papa-yu/lock.reclaim`, so a reclaimer never removes a lock another process took
//! after the stale one was read.
//!
//! The lock is never fsynced: it excludes live processes, and `O_EXCL` creation and removal are
//! atomic in the kernel's view of the directory whether or not they reach the disk. After a
//! crash its holder is dead, so whatever the disk kept — no lock file, an empty one (nothing
//! parses: stale), or the full one naming a dead pid — is reclaimed. Syncing it cost three
//! serial fsyncs per lock taken (create: file and directory; release: directory) and protected
//! nothing.

use camino::Utf8PathBuf;

use crate::error::StoreError;
use crate::fsx::Root;

pub(crate) const LOCK: &str = ".papa-yu/lock";
/// Serialises stale-lock reclaims (an `flock`, never removed; empty).
const RECLAIM: &str = ".papa-yu/lock.reclaim";

/// A held lock; released on drop.
pub(crate) struct LockGuard<'r> {
    root: &'r Root,
    content: Vec<u8>,
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

/// Whether the process that wrote a lock is still running.
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

pub(crate) fn acquire(root: &Root) -> Result<LockGuard<'_>, StoreError> {
    root.ensure_dirs(".papa-yu")?;
    let pid = std::process::id();
    let start = proc_stat(pid).map_or(0, |(_, s)| s);
    let content = format!("pid={pid}\nstart={start}\n").into_bytes();
    for _ in 0..3 {
        if root.create_exclusive_unsynced(LOCK, &content)? {
            return Ok(LockGuard { root, content });
        }
        let existing = match root.read(LOCK) {
            Ok(c) => c,
            // Released between our create and read: try again.
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(e),
        };
        match parse(&existing) {
            Some((holder, s)) if holder_alive(holder, s) => {
                return Err(StoreError::Locked {
                    pid: holder,
                    lock: lock_path(root),
                });
            }
            _ => {
                tracing::warn!(lock = %String::from_utf8_lossy(&existing).trim(), "reclaiming a stale project lock");
                // Re-read and remove under RECLAIM's flock: the lock is removed only if it
                // still holds the stale content, and no other reclaimer can remove a lock
                // taken in between by a live process (its content names that process).
                root.with_flock(RECLAIM, || {
                    if root.read(LOCK).ok().as_deref() == Some(&existing[..]) {
                        root.remove_file_unsynced(LOCK)
                    } else {
                        Ok(())
                    }
                })??;
            }
        }
    }
    Err(StoreError::Locked {
        pid: 0,
        lock: lock_path(root),
    })
}

/// The lock file, as the error shows it.
fn lock_path(root: &Root) -> Utf8PathBuf {
    Utf8PathBuf::from(root.path().join(LOCK).to_string_lossy().into_owned())
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        if self.root.read(LOCK).ok().as_deref() == Some(&self.content[..]) {
            let _ = self.root.remove_file_unsynced(LOCK);
        }
    }
}
