//! Rules about what each kind must carry: content, patch, edits, line ranges, and their sizes.

use papayu_protocol::{Action, ActionKind, ErrorCode, ProtocolVersion};

use super::action::{check_base, check_binary};
use super::{MAX_EDIT_BYTES, MAX_EDITS, Sink};
use crate::content::find_placeholder;
use crate::formats::check_patch_shape;
use crate::path::RelPath;
use crate::policy::Policy;

pub(super) fn check_shape(
    sink: &mut Sink<'_>,
    i: usize,
    action: &Action,
    path: Option<&RelPath>,
    version: ProtocolVersion,
    policy: &Policy,
) {
    let limits = policy.config();
    let payload = action.payload_bytes() as u64;
    if payload > limits.max_file_bytes {
        sink.action(
            i,
            ErrorCode::ContentTooLarge,
            format!(
                "this action carries {payload} bytes; the limit for one file is {}",
                limits.max_file_bytes
            ),
        );
    }
    match action.kind {
        ActionKind::CreateFile | ActionKind::UpdateFile => match action.content.as_deref() {
            None => sink.field(
                i,
                "content",
                ErrorCode::ContentRequired,
                format!("{} needs `content`", action.kind),
            ),
            Some("") if version == ProtocolVersion::V1 => sink.field(
                i,
                "content",
                ErrorCode::ContentRequired,
                "protocol v1 treats empty `content` as missing; send the full file content",
            ),
            Some(content) => {
                if !check_binary(sink, i, "content", content) && policy.config().reject_placeholders
                {
                    let ext = path.and_then(RelPath::extension).unwrap_or("");
                    if let Some((line, text)) = find_placeholder(content, ext) {
                        sink.field(
                            i,
                            "content",
                            ErrorCode::PlaceholderContent,
                            format!(
                                "line {line} `{}` elides code; {} replaces the whole file, so send the complete content (or use a patch/edit action)",
                                text.trim(),
                                action.kind
                            ),
                        );
                    }
                }
            }
        },
        ActionKind::PatchFile => {
            match action.patch.as_deref() {
                None => sink.field(
                    i,
                    "patch",
                    ErrorCode::PatchRequired,
                    "PATCH_FILE needs `patch`, a unified diff",
                ),
                Some(p) if p.trim().is_empty() => sink.field(
                    i,
                    "patch",
                    ErrorCode::PatchRequired,
                    "`patch` is empty; send a unified diff",
                ),
                Some(p) => {
                    if !check_binary(sink, i, "patch", p)
                        && let Err(e) = check_patch_shape(p)
                    {
                        sink.field(i, "patch", ErrorCode::PatchNotUnified, e.to_string());
                    }
                }
            }
            check_base(sink, i, action);
        }
        ActionKind::EditFile => {
            check_edits(sink, i, action);
            check_base(sink, i, action);
        }
        ActionKind::ReplaceRange => {
            match action.content.as_deref() {
                None => sink.field(
                    i,
                    "content",
                    ErrorCode::ContentRequired,
                    "REPLACE_RANGE needs `content`, the replacement lines (empty to delete the range)",
                ),
                Some(c) => {
                    check_binary(sink, i, "content", c);
                }
            }
            match (action.start_line, action.end_line) {
                (None, _) | (_, None) => sink.action(
                    i,
                    ErrorCode::RangeInvalid,
                    "REPLACE_RANGE needs both `start_line` and `end_line` (1-based, inclusive)",
                ),
                (Some(0), _) => sink.field(
                    i,
                    "start_line",
                    ErrorCode::RangeInvalid,
                    "`start_line` is 1-based; 0 is not a line",
                ),
                (Some(s), Some(e)) if e < s => sink.field(
                    i,
                    "end_line",
                    ErrorCode::RangeInvalid,
                    format!("`end_line` {e} is before `start_line` {s}; the range is inclusive"),
                ),
                _ => {}
            }
            check_base(sink, i, action);
        }
        ActionKind::CreateDir
        | ActionKind::DeleteFile
        | ActionKind::DeleteDir
        | ActionKind::Unknown(_) => {}
    }
}

fn check_edits(sink: &mut Sink<'_>, i: usize, action: &Action) {
    let edits = match action.edits.as_deref() {
        None | Some([]) => {
            sink.field(
                i,
                "edits",
                ErrorCode::PatchRequired,
                "EDIT_FILE needs a non-empty `edits` list",
            );
            return;
        }
        Some(e) => e,
    };
    if edits.len() > MAX_EDITS {
        sink.field(
            i,
            "edits",
            ErrorCode::EditApplyFailed,
            format!("{} edits; the limit is {MAX_EDITS} per EDIT_FILE (send a PATCH_FILE or several actions)", edits.len()),
        );
    }
    let bytes: usize = edits.iter().map(|e| e.before.len() + e.after.len()).sum();
    if bytes > MAX_EDIT_BYTES {
        sink.field(
            i,
            "edits",
            ErrorCode::EditApplyFailed,
            format!(
                "the edits' before+after texts total {bytes} bytes; the limit is {MAX_EDIT_BYTES}"
            ),
        );
    }
    for (j, edit) in edits.iter().enumerate() {
        if edit.anchor.is_empty() {
            sink.field(
                i,
                &format!("edits/{j}/anchor"),
                ErrorCode::EditApplyFailed,
                format!("edit {j} has an empty `anchor`"),
            );
        }
        if edit.before.is_empty() {
            sink.field(
                i,
                &format!("edits/{j}/before"),
                ErrorCode::EditApplyFailed,
                format!("edit {j} has an empty `before`; quote the exact text to replace"),
            );
        }
        if edit.occurrence == Some(0) {
            sink.field(
                i,
                &format!("edits/{j}/occurrence"),
                ErrorCode::EditApplyFailed,
                format!("edit {j} has `occurrence` 0; occurrences are 1-based"),
            );
        }
        if check_binary(sink, i, &format!("edits/{j}/after"), &edit.after) {
            break;
        }
    }
}
