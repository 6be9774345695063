//! The parts of a change the tests rejected (D65). A small model asked for a whole new file
//! often writes the right fix and, beside it, changes lines it should have copied: an import
//! dropped, a name restyled. The tests then reject the whole change, fix included. This room
//! splits such a change (UPDATE_FILEs only) into its hunks against the files as they are and
//! proposes smaller sets of them, most promising first: the substantive hunks without the
//! cosmetic ones (quotes, spaces, blank lines, a trailing comma), then each substantive hunk
//! alone (hunks in a file's preamble — before its first block — last; none that wipes most of
//! its file), then all substantive
//! hunks but one. Each set is a plan document of UPDATE_FILEs, which the caller validates,
//! previews and tests like any change; so a part is kept only when the tests verify it. Reads
//! the project's files; writes nothing.

use std::ops::Range;

use camino::Utf8Path;
use papayu_protocol::ActionKind;
use papayu_validate::ValidatedPlan;
use serde_json::{Value, json};
use similar::{Algorithm, DiffOp, capture_diff_slices};

/// Changes with more substantive hunks than this are rewrites, not a fix beside some drift:
/// their parts are not tried.
pub(crate) const MAX_SUBSTANTIVE: usize = 6;

/// One maximal run of changed lines of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    /// Index of the file among the change's actions.
    file: usize,
    /// The lines of the file it replaces (0-based, end exclusive).
    old: Range<usize>,
    /// The lines of the new content that replace them.
    new: Range<usize>,
    /// It changes only spacing, quote style, blank lines or trailing commas.
    cosmetic: bool,
    /// It lies before the file's first line that opens a block (imports, constants).
    preamble: bool,
    /// It removes most of its file and puts little back: alone, it cannot be a fix.
    wipes: bool,
    /// The lines it removes stay, its new lines going in before them: the reading of a hunk
    /// that overwrote a line or two it should have kept (D65).
    keeps: bool,
}

/// One file of the change: its bytes now and the content the change gives it.
#[derive(Debug)]
struct FileChange {
    action: papayu_protocol::Action,
    old: Vec<String>,
    new: Vec<String>,
}

/// A smaller set of a change's hunks, as a plan document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    /// The hunks kept, 1-based in file order.
    pub(crate) hunks: Vec<usize>,
    /// Of those, the ones whose removed lines are kept too (their new lines inserted before).
    pub(crate) keeping: Vec<usize>,
    /// Hunks of the whole change.
    pub(crate) of: usize,
    /// `{"actions": [UPDATE_FILE …]}` with the files these hunks change.
    pub(crate) document: String,
}

