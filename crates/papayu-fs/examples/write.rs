//! Save a small settings file with `write_atomic`, then stream a bigger file through
//! `AtomicFile`, and show that an abandoned stream leaves the old file alone.
//!
//! Run with `cargo run -p papayu-fs --example write`.
#![allow(clippy::print_stdout)]

use std::io::Write as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tmp = tempfile::tempdir()?;
    let settings = tmp.path().join("papayu/ui-settings.json");
    papayu_fs::write_atomic(&settings, b"{\"theme\": \"dark\"}\n")?;
    println!("wrote {}", settings.display());

    let download = tmp.path().join("models/model.bin");
    let mut file = papayu_fs::AtomicFile::create(&download)?;
    for chunk in 0..16u8 {
        file.write_all(&[chunk; 64 * 1024])?;
    }
    println!("streaming into {}", file.temp_path().display());
    file.commit()?;
    println!("committed {} bytes", fs_err::metadata(&download)?.len());

    let mut abandoned = papayu_fs::AtomicFile::create(&download)?;
    abandoned.write_all(b"a download that failed half way")?;
    drop(abandoned);
    println!(
        "after an abandoned stream: still {} bytes, {} file(s) in the directory",
        fs_err::metadata(&download)?.len(),
        fs_err::read_dir(tmp.path().join("models"))?.count()
    );
    Ok(())
}
