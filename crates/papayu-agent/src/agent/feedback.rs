//! What the next attempt of a verified fix is told about the change before it: why it was not
//! kept, the test output after it, and the change itself — as a unified diff for a provider over
//! the network, as the places it changed for the in-process model (D73).

use crate::error::AgentError;
use crate::verify::Verdict;

use super::views::ApplyPreview;

/// At most this many changed places are named; the rest are counted.
const MAX_PLACES: usize = 8;

/// How feedback shows a change that was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shown {
    /// Its unified diff.
    Diff,
    /// The places it changed, in the original's line numbers, without its lines: a small
    /// model shown a diff answers with one (D73).
    Places,
}

/// What the next attempt is told about the previous one.
pub(super) struct Feedback {
    pub(super) text: String,
}

impl Feedback {
    pub(super) fn rejected(number: u32, error: &AgentError) -> Feedback {
        Feedback {
            text: format!(
                "Attempt {number} was rejected before anything was applied ({}): {error}\n\
                 Answer again with a valid change.",
                error.code()
            ),
        }
    }

    pub(super) fn blocked(number: u32, preview: &ApplyPreview) -> Feedback {
        let problems: Vec<String> = preview
            .preview
            .files
            .iter()
            .filter_map(|f| {
                f.error
                    .as_ref()
                    .map(|e| format!("{} {}: {} {}", f.kind, f.path, e.code, e.message))
            })
            .collect();
        Feedback {
            text: format!(
                "Attempt {number} could not be applied:\n{}\nAnswer again with a change that applies to the files as shown.",
                problems.join("\n")
            ),
        }
    }

    pub(super) fn no_changes(number: u32) -> Feedback {
        Feedback {
            text: format!(
                "Attempt {number} answered that nothing needs to change, but the tests still fail. \
                 A change IS needed: return actions that fix the code."
            ),
        }
    }

    /// `diff` is the change both attempts proposed.
    pub(super) fn repeated(
        number: u32,
        earlier: u32,
        diff: &str,
        shown: Shown,
        verdict: &Verdict,
        digest: &str,
    ) -> Feedback {
        let reason = why(verdict);
        Feedback {
            text: format!(
                "Attempt {number} proposed EXACTLY the change attempt {earlier} tried, which was \
                 rolled back because {reason}; it was not applied again.\n\
                 {}\n\
                 Test output after it:\n{digest}\n\
                 The files are as shown in the context. Answer with a DIFFERENT fix: another \
                 line, another expression or another file.",
                show(diff, shown, "That change (never propose it again)")
            ),
        }
    }

    /// `diff` is the change the tests rejected.
    pub(super) fn not_verified(
        number: u32,
        diff: &str,
        shown: Shown,
        verdict: &Verdict,
        digest: &str,
    ) -> Feedback {
        let reason = why(verdict);
        Feedback {
            text: format!(
                "Attempt {number} was applied, tested and ROLLED BACK because {reason}.\n\
                 {}\n\
                 Test output after that change:\n{digest}\n\
                 The files are back as shown in the context. Answer with a different fix.",
                show(
                    diff,
                    shown,
                    "The change that was tried (do not repeat it as is)"
                )
            ),
        }
    }

    /// `diff` is the change that edited the tests at `path`.
    pub(super) fn edited_tests(
        number: u32,
        diff: &str,
        shown: Shown,
        verdict: &Verdict,
        path: &str,
    ) -> Feedback {
        let reason = why(verdict);
        Feedback {
            text: format!(
                "Attempt {number} was NOT applied because {reason}.\n\
                 {}\n\
                 Leave `{path}`'s tests as they are and change the code they test, so that the \
                 failing tests pass as written.",
                show(
                    diff,
                    shown,
                    "The change that was proposed (do not repeat it)"
                )
            ),
        }
    }
}

/// Why a change was not verified (empty for a verified one).
fn why(verdict: &Verdict) -> &str {
    match verdict {
        Verdict::NotVerified { reason, .. } => reason.as_str(),
        Verdict::Verified { .. } => "",
    }
}

/// The change as `shown`: its diff under `title`, or the sentence naming its places.
fn show(diff: &str, shown: Shown, title: &str) -> String {
    match shown {
        Shown::Diff => format!("{title}:\n{}", diff.trim_end()),
        Shown::Places => format!("What it changed: {}.", places(diff).join("; ")),
    }
}

/// A changed region of one file, in the original's 1-based line numbers.
#[derive(Debug, Default)]
struct Run {
    /// The first original line removed, or the line the new lines follow (0: the top).
    at: usize,
    removed: usize,
    added: usize,
}

