//! Apply one unified diff to one text file and print the tier each hunk used.
//!
//! ```text
//! cargo run -p papayu-patch --example apply_patch -- FILE PATCH [OUT]
//! ```
//! Writes the result to OUT (default: standard output). Exit 0 applied, 4 rejected, 2 usage/I/O.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::process::ExitCode;

use papayu_patch::engine::apply_patch_to_text;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (file, patch, out) = match args.as_slice() {
        [f, p] => (f, p, None),
        [f, p, o] => (f, p, Some(o)),
        _ => {
            eprintln!("usage: apply_patch FILE PATCH [OUT]");
            return ExitCode::from(2);
        }
    };
    let read = |p: &str| fs_err::read_to_string(p).map_err(|e| eprintln!("{e}"));
    let (Ok(text), Ok(diff)) = (read(file), read(patch)) else {
        return ExitCode::from(2);
    };
    match apply_patch_to_text(&text, &diff) {
        Ok(result) => {
            for h in &result.hunks {
                eprintln!(
                    "hunk #{} {:<40} {:<20} at line {}",
                    h.index + 1,
                    h.header,
                    h.tier.as_str(),
                    h.old_start
                );
            }
            let written = match out {
                Some(o) => fs_err::write(o, &result.text).map_err(|e| e.to_string()),
                None => std::io::stdout()
                    .write_all(result.text.as_bytes())
                    .map_err(|e| e.to_string()),
            };
            match written {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::from(2)
                }
            }
        }
        Err(e) => {
            eprintln!("rejected [{}]: {e}", e.code());
            ExitCode::from(4)
        }
    }
}
