//! The categories: one real diff turned into one case (the patch a model might send, the file it
//! is applied to, and the bytes a correct apply produces — or `None` when it must be rejected).

use crate::corpus::{Diff, Hunk, Triple};

/// splitmix64: deterministic, dependency-free.
pub struct Rng(pub u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

pub struct Case {
    pub repo: String,
    /// `commit:path` of the real diff.
    pub origin: String,
    pub before: Vec<u8>,
    pub patch: String,
    /// `None`: the patch must be rejected.
    pub expected: Option<Vec<u8>>,
}

/// Unified-diff categories: every tool runs them.
pub const UNIFIED: [&str; 20] = [
    "clean",
    "wrong_line_numbers",
    "wrong_counts",
    "missing_context",
    "extra_context",
    "whitespace_drift",
    "partial_ws_drift",
    "crlf_file_lf_patch",
    "lf_file_crlf_patch",
    "eol_changing_commit",
    "missing_no_newline_marker",
    "no_eof_marker_at_eof",
    "hunks_out_of_order",
    "phantom_context_line",
    "interior_context_missing",
    "dup_context_with_hint",
    "dup_context_without_hint",
    "conflicting_edit",
    "zero_context_wrong_lines",
    "zero_context_conflict",
];

/// The same real diffs in the edit formats models are trained on: papayu only (no other tool
/// reads them).
pub const FORMATS: [&str; 4] = [
    "codex_envelope",
    "codex_unicode_drift",
    "search_replace",
    "search_replace_ws_drift",
];

/// Categories whose every case must be rejected.
pub const MUST_REJECT: [&str; 2] = ["conflicting_edit", "zero_context_conflict"];

fn crlf(s: &str) -> String {
    s.replace('\n', "\r\n")
}

fn significant(s: &str) -> bool {
    s.trim().chars().filter(|c| c.is_alphanumeric()).count() >= 3
}

/// A context line with a change before and after it in the same hunk.
fn interior_context(h: &Hunk) -> Vec<usize> {
    let first = h.lines.iter().position(|l| !l.starts_with(' '));
    let last = h.lines.iter().rposition(|l| !l.starts_with(' '));
    match (first, last) {
        (Some(a), Some(b)) => (a + 1..b)
            .filter(|&i| h.lines[i].starts_with(' '))
            .collect(),
        _ => Vec::new(),
    }
}

/// Change one line's whitespace the way a model copying it might.
fn drift_ws(l: &mut String, rng: &mut Rng) {
    let body = l[1..].to_owned();
    let lead = body.len() - body.trim_start().len();
    let new = match rng.below(4) {
        0 => format!(" {body}"),
        1 if lead > 0 => body[1..].to_owned(),
        2 if body.starts_with('\t') => format!("    {}", &body[1..]),
        2 if body.starts_with("    ") => format!("\t{}", &body[4..]),
        _ if body.ends_with(' ') || body.ends_with('\t') => body.trim_end().to_owned(),
        _ => format!("{body}  "),
    };
    *l = format!("{}{new}", &l[..1]);
}

fn line_count(s: &str) -> usize {
    s.split_inclusive('\n').count()
}

/// 0-based old and new line index of each body line of `h` (for context lines both exist).
fn positions(h: &Hunk) -> Vec<(usize, usize)> {
    let (mut o, mut n) = (h.os.saturating_sub(1), h.ns.saturating_sub(1));
    if h.oc == 0 {
        o = h.os;
    }
    if h.nc == 0 {
        n = h.ns;
    }
    h.lines
        .iter()
        .map(|l| {
            let at = (o, n);
            match l.as_bytes().first() {
                Some(b' ') => {
                    o += 1;
                    n += 1;
                }
                Some(b'-') => o += 1,
                Some(b'+') => n += 1,
                _ => {}
            }
            at
        })
        .collect()
}

fn codex_envelope(t: &Triple, d: &Diff) -> Option<String> {
    if d.hunks
        .iter()
        .any(|h| h.lines.iter().any(|l| l.starts_with('\\')))
    {
        return None;
    }
    let n = line_count(&t.before);
    let mut s = String::from("*** Begin Patch\n*** Update File: f\n");
    for h in &d.hunks {
        let section = h.section.trim();
        // git cuts the function context at 80 bytes; a cut line names no line of the file
        if section.is_empty() || section.len() >= 79 {
            s.push_str("@@\n");
        } else {
            s.push_str(&format!("@@ {section}\n"));
        }
        for l in &h.lines {
            s.push_str(l);
            s.push('\n');
        }
        if (h.os + h.oc).saturating_sub(1) == n {
            s.push_str("*** End of File\n");
        }
    }
    s.push_str("*** End Patch\n");
    Some(s)
}

fn search_replace(d: &Diff, drift: Option<&mut Rng>) -> Option<String> {
    if d.hunks
        .iter()
        .any(|h| h.lines.iter().any(|l| l.starts_with('\\')))
    {
        return None;
    }
    let mut rng = drift;
    let mut drifted = false;
    let mut s = String::from("f\n```\n");
    for h in &d.hunks {
        let (mut old, mut new) = (String::new(), String::new());
        for l in &h.lines {
            let mut body = l[1..].to_owned();
            if l.starts_with(' ')
                && let Some(r) = rng.as_deref_mut()
                && !body.trim().is_empty()
                && r.below(3) == 0
            {
                // the model copied an unchanged line with different trailing whitespace
                body = if body.ends_with(' ') {
                    body.trim_end().to_owned()
                } else {
                    format!("{body} ")
                };
                drifted = true;
            }
            if !l.starts_with('+') {
                old.push_str(&body);
                old.push('\n');
            }
            if !l.starts_with('-') {
                new.push_str(&body);
                new.push('\n');
            }
        }
        s.push_str(&format!(
            "<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n"
        ));
    }
    s.push_str("```\n");
    (rng.is_none() || drifted).then_some(s)
}

/// Swap ASCII punctuation for typographic punctuation (the file's copy of a context line).
fn typographic(line: &str) -> Option<String> {
    let mut out = String::with_capacity(line.len() + 8);
    let mut open = true;
    let mut changed = false;
    let chars: Vec<char> = line.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '"' => {
                out.push(if open { '\u{201C}' } else { '\u{201D}' });
                open = !open;
                changed = true;
            }
            '\'' => {
                out.push('\u{2019}');
                changed = true;
            }
            '-' if chars.get(i + 1) == Some(&' ') && i > 0 && chars[i - 1] == ' ' => {
                out.push('\u{2013}');
                changed = true;
            }
            _ => out.push(c),
        }
    }
    changed.then_some(out)
}

