//! Atomic file replacement: a reader sees the old file or the new one, never a mix, and a crash
//! leaves at most a stray temporary file (named `.<file>.<pid>.<n>.tmp`) next to the target.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use camino::{Utf8Path, Utf8PathBuf};

use crate::error::MemoryError;

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn io(path: &Utf8Path) -> impl FnOnce(std::io::Error) -> MemoryError + '_ {
    move |source| MemoryError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Write `bytes` to `path`: temporary file in the same directory, write, fsync, rename over
/// `path`, fsync the directory. `create_parents` creates every missing ancestor; otherwise only
/// the immediate parent directory is created (its own parent must exist).
pub(crate) fn write_atomic(
    path: &Utf8Path,
    bytes: &[u8],
    create_parents: bool,
) -> Result<(), MemoryError> {
    let dir = match path.parent() {
        Some(d) if !d.as_str().is_empty() => d,
        _ => Utf8Path::new("."),
    };
    let file_name = path.file_name().unwrap_or("memory.json");
    if create_parents {
        fs_err::create_dir_all(dir).map_err(io(dir))?;
    } else if !dir.is_dir() {
        fs_err::create_dir(dir).map_err(io(dir))?;
    }

    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp: Utf8PathBuf = dir.join(format!(".{file_name}.{}.{n}.tmp", std::process::id()));
    let result = write_and_rename(&tmp, path, bytes);
    if result.is_err() {
        // Best effort: the original error matters more than a failed cleanup.
        let _ = fs_err::remove_file(&tmp);
    }
    result?;
    sync_dir(dir)
}

fn write_and_rename(tmp: &Utf8Path, path: &Utf8Path, bytes: &[u8]) -> Result<(), MemoryError> {
    let mut file = fs_err::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp)
        .map_err(io(tmp))?;
    file.write_all(bytes).map_err(io(tmp))?;
    file.sync_all().map_err(io(tmp))?;
    drop(file);
    fs_err::rename(tmp, path).map_err(io(path))
}

#[cfg(unix)]
fn sync_dir(dir: &Utf8Path) -> Result<(), MemoryError> {
    fs_err::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io(dir))
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Utf8Path) -> Result<(), MemoryError> {
    // Directories cannot be opened for syncing on this platform; the rename is durable enough.
    Ok(())
}
