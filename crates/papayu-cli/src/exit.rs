//! Exit codes and error reporting: the one map from a stable error code to an exit code.
//! A leaf: it imports nothing from the rest of the binary but the message catalogue.

use std::process::ExitCode;

use papayu_protocol::ErrorCode;

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

impl From<ErrorCode> for Exit {
    /// SPEC §11, for every command: rejected by validation → 3, apply rejected or rolled back
    /// → 4, configuration → 2, anything else (a lock, nothing to undo, I/O, cancelled) → 1.
    fn from(code: ErrorCode) -> Exit {
        use ErrorCode as C;
        match code {
            C::JsonParse
            | C::SchemaValidation
            | C::UnknownKind
            | C::FieldNotAllowed
            | C::InvalidPath
            | C::PathTooLong
            | C::ProtectedPath
            | C::ForbiddenPath
            | C::TooManyActions
            | C::ContentTooLarge
            | C::ContentRequired
            | C::PseudoBinary
            | C::PlaceholderContent
            | C::PatchRequired
            | C::PatchNotUnified
            | C::BaseSha256Invalid
            | C::RangeInvalid
            | C::ActionConflict
            | C::ApplyEmptyActions
            | C::PlanHasActions
            | C::UpdateWithoutBase
            | C::V2UpdateExistingForbidden => Exit::Rejected,
            C::BaseMismatch
            | C::EditBaseMismatch
            | C::NonUtf8File
            | C::PatchApplyFailed
            | C::EditApplyFailed
            | C::EditAmbiguous
            | C::EditAnchorNotFound
            | C::EditBeforeNotFound
            | C::FileExists
            | C::CheckFailed
            | C::PathEscapesRoot
            | C::UndoConflict
            | C::RollbackConflict => Exit::RolledBack,
            C::LlmConfig
            | C::InvalidConfig
            | C::ModelNotFound
            | C::ModelInvalid
            | C::Usage
            | C::ConfirmationRequired => Exit::Usage,
            _ => Exit::Failure,
        }
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

/// A command that must ask before changing files was run where it may not ask (`--json`,
/// `--json-stream`): exit 2 with `ERR_CONFIRMATION_REQUIRED`; the message says to pass `--yes`.
#[derive(Debug)]
pub struct ConfirmationRequired(pub String);

impl std::fmt::Display for ConfirmationRequired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfirmationRequired {}

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

/// An error of a papayu library: its stable code and its message, which the frontend shows side
/// by side (`ERR_LOCKED: another papayu …`).
pub trait Coded: std::fmt::Display {
    /// The stable code.
    fn code(&self) -> ErrorCode;
}

macro_rules! coded {
    ($($error:ty),*) => {$(
        impl Coded for $error {
            fn code(&self) -> ErrorCode {
                <$error>::code(self)
            }
        }
    )*};
}

coded!(
    papayu_patch::OpenError,
    papayu_patch::RecoverError,
    papayu_patch::ApplyError,
    papayu_patch::UndoError,
    papayu_patch::HistoryError,
    papayu_agent::AgentError,
    papayu_llm::LlmError
);

/// `message` with `code` in front, once (a message that already starts with its code, as some
/// errors still do, keeps just that one), for people: in Russian with what the code means.
pub fn with_code(code: ErrorCode, message: &str) -> String {
    crate::i18n::coded(code, message)
}

/// The library error `err` carries, as its code and whether its own message already shows it.
fn coded_cause(err: &anyhow::Error) -> Option<(ErrorCode, bool)> {
    fn cause<E: Coded + std::fmt::Debug + Send + Sync + 'static>(
        err: &anyhow::Error,
    ) -> Option<(ErrorCode, bool)> {
        let e = err.downcast_ref::<E>()?;
        Some((e.code(), e.to_string().starts_with(e.code().as_str())))
    }
    cause::<papayu_llm::LlmError>(err)
        .or_else(|| cause::<papayu_agent::AgentError>(err))
        .or_else(|| cause::<papayu_patch::OpenError>(err))
        .or_else(|| cause::<papayu_patch::RecoverError>(err))
        .or_else(|| cause::<papayu_patch::ApplyError>(err))
        .or_else(|| cause::<papayu_patch::UndoError>(err))
        .or_else(|| cause::<papayu_patch::HistoryError>(err))
}

/// The code a machine document gives an error no library code describes: the usage codes for
/// the binary's own errors, `ERR_IO` for an I/O failure, else none.
fn uncoded(err: &anyhow::Error) -> Option<ErrorCode> {
    if err.downcast_ref::<ConfirmationRequired>().is_some() {
        Some(ErrorCode::ConfirmationRequired)
    } else if err.downcast_ref::<UsageError>().is_some() {
        Some(ErrorCode::Usage)
    } else if err.chain().any(|c| c.is::<std::io::Error>()) {
        Some(ErrorCode::Io)
    } else {
        None
    }
}

/// Print an error (with `json`, as the one machine document `{"ok":false,"code":…,"error":…}`
/// handed to `json`) and turn the outcome into the process exit code.
pub fn finish(result: anyhow::Result<Exit>, json: Option<fn(&serde_json::Value)>) -> ExitCode {
    match result {
        Ok(code) => code.into(),
        Err(err) => {
            // An LLM-layer error (a missing model file, say) keeps its stable code.
            let llm_code = err
                .downcast_ref::<papayu_llm::LlmError>()
                .map(papayu_llm::LlmError::code);
            let exit = if err.downcast_ref::<UsageError>().is_some()
                || err.downcast_ref::<ConfirmationRequired>().is_some()
            {
                Exit::Usage
            } else if let Some(code) = llm_code {
                Exit::from(code)
            } else {
                Exit::Failure
            };
            let coded = coded_cause(&err);
            if let Some(print) = json {
                let code = coded.map(|(code, _)| code).or_else(|| uncoded(&err));
                print(
                    &serde_json::json!({ "ok": false, "code": code, "error": format!("{err:#}") }),
                );
            } else {
                let word = crate::tr!("error-word");
                match coded {
                    // The code once, in front, however deep in the context chain the error is.
                    Some((code, _)) => {
                        eprintln!("papayu: {word}: {}", with_code(code, &format!("{err:#}")));
                    }
                    None => eprintln!("papayu: {word}: {err:#}"),
                }
            }
            exit.into()
        }
    }
}

impl std::error::Error for UsageError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per class, for the codes both the agent and the engine report.
    #[test]
    fn every_command_maps_a_code_the_same_way() {
        for (code, exit) in [
            (ErrorCode::InvalidPath, Exit::Rejected),
            (ErrorCode::RangeInvalid, Exit::Rejected),
            (ErrorCode::BaseMismatch, Exit::RolledBack),
            (ErrorCode::CheckFailed, Exit::RolledBack),
            (ErrorCode::UndoConflict, Exit::RolledBack),
            (ErrorCode::PathEscapesRoot, Exit::RolledBack),
            (ErrorCode::ModelNotFound, Exit::Usage),
            (ErrorCode::InvalidConfig, Exit::Usage),
            (ErrorCode::Locked, Exit::Failure),
            (ErrorCode::NothingToUndo, Exit::Failure),
            (ErrorCode::Io, Exit::Failure),
            (ErrorCode::Cancelled, Exit::Failure),
            (ErrorCode::LlmNetwork, Exit::Failure),
        ] {
            assert_eq!(Exit::from(code), exit, "{code}");
        }
        assert!(ErrorCode::ALL.iter().all(|&c| Exit::from(c) != Exit::Ok));
    }
}
