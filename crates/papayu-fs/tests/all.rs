//! papayu-fs against real directories (tempdir): round trips, failures that must leave the old
//! file and no temporary file, and concurrent writers.

// Helpers outside `#[test]` functions may panic: a broken fixture should fail loudly.
#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::path::Path;

use papayu_fs::{AtomicFile, FsError, write_atomic};

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs_err::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn round_trip_creates_missing_parents() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("a/b/c/file.json");
    write_atomic(&path, b"first").unwrap();
    assert_eq!(fs_err::read(&path).unwrap(), b"first");
    write_atomic(&path, b"second, longer").unwrap();
    assert_eq!(fs_err::read(&path).unwrap(), b"second, longer");
    write_atomic(&path, b"").unwrap();
    assert_eq!(fs_err::read(&path).unwrap(), b"");
    assert_eq!(listing(&tmp.path().join("a/b/c")), ["file.json"]);
}

#[test]
fn streaming_round_trip_is_invisible_until_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("model.gguf");
    write_atomic(&path, b"old").unwrap();
    let mut file = AtomicFile::create(&path).unwrap();
    assert_eq!(file.target(), path);
    assert_eq!(file.temp_path().parent(), Some(tmp.path()));
    for chunk in 0..64u8 {
        file.write_all(&[chunk; 1024]).unwrap();
    }
    assert_eq!(fs_err::read(&path).unwrap(), b"old");
    file.commit().unwrap();
    let bytes = fs_err::read(&path).unwrap();
    assert_eq!(bytes.len(), 64 * 1024);
    assert!(
        bytes
            .chunks(1024)
            .enumerate()
            .all(|(i, c)| c.iter().all(|b| usize::from(*b) == i))
    );
    assert_eq!(listing(tmp.path()), ["model.gguf"]);
}

#[test]
fn a_path_writer_and_a_name_chosen_after_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut file = AtomicFile::create(tmp.path().join("state.kv")).unwrap();
    // What llama.cpp does with a path: open it for writing (truncating) and write.
    fs_err::write(file.temp_path(), b"kv state").unwrap();
    file.set_file_name("state.0123abcd.kv");
    file.commit().unwrap();
    assert_eq!(listing(tmp.path()), ["state.0123abcd.kv"]);
    assert_eq!(
        fs_err::read(tmp.path().join("state.0123abcd.kv")).unwrap(),
        b"kv state"
    );
}

#[test]
fn an_abandoned_stream_keeps_the_old_file_and_leaves_no_temp() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("settings.json");
    write_atomic(&path, b"old").unwrap();
    let mut file = AtomicFile::create(&path).unwrap();
    file.write_all(b"new but never committ").unwrap();
    let temp = file.temp_path().to_owned();
    assert!(temp.exists());
    drop(file);
    assert!(!temp.exists());
    assert_eq!(fs_err::read(&path).unwrap(), b"old");
    assert_eq!(listing(tmp.path()), ["settings.json"]);
}

#[test]
fn a_failed_rename_keeps_what_was_there_and_leaves_no_temp() {
    // A non-empty directory where the file should go: everything up to the rename works, the
    // rename fails.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("project.json");
    fs_err::create_dir(&path).unwrap();
    fs_err::write(path.join("inner"), b"kept").unwrap();
    let err = write_atomic(&path, b"new").unwrap_err();
    assert!(matches!(err, FsError::Rename { .. }), "{err:?}");
    assert_eq!(err.path(), path);
    assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
    assert_eq!(fs_err::read(path.join("inner")).unwrap(), b"kept");
    assert_eq!(listing(tmp.path()), ["project.json"]);
}

#[test]
fn a_parent_that_is_a_file_is_a_create_dir_error() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::write(tmp.path().join("plain"), b"x").unwrap();
    let err = write_atomic(tmp.path().join("plain/sub/file"), b"new").unwrap_err();
    assert!(matches!(err, FsError::CreateDir { .. }), "{err:?}");
    assert_eq!(err.into_io().kind(), std::io::ErrorKind::NotADirectory);
    assert_eq!(listing(tmp.path()), ["plain"]);
}

#[test]
fn no_file_name_is_refused() {
    let err = write_atomic("/", b"x").unwrap_err();
    assert!(matches!(err, FsError::NotAFile { .. }), "{err:?}");
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_keeps_the_old_file_and_leaves_no_temp() {
    use std::os::unix::fs::PermissionsExt as _;

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ro");
    let path = dir.join("prefs.json");
    write_atomic(&path, b"old").unwrap();
    fs_err::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let result = write_atomic(&path, b"new");
    let probe = AtomicFile::create(dir.join("probe"));
    fs_err::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Root ignores the mode bits (papayu's CI runs as root): then the write succeeds, and the
    // other failure tests above are what cover this machine.
    if probe.is_ok() {
        drop(probe);
        assert_eq!(fs_err::read(&path).unwrap(), b"new");
        assert_eq!(listing(&dir), ["prefs.json"]);
        return;
    }
    let err = result.unwrap_err();
    assert!(matches!(err, FsError::CreateTemp { .. }), "{err:?}");
    assert_eq!(err.path(), path);
    assert_eq!(fs_err::read(&path).unwrap(), b"old");
    assert_eq!(listing(&dir), ["prefs.json"]);
}

#[test]
fn concurrent_writers_never_produce_a_torn_file() {
    const WRITERS: u8 = 6;
    const ROUNDS: usize = 40;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("shared.bin");
    write_atomic(&path, &[0u8; 1000]).unwrap();
    // Each writer writes files of one byte value, with a length of its own, so a torn file
    // shows as mixed bytes or a length that does not belong to its byte.
    let expected_len = |b: u8| 1000 + usize::from(b) * 70_001;
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut reads = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let bytes = fs_err::read(&path).unwrap();
                let first = bytes[0];
                assert!(bytes.iter().all(|b| *b == first), "mixed bytes");
                assert_eq!(bytes.len(), expected_len(first), "byte {first}");
                reads += 1;
            }
            reads
        });
        let writers: Vec<_> = (1..=WRITERS)
            .map(|b| {
                let path = &path;
                s.spawn(move || {
                    let bytes = vec![b; expected_len(b)];
                    for round in 0..ROUNDS {
                        if round % 2 == 0 {
                            write_atomic(path, &bytes).unwrap();
                        } else {
                            let mut f = AtomicFile::create(path).unwrap();
                            for chunk in bytes.chunks(4096) {
                                f.write_all(chunk).unwrap();
                            }
                            f.commit().unwrap();
                        }
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
    });
    let last = fs_err::read(&path).unwrap();
    assert_eq!(last.len(), expected_len(last[0]));
    assert_eq!(listing(tmp.path()), ["shared.bin"]);
}