pub fn case(t: &Triple, cat: &str, rng: &mut Rng) -> Option<Case> {
    let make = |before: String, patch: String, expected: Option<String>| {
        Some(Case {
            repo: t.repo.clone(),
            origin: format!("{}:{}", &t.commit[..12], t.path),
            before: before.into_bytes(),
            patch,
            expected: expected.map(String::into_bytes),
        })
    };
    let plain = |diff: &Diff| make(t.before.clone(), diff.render(), Some(t.after.clone()));
    let mut d = t.diff.clone();
    match cat {
        "clean" => plain(&d),
        "wrong_line_numbers" => {
            for h in &mut d.hunks {
                let delta = (1 + rng.below(40)) as isize * if rng.below(2) == 0 { -1 } else { 1 };
                h.os = h.os.saturating_add_signed(delta).max(1);
                h.ns = h.ns.saturating_add_signed(delta).max(1);
            }
            plain(&d)
        }
        "wrong_counts" => {
            for h in &mut d.hunks {
                h.oc += 1 + rng.below(3);
                h.nc = h.nc.saturating_sub(1 + rng.below(2));
            }
            plain(&d)
        }
        "missing_context" => {
            let mut changed = false;
            for h in &mut d.hunks {
                let lead = h.lines.iter().take_while(|l| l.starts_with(' ')).count();
                let trail = h
                    .lines
                    .iter()
                    .rev()
                    .take_while(|l| l.starts_with(' '))
                    .count();
                if lead >= 2 {
                    h.lines.remove(0);
                    changed = true;
                }
                if trail >= 2 && h.lines.len() > trail {
                    h.lines.pop();
                    changed = true;
                }
            }
            if changed { plain(&d) } else { None }
        }
        "extra_context" => {
            let lines: Vec<&str> = t.before.lines().collect();
            let mut changed = false;
            for h in &mut d.hunks {
                if h.os >= 2 && h.oc > 0 && h.os - 2 < lines.len() {
                    h.lines.insert(0, format!(" {}", lines[h.os - 2]));
                    changed = true;
                }
            }
            if changed { plain(&d) } else { None }
        }
        "whitespace_drift" => {
            for h in &mut d.hunks {
                let uniform = h.lines.iter().all(|l| {
                    l.len() <= 1 || l[1..].starts_with("    ") || l[1..].trim().is_empty()
                });
                if uniform && rng.below(2) == 0 {
                    // the model re-indented the whole hunk one level shallower
                    for l in &mut h.lines {
                        if l.len() > 1 && l[1..].starts_with("    ") {
                            l.replace_range(1..5, "");
                        }
                    }
                } else {
                    for l in &mut h.lines {
                        if l.starts_with(' ') && rng.below(2) == 0 {
                            if l.ends_with(' ') || l.ends_with('\t') {
                                *l = l.trim_end().to_owned()
                            } else {
                                l.push_str("  ")
                            }
                        }
                    }
                }
            }
            plain(&d)
        }
        "partial_ws_drift" => {
            // several (not all) context lines of a hunk copied with different whitespace
            let mut changed = false;
            for h in &mut d.hunks {
                let ctx: Vec<usize> = (0..h.lines.len())
                    .filter(|&i| h.lines[i].starts_with(' ') && !h.lines[i][1..].trim().is_empty())
                    .collect();
                if ctx.len() < 3 {
                    continue;
                }
                let k = 2 + rng.below(ctx.len() - 2);
                let mut pick = ctx.clone();
                for _ in 0..ctx.len() - k {
                    let at = rng.below(pick.len());
                    pick.remove(at);
                }
                for i in pick {
                    drift_ws(&mut h.lines[i], rng);
                }
                changed = true;
            }
            if changed { plain(&d) } else { None }
        }
        "crlf_file_lf_patch" => make(crlf(&t.before), d.render(), Some(crlf(&t.after))),
        "lf_file_crlf_patch" => make(t.before.clone(), crlf(&d.render()), Some(t.after.clone())),
        "eol_changing_commit" => {
            // the commit that converts the file's line endings and edits it: every line is
            // removed with the old ending and added with the new one (git's own diff of it)
            if t.before.len() > 30_000 || rng.below(3) != 0 {
                return None;
            }
            let (before, after) = if rng.below(2) == 0 {
                (crlf(&t.before), t.after.clone())
            } else {
                (t.before.clone(), crlf(&t.after))
            };
            let patch = similar::TextDiff::from_lines(&before, &after)
                .unified_diff()
                .context_radius(3)
                .header("a/f", "b/f")
                .to_string();
            make(before, patch, Some(after))
        }
        "missing_no_newline_marker" => {
            // same edit on the file without its final newline; the model left out the marker
            let (b, a) = (t.before.strip_suffix('\n')?, t.after.strip_suffix('\n')?);
            // both sides without a final newline: a patch with no marker keeps that state, so a
            // commit that also adds or removes one has no recoverable intent here
            if b.ends_with('\n') || a.ends_with('\n') {
                return None;
            }
            let diff = similar::TextDiff::from_lines(b, a)
                .unified_diff()
                .context_radius(3)
                .missing_newline_hint(true)
                .header("a/f", "b/f")
                .to_string();
            if !diff.contains("\\ No newline") {
                return None;
            }
            let patch: String = diff
                .lines()
                .filter(|l| !l.starts_with('\\'))
                .map(|l| format!("{l}\n"))
                .collect();
            make(b.to_owned(), patch, Some(a.to_owned()))
        }
        "no_eof_marker_at_eof" => {
            // git's own diff whose last hunk reaches the end of both sides, applied to the file
            // without its final newline, with no `\ No newline` marker
            let last = d.hunks.last()?;
            let (b, a) = (t.before.strip_suffix('\n')?, t.after.strip_suffix('\n')?);
            if b.ends_with('\n')
                || a.ends_with('\n')
                || last.lines.iter().any(|l| l.starts_with('\\'))
                || last.os + last.oc - 1 != line_count(&t.before)
                || last.ns + last.nc - 1 != line_count(&t.after)
            {
                return None;
            }
            make(b.to_owned(), d.render(), Some(a.to_owned()))
        }
        "hunks_out_of_order" => {
            if d.hunks.len() < 2 {
                return None;
            }
            d.hunks.reverse();
            plain(&d)
        }
        "phantom_context_line" => {
            // a context line that is not in the file: a blank line, or a line of the file
            // copied from elsewhere; the hunk's counts recomputed
            let k = rng.below(d.hunks.len());
            let lines: Vec<&str> = t.before.lines().filter(|l| significant(l)).collect();
            let phantom = if rng.below(2) == 0 || lines.is_empty() {
                String::from(" ")
            } else {
                format!(" {}", lines[rng.below(lines.len())])
            };
            let h = &mut d.hunks[k];
            let at = rng.below(h.lines.len() + 1);
            h.lines.insert(at, phantom);
            h.oc += 1;
            h.nc += 1;
            plain(&d)
        }
        "interior_context_missing" => {
            // one context line between two changes of a hunk left out; counts recomputed
            let with: Vec<usize> = (0..d.hunks.len())
                .filter(|&i| !interior_context(&d.hunks[i]).is_empty())
                .collect();
            if with.is_empty() {
                return None;
            }
            let h = &mut d.hunks[with[rng.below(with.len())]];
            let inner = interior_context(h);
            h.lines.remove(inner[rng.below(inner.len())]);
            h.oc -= 1;
            h.nc -= 1;
            plain(&d)
        }
        "dup_context_with_hint" | "dup_context_without_hint" => {
            // a copy of the first hunk's old block placed at the top of the file
            let block: String = d.hunks[0]
                .lines
                .iter()
                .filter(|l| !l.starts_with('+'))
                .map(|l| format!("{}\n", l.get(1..).unwrap_or("")))
                .collect();
            let len = block.lines().count();
            if len < 2 {
                return None;
            }
            let before = format!("{block}{}", t.before);
            let after = format!("{block}{}", t.after);
            let n = before.lines().count();
            for h in &mut d.hunks {
                if cat == "dup_context_with_hint" {
                    h.os += len;
                    h.ns += len;
                } else {
                    // a made-up line number pointing at neither copy
                    let real = h.os + len;
                    let mut fake = 1 + rng.below(n);
                    while fake == real || fake == 1 || fake.abs_diff(real) < 3 {
                        fake = 1 + rng.below(n + 10);
                    }
                    h.os = fake;
                    h.ns = fake;
                }
            }
            make(before, d.render(), Some(after))
        }
        "conflicting_edit" => {
            // someone else changed a line the first hunk removes (or its first context line)
            let h = &d.hunks[0];
            let old: Vec<(usize, &String)> = h
                .lines
                .iter()
                .filter(|l| !l.starts_with('+'))
                .enumerate()
                .collect();
            let removed = old
                .iter()
                .find(|(_, l)| l.starts_with('-') && l[1..].trim().len() > 2);
            let context = old
                .iter()
                .find(|(_, l)| l.starts_with(' ') && l[1..].trim().len() > 2);
            let target = removed.or(context)?.0;
            let mut lines: Vec<String> =
                t.before.split_inclusive('\n').map(str::to_owned).collect();
            let idx = h.os.checked_sub(1)? + target;
            let line = lines.get_mut(idx)?;
            let body = line.trim_end_matches('\n').to_owned();
            *line = format!("{body} CONFLICT{}\n", rng.below(1000));
            make(lines.concat(), d.render(), None)
        }
        "zero_context_wrong_lines" | "zero_context_conflict" => {
            // an LLM diff without context (-U0 style) whose line numbers are off
            let diff = similar::TextDiff::from_lines(&t.before, &t.after)
                .unified_diff()
                .context_radius(0)
                .header("a/f", "b/f")
                .to_string();
            let mut z = Diff::parse(&diff)?;
            let mut before = t.before.clone();
            if cat == "zero_context_conflict" {
                // … and someone else changed a line its first removing hunk removes: there is no
                // context to tell the intended place from a copy of that line elsewhere.
                let (h, k) = z.hunks.iter().find_map(|h| {
                    let k = h
                        .lines
                        .iter()
                        .filter(|l| !l.starts_with('+'))
                        .position(|l| l.starts_with('-') && l[1..].trim().len() > 2)?;
                    Some((h, k))
                })?;
                let mut lines: Vec<String> =
                    before.split_inclusive('\n').map(str::to_owned).collect();
                let line = lines.get_mut(h.os.checked_sub(1)? + k)?;
                let body = line.trim_end_matches('\n').to_owned();
                *line = format!("{body} CONFLICT{}\n", rng.below(1000));
                before = lines.concat();
            }
            for h in &mut z.hunks {
                let delta = 1 + rng.below(20);
                h.os += delta;
                h.ns += delta;
            }
            let expected = (cat == "zero_context_wrong_lines").then(|| t.after.clone());
            make(before, z.render(), expected)
        }
        "codex_envelope" => make(
            t.before.clone(),
            codex_envelope(t, &d)?,
            Some(t.after.clone()),
        ),
        "codex_unicode_drift" => {
            // the file has typographic quotes/dashes on context lines the model wrote in ASCII
            let patch = codex_envelope(t, &d)?;
            let mut before: Vec<String> = t.before.lines().map(str::to_owned).collect();
            let mut after: Vec<String> = t.after.lines().map(str::to_owned).collect();
            let mut changed = 0;
            for h in &d.hunks {
                for (l, (o, n)) in h.lines.iter().zip(positions(h)) {
                    if changed >= 2 || !l.starts_with(' ') || rng.below(2) == 0 {
                        continue;
                    }
                    if let Some(typo) = typographic(&l[1..])
                        && before.get(o).is_some_and(|b| *b == l[1..])
                        && after.get(n).is_some_and(|a| *a == l[1..])
                    {
                        before[o] = typo.clone();
                        after[n] = typo;
                        changed += 1;
                    }
                }
            }
            if changed == 0 {
                return None;
            }
            let join = |v: Vec<String>| v.iter().map(|l| format!("{l}\n")).collect::<String>();
            make(join(before), patch, Some(join(after)))
        }
        "search_replace" => make(
            t.before.clone(),
            search_replace(&d, None)?,
            Some(t.after.clone()),
        ),
        "search_replace_ws_drift" => make(
            t.before.clone(),
            search_replace(&d, Some(rng))?,
            Some(t.after.clone()),
        ),
        _ => None,
    }
}

/// The real line-ending conversions found in the histories, as cases.
pub fn real_eol_case(t: &Triple) -> Case {
    Case {
        repo: t.repo.clone(),
        origin: format!("{}:{}", &t.commit[..12], t.path),
        before: t.before.clone().into_bytes(),
        patch: t.diff.render(),
        expected: Some(t.after.clone().into_bytes()),
    }
}