impl Part {
    /// `hunks 1, 3 of 4 of <parent trace id>`, and which hunks keep their replaced lines.
    pub(crate) fn describe(&self, parent: &str) -> String {
        let list = |v: &[usize]| {
            v.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut text = format!("hunks {} of {} of {parent}", list(&self.hunks), self.of);
        if !self.keeping.is_empty() {
            text.push_str(&format!(
                ", keeping the lines hunk(s) {} replaced",
                list(&self.keeping)
            ));
        }
        text
    }
}

/// At most `max` parts of `plan` to try after the tests rejected it, most promising first;
/// none when the plan holds anything but UPDATE_FILEs of readable UTF-8 files, or more than
/// [`MAX_SUBSTANTIVE`] substantive hunks; a one-hunk change only has its keeping reading (a
/// hunk that overwrote a line or two with new ones unlike them, tried with those lines kept).
pub(crate) fn parts(root: &Utf8Path, plan: &ValidatedPlan, max: usize) -> Vec<Part> {
    if max == 0 {
        return Vec::new();
    }
    let mut files = Vec::new();
    for a in plan.actions() {
        if *a.kind() != ActionKind::UpdateFile {
            return Vec::new();
        }
        let (Some(content), Ok(bytes)) = (
            a.action.content.as_deref(),
            fs_err::read(root.join(a.path.as_str())),
        ) else {
            return Vec::new();
        };
        let Ok(text) = String::from_utf8(bytes) else {
            return Vec::new();
        };
        let mut action = a.action.clone();
        action.path = a.path.as_str().to_owned();
        files.push(FileChange {
            action,
            old: lines(&text),
            new: lines(content),
        });
    }
    let hunks: Vec<Hunk> = files
        .iter()
        .enumerate()
        .flat_map(|(i, f)| hunks_of(i, &f.old, &f.new))
        .collect();
    let substantive: Vec<usize> = (0..hunks.len()).filter(|&h| !hunks[h].cosmetic).collect();
    if substantive.is_empty() || substantive.len() > MAX_SUBSTANTIVE {
        return Vec::new();
    }
    // A set is hunk indices; an index past the hunks is the keeping reading of hunk
    // `index - hunks.len()`.
    let n = hunks.len();
    let mut sets: Vec<Vec<usize>> = Vec::new();
    if substantive.len() < hunks.len() {
        sets.push(substantive.clone());
    }
    if substantive.len() >= 2 {
        let mut alone = substantive.clone();
        // A hunk that wipes most of its file is not tried alone. Stable: the body's hunks
        // first, then the preamble's, each in file order.
        alone.retain(|&h| !hunks[h].wipes);
        alone.sort_by_key(|&h| hunks[h].preamble);
        sets.extend(alone.into_iter().map(|h| vec![h]));
    }
    if substantive.len() >= 3 {
        sets.extend(
            substantive
                .iter()
                .map(|&drop| substantive.iter().copied().filter(|&h| h != drop).collect()),
        );
    }
    // A hunk that overwrote a line or two with unrelated new ones: the same change with those
    // lines kept.
    for &h in &substantive {
        let f = &files[hunks[h].file];
        if overwrites(&f.old[hunks[h].old.clone()], &f.new[hunks[h].new.clone()]) {
            sets.push(
                substantive
                    .iter()
                    .map(|&k| if k == h { n + h } else { k })
                    .collect(),
            );
        }
    }
    if n < 2 {
        sets.retain(|set| set.iter().any(|&k| k >= n));
    }
    let keeping = |k: usize| -> Hunk {
        let mut h = hunks[k % n].clone();
        h.keeps = k >= n;
        h
    };
    let mut out: Vec<Part> = Vec::new();
    for set in sets {
        if out.len() == max {
            break;
        }
        let hunk_numbers: Vec<usize> = set.iter().map(|h| h % n + 1).collect();
        let keeps: Vec<usize> = set.iter().filter(|&&h| h >= n).map(|h| h % n + 1).collect();
        if out
            .iter()
            .any(|p| p.hunks == hunk_numbers && p.keeping == keeps)
        {
            continue;
        }
        let owned: Vec<Hunk> = set.iter().map(|&h| keeping(h)).collect();
        let chosen: Vec<&Hunk> = owned.iter().collect();
        let actions: Vec<Value> = files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let mine: Vec<&Hunk> = chosen.iter().copied().filter(|h| h.file == i).collect();
                if mine.is_empty() {
                    return None;
                }
                let mut action = f.action.clone();
                action.content = Some(splice(&f.old, &f.new, &mine));
                serde_json::to_value(action).ok()
            })
            .collect();
        if actions.is_empty() {
            continue;
        }
        out.push(Part {
            hunks: hunk_numbers,
            keeping: keeps,
            of: hunks.len(),
            document: json!({ "actions": actions }).to_string(),
        });
    }
    out
}

/// The text's lines, each with its line ending.
fn lines(text: &str) -> Vec<String> {
    text.split_inclusive('\n').map(str::to_owned).collect()
}

/// The hunks that turn `old` into `new`.
fn hunks_of(file: usize, old: &[String], new: &[String]) -> Vec<Hunk> {
    let first_block = old.iter().position(|l| opens_block(l)).unwrap_or(old.len());
    let mut out: Vec<Hunk> = Vec::new();
    let mut open: Option<(Range<usize>, Range<usize>)> = None;
    // The ops' own indices are not always consistent (similar 2.7's Myers can place a delete
    // after the equal run that follows it); their order and lengths are, so the positions are
    // counted here.
    let (mut at_old, mut at_new) = (0, 0);
    for op in capture_diff_slices(Algorithm::Myers, old, new) {
        let (o_len, n_len) = (op.old_range().len(), op.new_range().len());
        let (o, n) = (at_old..at_old + o_len, at_new..at_new + n_len);
        (at_old, at_new) = (o.end, n.end);
        if let DiffOp::Equal { .. } = op {
            out.extend(
                open.take()
                    .map(|(o, n)| hunk(file, old, new, o, n, first_block)),
            );
            continue;
        }
        // Adjacent changes (a delete and an insert) form one hunk.
        open = Some(match open.take() {
            Some((po, pn)) => (po.start..o.end, pn.start..n.end),
            None => (o, n),
        });
    }
    if (at_old, at_new) != (old.len(), new.len()) {
        return Vec::new();
    }
    out.extend(open.map(|(o, n)| hunk(file, old, new, o, n, first_block)));
    out
}

