//! The stable error codes: the only error vocabulary that crosses a process boundary.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $text:literal, )+) => {
        /// A stable, machine-readable error code (SPEC §4).
        ///
        /// The string form (`ERR_BASE_MISMATCH`) is serialised as-is and never changes once
        /// shipped; new codes may be added, so the enum is `#[non_exhaustive]`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant, )+
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[ $( ErrorCode::$variant, )+ ];

            /// The stable string form, e.g. `"ERR_INVALID_PATH"`.
            pub const fn as_str(self) -> &'static str {
                match self { $( ErrorCode::$variant => $text, )+ }
            }
        }

        impl FromStr for ErrorCode {
            type Err = UnknownErrorCode;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $( $text => Ok(ErrorCode::$variant), )+
                    _ => Err(UnknownErrorCode(s.to_owned())),
                }
            }
        }
    };
}

error_codes! {
    // --- parsing (SPEC §3.3)
    /// The model's answer is not JSON (carries line and column).
    JsonParse = "ERR_JSON_PARSE",
    /// The JSON does not match the schema of the effective protocol version.
    SchemaValidation = "ERR_SCHEMA_VALIDATION",
    /// An action has an unknown or missing `kind`, or a kind the protocol version lacks.
    UnknownKind = "ERR_UNKNOWN_KIND",
    /// An action carries a field that does not belong to its kind (v2/v3).
    FieldNotAllowed = "ERR_FIELD_NOT_ALLOWED",

    // --- paths (SPEC §4)
    /// A path is empty, absolute, escapes with `..`, or contains a forbidden character or name.
    InvalidPath = "ERR_INVALID_PATH",
    /// A path exceeds 240 bytes, or one segment exceeds 255 bytes.
    PathTooLong = "ERR_PATH_TOO_LONG",
    /// A path names a secret or papayu's own state (`.env`, keys, `.git/`, `.papa-yu/`).
    ProtectedPath = "ERR_PROTECTED_PATH",
    /// A write target has a disallowed extension or lies under a build/vendor directory.
    ForbiddenPath = "ERR_FORBIDDEN_PATH",
    /// A write would leave the project root or go through a symlink.
    PathEscapesRoot = "ERR_PATH_ESCAPES_ROOT",

    // --- limits and content
    /// More actions than the policy allows (default 200).
    TooManyActions = "ERR_TOO_MANY_ACTIONS",
    /// Content over the per-file (1 MiB) or total (5 MiB) limit.
    ContentTooLarge = "ERR_CONTENT_TOO_LARGE",
    /// CREATE_FILE / UPDATE_FILE / REPLACE_RANGE without `content`.
    ContentRequired = "ERR_CONTENT_REQUIRED",
    /// Content with NUL bytes or mostly control characters.
    PseudoBinary = "ERR_PSEUDO_BINARY",
    /// Content with a lazy-elision placeholder such as `// ... rest unchanged ...`.
    PlaceholderContent = "ERR_PLACEHOLDER_CONTENT",

    // --- patch / edit / range shape
    /// PATCH_FILE without `patch`, or EDIT_FILE without `edits`.
    PatchRequired = "ERR_PATCH_REQUIRED",
    /// `patch` is not a unified diff with at least one well-formed hunk.
    PatchNotUnified = "ERR_PATCH_NOT_UNIFIED",
    /// `base_sha256` missing or not 64 lowercase hex digits.
    BaseSha256Invalid = "ERR_BASE_SHA256_INVALID",
    /// An EDIT_FILE edit is malformed or could not be applied.
    EditApplyFailed = "ERR_EDIT_APPLY_FAILED",
    /// A REPLACE_RANGE line range is invalid for the file.
    RangeInvalid = "ERR_RANGE_INVALID",

    // --- plan-level rules
    /// Two actions touch the same path in incompatible ways.
    ActionConflict = "ERR_ACTION_CONFLICT",
    /// APPLY mode with no actions and a summary not starting with `NO_CHANGES:`.
    ApplyEmptyActions = "ERR_APPLY_EMPTY_ACTIONS",
    /// PLAN mode answer that carries actions.
    PlanHasActions = "ERR_PLAN_HAS_ACTIONS",
    /// APPLY edits a file whose content was never sent to the model.
    UpdateWithoutBase = "ERR_UPDATE_WITHOUT_BASE",
    /// v2: UPDATE_FILE on an existing file (use PATCH_FILE).
    V2UpdateExistingForbidden = "ERR_V2_UPDATE_EXISTING_FORBIDDEN",

    // --- apply engine (SPEC §5)
    /// Another papayu holds the project lock.
    Locked = "ERR_LOCKED",
    /// The file's current bytes do not hash to `base_sha256`, or the file is missing.
    BaseMismatch = "ERR_BASE_MISMATCH",
    /// EDIT_FILE base hash mismatch or missing file.
    EditBaseMismatch = "ERR_EDIT_BASE_MISMATCH",
    /// The file to edit is not UTF-8.
    NonUtf8File = "ERR_NON_UTF8_FILE",
    /// A hunk found no place, or several equally good places, in the file.
    PatchApplyFailed = "ERR_PATCH_APPLY_FAILED",
    /// An EDIT_FILE anchor or `before` text occurs more than once.
    EditAmbiguous = "ERR_EDIT_AMBIGUOUS",
    /// An EDIT_FILE anchor does not occur in the file.
    EditAnchorNotFound = "ERR_EDIT_ANCHOR_NOT_FOUND",
    /// An EDIT_FILE `before` text does not occur near its anchor.
    EditBeforeNotFound = "ERR_EDIT_BEFORE_NOT_FOUND",
    /// CREATE_FILE on an existing file (v2/v3).
    FileExists = "ERR_FILE_EXISTS",
    /// A check command failed after writing; the transaction was rolled back.
    CheckFailed = "ERR_CHECK_FAILED",
    /// Files changed since the transaction being undone or redone.
    UndoConflict = "ERR_UNDO_CONFLICT",
    /// A rollback found content papayu did not write (a file edited or re-created while the
    /// transaction ran, files added to a directory it created): that content was kept in place,
    /// and the original it would have restored saved under `.papa-yu/conflicts/<tx>/`.
    RollbackConflict = "ERR_ROLLBACK_CONFLICT",
    /// Nothing on the undo (or redo) stack.
    NothingToUndo = "ERR_NOTHING_TO_UNDO",
    /// Nothing on the redo stack.
    NothingToRedo = "ERR_NOTHING_TO_REDO",
    /// A filesystem operation failed (the message names the path).
    Io = "ERR_IO",

    // --- LLM layer (SPEC §7)
    /// The provider did not answer within the timeout.
    LlmTimeout = "ERR_LLM_TIMEOUT",
    /// The provider answered with an HTTP error.
    LlmHttp = "ERR_LLM_HTTP",
    /// The provider could not be reached.
    LlmNetwork = "ERR_LLM_NETWORK",
    /// The provider's answer did not have the expected envelope.
    LlmBadResponse = "ERR_LLM_BAD_RESPONSE",
    /// The LLM configuration is incomplete or invalid.
    LlmConfig = "ERR_LLM_CONFIG",
    /// The local provider's model file does not exist (`papayu model fetch` gets the default).
    ModelNotFound = "ERR_MODEL_NOT_FOUND",
    /// The local provider's model file is not a usable GGUF model (truncated, corrupt, wrong
    /// checksum, or llama.cpp refused it).
    ModelInvalid = "ERR_MODEL_INVALID",

    // --- agent and configuration
    /// `apply` with no saved plan.
    NoSavedPlan = "ERR_NO_SAVED_PLAN",
    /// A configuration value (env var, policy file, preferences) is invalid.
    InvalidConfig = "ERR_INVALID_CONFIG",
    /// An API key (or another secret) in a config file, or on its way into one: keys stay in
    /// the environment, and a file names the variable that holds one.
    SecretInConfig = "ERR_SECRET_IN_CONFIG",
    /// A memory_patch key is unknown or its value has the wrong type or range.
    MemoryPatchRejected = "ERR_MEMORY_PATCH_REJECTED",
    /// The user cancelled or declined the operation.
    Cancelled = "ERR_CANCELLED",

    // --- command line
    /// The command line could not be used: an unknown flag, a missing argument, a bad value.
    Usage = "ERR_USAGE",
    /// The command would have to ask before changing files, and it may not ask (`--json`,
    /// `--json-stream`): pass `--yes`.
    ConfirmationRequired = "ERR_CONFIRMATION_REQUIRED",
}

impl ErrorCode {
    /// Parse the stable string form; `None` for an unknown code.
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Returned by [`ErrorCode::from_str`] for a string that is not a known code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown error code `{0}`")]
pub struct UnknownErrorCode(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_unique_screaming_snake() {
        let mut seen = std::collections::BTreeSet::new();
        for &code in ErrorCode::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert!(s.starts_with("ERR_"), "{s}");
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            );
            assert_eq!(ErrorCode::parse(s), Some(code));
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<ErrorCode>(&json).unwrap(), code);
        }
        assert!(ErrorCode::parse("ERR_NOPE").is_none());
    }
}
