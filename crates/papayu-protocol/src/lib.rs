#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod agent_sync;
mod error_code;
mod parse;
mod request_schema;
pub mod schema;
mod types;
mod weekly;

pub use error_code::{ErrorCode, UnknownErrorCode};
pub use parse::{
    Document, MAX_ACTIONS, MAX_ANSWER_BYTES, ParseError, Violation, document_from_value,
    extract_json, join_violations, parse_document, parse_response, parse_value, strip_nulls,
};
pub use request_schema::{
    EditStyle, RequestShape, answer_tokens, compact_schema, fill_in, request_schema,
};
pub use schema::{SchemaVariant, schema_hash, sha256_hex};
pub use types::{
    ACTION_FIELDS, Action, ActionKind, ContextRequest, Edit, EditOp, MEMORY_PATCH_KEYS,
    MemoryValueKind, PlanStep, ProposedChanges, ProtocolVersion, ROOT_FIELDS, Response,
    ResponseMode,
};
pub use weekly::{
    MAX_PROPOSALS, Proposal, ProposalKind, WEEKLY_SCHEMA_FILE, WeeklyProposals,
    parse_weekly_proposals, render_weekly_schema, weekly_schema, weekly_schema_text,
};