fn hunk(
    file: usize,
    old: &[String],
    new: &[String],
    o: Range<usize>,
    n: Range<usize>,
    first_block: usize,
) -> Hunk {
    Hunk {
        file,
        cosmetic: normal(&old[o.clone()]) == normal(&new[n.clone()]),
        preamble: o.end <= first_block,
        wipes: 2 * o.len() > old.len() && 2 * n.len() < o.len(),
        keeps: false,
        old: o,
        new: n,
    }
}

/// New lines that took the place of one or two old ones they are no edit of (they share less
/// than half their start): the model overwrote lines it meant to keep.
fn overwrites(old: &[String], new: &[String]) -> bool {
    let prefix = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    (1..=2).contains(&old.len())
        && !new.is_empty()
        && old.iter().all(|o| {
            let o = o.trim();
            !o.is_empty()
                && new.iter().all(|n| {
                    let n = n.trim();
                    2 * prefix(o, n) < o.chars().count().max(n.chars().count())
                })
        })
}

/// A line that opens a block: it ends with `{` or `:` (a comment aside).
fn opens_block(line: &str) -> bool {
    let code = line.trim_end();
    code.ends_with('{') || (code.ends_with(':') && !code.trim_start().starts_with('#'))
}

/// Lines without what does not change their meaning in the usual languages: whitespace,
/// the choice of `'` or `"`, a comma right before a closing bracket.
fn normal(lines: &[String]) -> String {
    let squeezed: String = lines
        .iter()
        .flat_map(|l| l.chars())
        .filter(|c| !c.is_whitespace())
        .map(|c| if c == '\'' { '"' } else { c })
        .collect();
    squeezed
        .replace(",)", ")")
        .replace(",]", "]")
        .replace(",}", "}")
}