impl Run {
    fn describe(&self) -> String {
        let lines = |n: usize| {
            if n == 1 {
                "1 line".to_owned()
            } else {
                format!("{n} lines")
            }
        };
        let span = || match self.removed {
            1 => format!("line {}", self.at),
            n => format!("lines {}-{}", self.at, self.at + n.saturating_sub(1)),
        };
        match (self.removed, self.added) {
            (0, added) if self.at == 0 => format!("{} added at the top", lines(added)),
            (0, added) => format!("{} added after line {}", lines(added), self.at),
            (_, 0) => format!("{} deleted", span()),
            (_, added) => format!("{} replaced by {}", span(), lines(added)),
        }
    }
}

/// The places `diff` (unified diffs with `---`/`+++` headers, one after the other, as the
/// preview makes them) changes: per file, its created/deleted state or its changed line runs.
/// Hunk lines are counted by their header, so a removed `-- comment` is not a file header.
fn places(diff: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut old_path: Option<&str> = None;
    let mut path = "";
    let mut runs: Vec<Run> = Vec::new();
    let mut run: Option<Run> = None;
    let mut created_lines: Option<usize> = None;
    // The original's line number of the next hunk line, and the hunk's lines still to come.
    let (mut line, mut old_left, mut new_left) = (0usize, 0usize, 0usize);
    for l in diff.lines() {
        if old_left > 0 || new_left > 0 {
            match l.as_bytes().first() {
                Some(b'+') => {
                    new_left = new_left.saturating_sub(1);
                    if let Some(n) = created_lines.as_mut() {
                        *n += 1;
                    } else {
                        run.get_or_insert(Run {
                            at: line - 1,
                            ..Run::default()
                        })
                        .added += 1;
                    }
                }
                Some(b'-') => {
                    old_left = old_left.saturating_sub(1);
                    let r = run.get_or_insert(Run {
                        at: line,
                        ..Run::default()
                    });
                    if r.removed == 0 {
                        r.at = line;
                    }
                    r.removed += 1;
                    line += 1;
                }
                Some(b'\\') => {}
                _ => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                    runs.extend(run.take());
                    line += 1;
                }
            }
            continue;
        }
        runs.extend(run.take());
        if let Some(rest) = l.strip_prefix("--- ") {
            flush(path, &mut runs, created_lines.take(), &mut out);
            path = "";
            old_path = Some(rest.trim());
        } else if let Some(rest) = l.strip_prefix("+++ ")
            && let Some(old) = old_path.take()
        {
            let new = rest.trim();
            if new == "/dev/null" {
                out.push(format!(
                    "deleted `{}`",
                    old.strip_prefix("a/").unwrap_or(old)
                ));
            } else {
                path = new.strip_prefix("b/").unwrap_or(new);
                created_lines = (old == "/dev/null").then_some(0);
            }
        } else if let Some((old, new)) = hunk_header(l) {
            // `-0,0` (an empty original) starts before line 1, like `-1,N` does.
            line = old.0.max(1);
            (old_left, new_left) = (old.1, new.1);
        }
    }
    runs.extend(run.take());
    flush(path, &mut runs, created_lines.take(), &mut out);
    if out.len() > MAX_PLACES {
        let more = out.len() - MAX_PLACES;
        out.truncate(MAX_PLACES);
        out.push(format!("and {more} more"));
    }
    out
}

/// `@@ -a,b +c,d @@` as `((a, b), (c, d))`; a missing count is 1.
fn hunk_header(l: &str) -> Option<((usize, usize), (usize, usize))> {
    let rest = l.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    Some((range(old)?, range(new)?))
}

