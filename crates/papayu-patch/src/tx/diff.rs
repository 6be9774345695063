//! The preview's unified diffs, bounded in time whatever the files: pure computation, no I/O.
//!
//! Myers' algorithm (`similar`'s default) takes time proportional to the file's length times
//! the size of the change: one UPDATE_FILE replacing a 500 000-line file took 453 s, and
//! `apply-plan` previews first. Every diff of one preview shares a deadline: until it, the
//! diffs are minimal (the same as before); past it, what is left of a changed region is shown
//! as removed, then added — still a correct diff of the two texts, only not the smallest — and
//! the rest of the preview costs time linear in the text.

use std::time::{Duration, Instant};

/// How long one preview may spend on finding minimal diffs, all files together.
pub(crate) const DIFF_BUDGET: Duration = Duration::from_millis(400);

/// The unified diff (3 lines of context) of `old` → `new` (`None`: absent), minimal until
/// `deadline`.
pub(crate) fn unified_diff(
    path: &str,
    old: Option<&[u8]>,
    new: Option<&[u8]>,
    deadline: Instant,
) -> String {
    let old_text = old.map(String::from_utf8_lossy).unwrap_or_default();
    let new_text = new.map(String::from_utf8_lossy).unwrap_or_default();
    if old_text == new_text {
        return String::new();
    }
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .deadline(deadline)
        .diff_lines(old_text.as_ref(), new_text.as_ref());
    let a = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_owned()
    };
    let b = if new.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".to_owned()
    };
    diff.unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string()
}