/// `old` with the chosen hunks (all of one file, any order) replaced by their new lines.
fn splice(old: &[String], new: &[String], chosen: &[&Hunk]) -> String {
    let mut sorted: Vec<&Hunk> = chosen.to_vec();
    sorted.sort_by_key(|h| h.old.start);
    let mut out = String::new();
    let mut at = 0;
    for h in sorted {
        old[at..h.old.start].iter().for_each(|l| out.push_str(l));
        new[h.new.clone()].iter().for_each(|l| out.push_str(l));
        if h.keeps {
            old[h.old.clone()].iter().for_each(|l| out.push_str(l));
        }
        at = h.old.end;
    }
    old[at..].iter().for_each(|l| out.push_str(l));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(text: &str) -> Vec<String> {
        lines(text)
    }

    const PRICING: &str = "from decimal import ROUND_HALF_UP, Decimal\n\nCENT = Decimal(\"0.01\")\n\n\ndef money(v):\n    return v.quantize(CENT, rounding=ROUND_HALF_UP)\n\n\ndef total(sub, discount):\n    taxable = sub\n    return money(taxable)\n";

    /// A fix (`taxable = sub - discount`) beside a dropped import and restyled quotes.
    const DRIFTED: &str = "from decimal import Decimal\n\nCENT = Decimal('0.01')\n\n\ndef money(v):\n    return v.quantize(CENT, rounding=ROUND_HALF_UP)\n\n\ndef total(sub, discount):\n    taxable = sub - discount\n    return money(taxable)\n";

    #[test]
    fn hunks_are_found_and_classified() {
        let h = hunks_of(0, &strings(PRICING), &strings(DRIFTED));
        assert_eq!(h.len(), 3, "{h:?}");
        assert!(!h[0].cosmetic && h[0].preamble, "the import: {:?}", h[0]);
        assert!(h[1].cosmetic && h[1].preamble, "the quotes: {:?}", h[1]);
        assert!(!h[2].cosmetic && !h[2].preamble, "the fix: {:?}", h[2]);
    }

    #[test]
    fn parts_keep_the_fix_without_the_drift_and_the_body_before_the_preamble() {
        let old = strings(PRICING);
        let new = strings(DRIFTED);
        let h = hunks_of(0, &old, &new);
        // What `parts` proposes, in order: both substantive hunks, then the fix alone, then
        // the import alone.
        let fix_alone = splice(&old, &new, &[&h[2]]);
        assert_eq!(
            fix_alone,
            PRICING.replace("taxable = sub\n", "taxable = sub - discount\n")
        );
        let without_cosmetic = splice(&old, &new, &[&h[2], &h[0]]);
        assert!(without_cosmetic.contains("CENT = Decimal(\"0.01\")"));
        assert!(without_cosmetic.starts_with("from decimal import Decimal\n"));
    }

    #[test]
    fn whitespace_quotes_and_trailing_commas_are_cosmetic_names_are_not() {
        let n = |t: &str| normal(&strings(t));
        assert_eq!(n("f(a, 'x',)\n"), n("f(a,  \"x\")\n"));
        assert_eq!(n("\n\n"), n(""));
        assert_ne!(n("import a, b\n"), n("import a\n"));
        assert_ne!(n("x = a - b\n"), n("x = a + b\n"));
    }

    #[test]
    fn a_block_opener_ends_with_a_brace_or_a_colon() {
        assert!(opens_block("fn main() {\n"));
        assert!(opens_block("def f(x):\n"));
        assert!(!opens_block("# note:\n"));
        assert!(!opens_block("use std::io;\n"));
    }

    #[test]
    fn a_hunk_that_wipes_its_file_is_marked() {
        let h = hunks_of(0, &strings(PRICING), &strings("import x\n"));
        assert_eq!(h.len(), 1);
        assert!(h[0].wipes);
        let h = hunks_of(0, &strings(PRICING), &strings(DRIFTED));
        assert!(h.iter().all(|h| !h.wipes));
    }

    #[test]
    fn a_hunk_that_overwrote_a_line_is_also_tried_with_the_line_kept() {
        let old = strings(
            "def get(self, key):\n    value = self.d[key]\n    self.hits += 1\n    return value\n",
        );
        let new = strings(
            "def get(self, key):\n    value = self.d[key]\n    self.d.move_to_end(key)\n    return value\n",
        );
        let h = hunks_of(0, &old, &new);
        assert_eq!(h.len(), 1);
        assert!(overwrites(&old[h[0].old.clone()], &new[h[0].new.clone()]));
        let mut keep = h[0].clone();
        keep.keeps = true;
        assert_eq!(
            splice(&old, &new, &[&keep]),
            "def get(self, key):\n    value = self.d[key]\n    self.d.move_to_end(key)\n    self.hits += 1\n    return value\n"
        );
        // An edit of the line is not an overwrite.
        assert!(!overwrites(
            &strings("    return a - b\n"),
            &strings("    return a + b\n")
        ));
    }

    #[test]
    fn adjacent_changes_form_one_hunk() {
        let h = hunks_of(0, &strings("a\nb\nc\nd\n"), &strings("a\nB\nx\nC\nd\n"));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!((h[0].old.clone(), h[0].new.clone()), (1..3, 1..4));
    }

    mod props {
        use proptest::prelude::*;

        fn text() -> impl Strategy<Value = String> {
            proptest::collection::vec("[ ]{0,4}[a-c'\"(),]{0,6}", 0..16)
                .prop_map(|v| v.iter().map(|l| format!("{l}\n")).collect())
        }

        proptest! {
            #[test]
            fn all_hunks_give_the_new_text_and_none_the_old(old in text(), new in text()) {
                let (o, n) = (super::lines(&old), super::lines(&new));
                let h = super::hunks_of(0, &o, &n);
                let all: Vec<&super::Hunk> = h.iter().collect();
                prop_assert_eq!(super::splice(&o, &n, &all), new.clone());
                prop_assert_eq!(super::splice(&o, &n, &[]), old.clone());
                // Hunks are disjoint and in order.
                for w in h.windows(2) {
                    prop_assert!(w[0].old.end <= w[1].old.start);
                    prop_assert!(w[0].new.end <= w[1].new.start);
                }
            }
        }
    }
}