/// Names one file's places into `out` (nothing for a file that is not being read).
fn flush(path: &str, runs: &mut Vec<Run>, created: Option<usize>, out: &mut Vec<String>) {
    if path.is_empty() {
        return;
    }
    if let Some(n) = created {
        out.push(format!("created `{path}` ({n} lines)"));
    } else if !runs.is_empty() {
        let described: Vec<String> = runs.iter().map(Run::describe).collect();
        out.push(format!("`{path}`: {}", described.join(", ")));
    }
    runs.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_line_is_named_by_its_number() {
        let diff = "--- a/calc.py\n+++ b/calc.py\n@@ -1,6 +1,6 @@\n def add(a, b):\n-    return a - b\n+    return a * b\n \n \n def mean(values):\n     return sum(values) / len(values)\n";
        assert_eq!(places(diff), ["`calc.py`: line 2 replaced by 1 line"]);
    }

    #[test]
    fn runs_of_several_files_are_named_in_order() {
        let diff = "--- a/a.py\n+++ b/a.py\n@@ -1,5 +1,4 @@\n x = 1\n+y = 2\n z = 3\n-a = 4\n-b = 5\n c = 6\n--- a/b.py\n+++ b/b.py\n@@ -10,4 +10,3 @@\n p\n-q\n r\n s\n";
        assert_eq!(
            places(diff),
            [
                "`a.py`: 1 line added after line 1, lines 3-4 deleted",
                "`b.py`: line 11 deleted"
            ]
        );
    }

    #[test]
    fn created_and_deleted_files_are_named_as_such() {
        let diff = "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        assert_eq!(
            places(diff),
            ["created `new.py` (2 lines)", "deleted `old.py`"]
        );
    }

    #[test]
    fn lines_added_before_the_first_are_added_at_the_top() {
        let diff = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n+import os\n x = 1\n y = 2\n\\ No newline at end of file\n";
        assert_eq!(places(diff), ["`m.py`: 1 line added at the top"]);
    }

    #[test]
    fn a_removed_line_that_looks_like_a_header_stays_a_removed_line() {
        let diff =
            "--- a/q.sql\n+++ b/q.sql\n@@ -1,3 +1,2 @@\n select 1;\n--- old note\n select 2;\n";
        assert_eq!(places(diff), ["`q.sql`: line 2 deleted"]);
    }

    #[test]
    fn many_places_are_counted_past_the_cap() {
        let diff: String = (0..MAX_PLACES + 3)
            .map(|i| format!("--- a/f{i}.py\n+++ b/f{i}.py\n@@ -1 +1 @@\n-a\n+b\n"))
            .collect();
        let named = places(&diff);
        assert_eq!(named.len(), MAX_PLACES + 1);
        assert_eq!(named[MAX_PLACES], "and 3 more");
    }

    #[test]
    fn the_diff_form_keeps_the_change_and_the_places_form_drops_its_lines() {
        let diff = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a * b\n";
        let as_diff = show(diff, Shown::Diff, "Tried");
        assert!(as_diff.starts_with("Tried:\n--- a/calc.py"), "{as_diff}");
        let as_places = show(diff, Shown::Places, "Tried");
        assert_eq!(
            as_places,
            "What it changed: `calc.py`: line 2 replaced by 1 line."
        );
        assert!(!as_places.contains("a * b"));
    }

    mod properties {
        use proptest::prelude::*;

        fn text() -> impl Strategy<Value = String> {
            proptest::collection::vec("(-- |\\+\\+ |@@ )?[a-c]{0,3}", 0..14)
                .prop_map(|lines| lines.iter().map(|l| format!("{l}\n")).collect())
        }

        /// A named run read back: (first original line, lines removed, lines added).
        fn read_back(run: &str) -> (usize, usize, usize) {
            let n: Vec<usize> = run
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|n| n.parse().ok())
                .collect();
            if run.ends_with("added at the top") {
                (0, 0, n[0])
            } else if run.contains("added after line") {
                (n[1], 0, n[0])
            } else if run.starts_with("lines ") {
                (n[0], n[1] - n[0] + 1, n.get(2).copied().unwrap_or(0))
            } else {
                (n[0], 1, n.get(1).copied().unwrap_or(0))
            }
        }

        proptest! {
            #[test]
            fn places_count_the_diffs_lines_in_the_originals_numbers(old in text(), new in text()) {
                let lines = similar::TextDiff::from_lines(&old, &new);
                let diff = lines
                    .unified_diff()
                    .context_radius(3)
                    .header("a/f", "b/f")
                    .to_string();
                let named = super::places(&diff);
                prop_assert_eq!(named.is_empty(), old == new, "{:?} for\n{}", named, diff);
                let (mut removed, mut added) = (0, 0);
                let last = old.lines().count();
                for place in &named {
                    let runs = place.strip_prefix("`f`: ").unwrap_or_default();
                    for run in runs.split(", ") {
                        let (at, r, a) = read_back(run);
                        prop_assert!(at + r.max(1) - 1 <= last, "{:?} (original has {} lines)", run, last);
                        removed += r;
                        added += a;
                    }
                }
                // The same diff's own count (a removed `-- x` reads `--- x` in the text).
                let (minus, plus) = lines.ops().iter().fold((0, 0), |(m, p), op| {
                    match op.tag() {
                        similar::DiffTag::Equal => (m, p),
                        _ => (m + op.old_range().len(), p + op.new_range().len()),
                    }
                });
                prop_assert_eq!((removed, added), (minus, plus), "{:?} for\n{}", named, diff);
            }

            #[test]
            fn any_text_is_read_without_a_panic(diff in "[-+@ a-c,0-9/\n\\\\]{0,200}") {
                let _ = super::places(&diff);
            }
        }
    }
}
