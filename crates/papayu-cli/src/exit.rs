//! Exit codes and error reporting.

use std::process::ExitCode;

use crate::global::Global;

/// The process outcome (SPEC §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success.
    Ok = 0,
    /// A failure that is not one of the below.
    Failure = 1,
    /// Bad usage, or an input/output error reading what the user named.
    Usage = 2,
    /// The plan was rejected by validation.
    Rejected = 3,
    /// Apply rejected or rolled back (nothing changed on disk).
    RolledBack = 4,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}

/// An error that maps to exit code 2: the user's input could not be used.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Read a file the user named; failure is a usage error (exit 2) naming the path.
pub fn read_input(path: &std::path::Path) -> anyhow::Result<String> {
    if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| UsageError(format!("cannot read standard input: {e}")))?;
        return Ok(s);
    }
    fs_err::read_to_string(path).map_err(|e| UsageError(e.to_string()).into())
}

/// Print an error (as JSON with `--json`) and turn the outcome into the process exit code.
pub fn finish(result: anyhow::Result<Exit>, global: &Global) -> ExitCode {
    match result {
        Ok(code) => code.into(),
        Err(err) => {
            // An LLM-layer error (a missing model file, say) keeps its stable code.
            let code = err
                .downcast_ref::<papayu_llm::LlmError>()
                .map(papayu_llm::LlmError::code);
            let exit = if err.downcast_ref::<UsageError>().is_some() {
                Exit::Usage
            } else if let Some(code) = code {
                crate::cmd::session::exit_for(code)
            } else {
                Exit::Failure
            };
            if global.json {
                let doc = match code {
                    Some(code) => {
                        serde_json::json!({ "ok": false, "code": code, "error": format!("{err:#}") })
                    }
                    None => serde_json::json!({ "ok": false, "error": format!("{err:#}") }),
                };
                println!("{doc}");
            } else if let Some(code) = code {
                eprintln!("papayu: error: {code}: {err:#}");
            } else {
                eprintln!("papayu: error: {err:#}");
            }
            exit.into()
        }
    }
}

impl std::error::Error for UsageError {}
