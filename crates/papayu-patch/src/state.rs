//! papayu's state directory `.papa-yu/`: created with a `.gitignore` naming what must never be
//! committed, and read without blocking or following a symlink. It touches only `.papa-yu/`.

use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags};

use crate::error::StoreError;
use crate::fsx::Root;

/// papayu's state directory, relative to the project root.
pub(crate) const STATE_DIR: &str = ".papa-yu";

/// The `.gitignore` papayu writes when it creates `.papa-yu/`: the state of one machine (the
/// journals and the lock, which `recover` must never take from a clone; the saved plan, traces,
/// logs; the copies of a user's bytes a rollback or an undo set aside). `project.json` and
/// `policy.json` are not listed: they are meant to be committed.
pub(crate) const STATE_GITIGNORE: &str = "\
# Written by papayu when it created this directory: papayu's own state on this machine,
# never to be committed. project.json and policy.json are meant to be committed.
/tx/
/lock
/state.json
/traces/
/logs/
/conflicts/
/displaced/
";

/// Create `.papa-yu/` if it is missing — with its `.gitignore`, and durably, since journals
/// are written inside it.
pub(crate) fn ensure_state_dir(root: &Root) -> Result<(), StoreError> {
    let created = root.ensure_dirs_unsynced(STATE_DIR)?;
    if created.is_empty() {
        return Ok(());
    }
    // Best effort and never fsynced (two more serial fsyncs per new project otherwise): a
    // project without it, or with a torn one after a crash, works the same.
    if let Err(e) = root.replace_unsynced(
        &format!("{STATE_DIR}/.gitignore"),
        STATE_GITIGNORE.as_bytes(),
    ) {
        tracing::warn!(error = %e, "could not write .papa-yu/.gitignore");
    }
    for dir in created {
        root.fsync_dir(&dir)?;
    }
    Ok(())
}

/// Read a small state file a project may have committed or a user may have put there —
/// `.papa-yu/policy.json`, `.papa-yu/project.json` — safely: a symlink as the last component
/// is refused, not followed, and a FIFO is opened without waiting for a writer and, like a
/// directory or a device, refused (both `ErrorKind::InvalidInput`); a missing file is
/// `ErrorKind::NotFound` as with `std::fs`, and text that is not UTF-8 `ErrorKind::InvalidData`.
/// Every error names the file.
///
/// A FIFO committed at one of these paths used to block every papayu command forever.
///
/// # Errors
///
/// As above, and any other error of `open(2)`, `fstat(2)` or `read(2)`.
pub fn read_state_file(path: impl AsRef<Path>) -> std::io::Result<String> {
    let path = path.as_ref();
    let named =
        |e: std::io::Error| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        rustix::io::Errno::LOOP => named(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a symbolic link, which papayu does not follow",
        )),
        e => named(e.into()),
    })?;
    let st = rustix::fs::fstat(&fd).map_err(|e| named(e.into()))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(named(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match rustix::io::read(&fd, &mut buf[..]) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(named(e.into())),
        }
    }
    String::from_utf8(bytes)
        .map_err(|e| named(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}
