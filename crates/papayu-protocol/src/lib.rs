//! The papayu wire protocol: what a language model may answer, and how papayu reads it.
//!
//! A model proposing a code change answers with **one JSON document** (SPEC §3): a list of file
//! actions (`CREATE_FILE`, `PATCH_FILE`, `EDIT_FILE`, …) plus optional plan fields. This crate
//! holds the wire types of protocol v1, v2 and v3, the JSON schemas of each version (embedded,
//! with [`schema_hash`]), the extraction of JSON from prose or a fenced block, strict parsing
//! against the schema of the **effective** version, and the stable [`ErrorCode`] vocabulary.
//!
//! It does no I/O beyond parsing the text it is given.
//!
//! ```
//! use papayu_protocol::{parse_response, ErrorCode, ProtocolVersion};
//!
//! let answer = r#"Here is the plan:
//! ```json
//! {"actions": [{"kind": "EDIT_FILE", "path": "src/lib.rs", "base_sha256": "00",
//!   "edits": [{"op": "replace", "anchor": "fn a", "before": "1", "after": "2"}]}],
//!  "summary": "bump"}
//! ```"#;
//!
//! // EDIT_FILE exists in v3 ...
//! let v3 = parse_response(answer, ProtocolVersion::V3).unwrap();
//! assert_eq!(v3.effective_actions().len(), 1);
//!
//! // ... and is rejected under v2, with a pointer to the offending field.
//! let err = parse_response(answer, ProtocolVersion::V2).unwrap_err();
//! assert_eq!(err.code(), ErrorCode::UnknownKind);
//! assert_eq!(err.pointer(), Some("/actions/0/kind"));
//! ```
#![warn(missing_docs)]

mod error_code;
mod parse;
pub mod schema;
mod types;

pub use error_code::{ErrorCode, UnknownErrorCode};
pub use parse::{
    Document, MAX_ACTIONS, MAX_ANSWER_BYTES, ParseError, Violation, document_from_value,
    extract_json, join_violations, parse_document, parse_response, parse_value, strip_nulls,
};
pub use schema::{SchemaVariant, schema_hash, sha256_hex};
pub use types::{
    ACTION_FIELDS, Action, ActionKind, ContextRequest, Edit, EditOp, MEMORY_PATCH_KEYS,
    MemoryValueKind, PlanStep, ProposedChanges, ProtocolVersion, ROOT_FIELDS, Response,
    ResponseMode,
};
