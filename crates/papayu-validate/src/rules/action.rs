//! Rules about one action on its own: its kind, its fields, its path against the policy and its
//! base hash.

use papayu_protocol::{Action, ActionKind, ErrorCode, ProtocolVersion};

use super::Sink;
use crate::content::pseudo_binary_reason;
use crate::path::RelPath;
use crate::policy::Policy;

fn kind_list(version: ProtocolVersion) -> String {
    version
        .kinds()
        .iter()
        .map(ActionKind::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn check_kind(
    sink: &mut Sink<'_>,
    i: usize,
    action: &Action,
    version: ProtocolVersion,
) -> bool {
    match &action.kind {
        ActionKind::Unknown(name) if name.is_empty() => {
            sink.field(
                i,
                "kind",
                ErrorCode::UnknownKind,
                format!(
                    "the action has no `kind`; use one of {}",
                    kind_list(version)
                ),
            );
            false
        }
        ActionKind::Unknown(name) => {
            sink.field(
                i,
                "kind",
                ErrorCode::UnknownKind,
                format!("unknown kind `{name}`; use one of {}", kind_list(version)),
            );
            false
        }
        kind if !version.allows(kind) => {
            sink.field(
                i,
                "kind",
                ErrorCode::UnknownKind,
                format!(
                    "{kind} is not part of protocol {version}; use one of {}",
                    kind_list(version)
                ),
            );
            false
        }
        _ => true,
    }
}

pub(super) fn check_path_policy(
    sink: &mut Sink<'_>,
    i: usize,
    action: &Action,
    path: &RelPath,
    policy: &Policy,
) {
    if let Some(pattern) = policy.protected_by(path) {
        sink.action(
            i,
            ErrorCode::ProtectedPath,
            format!("`{path}` is protected (`{pattern}`); papayu never touches it"),
        );
        // The stronger rule alone: an extension complaint would invite renaming the secret.
        return;
    }
    if !action.kind.is_file_writer() {
        return;
    }
    if let Some(dir) = policy.forbidden_dir(path) {
        sink.action(
            i,
            ErrorCode::ForbiddenPath,
            format!("`{path}` lies under `{dir}/`, which holds generated or vendored files; change the sources instead"),
        );
    } else if !policy.is_allowed_file_name(path) {
        sink.action(
            i,
            ErrorCode::ForbiddenPath,
            match path.extension() {
                Some(ext) => {
                    format!("`.{ext}` files are not in the project's extension allow-list")
                }
                None => format!(
                    "`{}` has no extension and is not a known extension-less file name",
                    path.file_name()
                ),
            },
        );
    }
}

pub(super) fn check_fields(
    sink: &mut Sink<'_>,
    i: usize,
    action: &Action,
    version: ProtocolVersion,
) {
    if !version.denies_foreign_action_fields() {
        return;
    }
    let allowed = action.kind.fields();
    for field in action.present_fields() {
        if !allowed.contains(&field) {
            let expected = if allowed.is_empty() {
                "none".to_owned()
            } else {
                allowed.join(", ")
            };
            sink.field(
                i,
                field,
                ErrorCode::FieldNotAllowed,
                format!("`{field}` does not belong to {} (its fields: kind, path, {expected}); remove it", action.kind),
            );
        }
    }
}

pub(super) fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub(super) fn check_base(sink: &mut Sink<'_>, i: usize, action: &Action) {
    match &action.base_sha256 {
        None => sink.field(
            i,
            "base_sha256",
            ErrorCode::BaseSha256Invalid,
            format!(
                "{} needs `base_sha256`, the sha256 of the file as it was sent to you",
                action.kind
            ),
        ),
        Some(h) if !is_sha256_hex(h) => sink.field(
            i,
            "base_sha256",
            ErrorCode::BaseSha256Invalid,
            "`base_sha256` must be 64 lowercase hex digits (the sha256 shown with the file)",
        ),
        Some(_) => {}
    }
}

pub(super) fn check_binary(sink: &mut Sink<'_>, i: usize, field: &str, text: &str) -> bool {
    match pseudo_binary_reason(text) {
        Some(reason) => {
            sink.field(i, field, ErrorCode::PseudoBinary, reason);
            true
        }
        None => false,
    }
}
