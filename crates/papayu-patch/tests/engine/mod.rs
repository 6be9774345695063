//! Tests of the editing engines (SPEC §5.3): data-driven checks, scenario fixtures, properties.

mod compute;
mod fixtures;
mod formats;
mod props;
mod text;

use papayu_patch::engine::{HunkTier, apply_patch_to_text};
use papayu_protocol::ErrorCode;

/// Apply `patch` to `text`; expect `after` and the given tier per hunk.
#[track_caller]
pub(crate) fn check(text: &str, patch: &str, after: &str, tiers: &[HunkTier]) {
    let out = match apply_patch_to_text(text, patch) {
        Ok(out) => out,
        Err(e) => panic!("expected success, got {}: {e}", e.code()),
    };
    assert_eq!(out.text, after, "patched text");
    let got: Vec<HunkTier> = out.hunks.iter().map(|h| h.tier).collect();
    assert_eq!(got, tiers, "tiers");
}

/// Apply `patch` to `text`; expect rejection with `code` and a message containing each of `needles`.
#[track_caller]
pub(crate) fn check_err(text: &str, patch: &str, code: ErrorCode, needles: &[&str]) {
    match apply_patch_to_text(text, patch) {
        Ok(out) => panic!("expected {code}, got success: {:?}", out.text),
        Err(e) => {
            assert_eq!(e.code(), code, "{e}");
            let msg = e.to_string();
            for n in needles {
                assert!(msg.contains(n), "message {msg:?} lacks {n:?}");
            }
        }
    }
}
