//! PATCH accuracy and throughput on real diffs from a git history, plus LLM-style corruptions,
//! side by side with `git apply` and GNU `patch`.
//!
//! ```text
//! cargo bench -p papayu-patch --bench patch_accuracy [-- REPO_GIT_DIR]
//! PAPAYU_BENCH_REPO=/path/to/repo.git PAPAYU_BENCH_DIFFS=300 cargo bench -p papayu-patch --bench patch_accuracy
//! ```
//!
//! The corpus is extracted at run time (nothing is committed): for the newest non-merge commits
//! of the repository, every modified UTF-8 text file yields a `(before, diff, after)` triple from
//! `git show`/`git diff`. Repository: the first argument, else `$PAPAYU_BENCH_REPO`, else
//! `/work/.mirror/pallets+flask/repo` (a bare clone of github.com/pallets/flask), else the
//! papayu repository itself (always present, but small). The one used is printed.
//!
//! Each category's cases are deterministic (seeded). Outcomes per tool: **correct** (applied,
//! result equals the expected bytes), **misapplied** (applied, anything else — including applying
//! a case that must be rejected), **rejected** (refused / non-zero exit). Output: one JSON object
//! per line, then a human table.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use papayu_patch::engine::apply_patch_to_text;

const DEFAULT_REPO: &str = "/work/.mirror/pallets+flask/repo";

struct Triple {
    commit: String,
    path: String,
    before: String,
    after: String,
    diff: Diff,
}

#[derive(Clone)]
struct Hunk {
    os: usize,
    oc: usize,
    ns: usize,
    nc: usize,
    section: String,
    lines: Vec<String>,
}

#[derive(Clone)]
struct Diff {
    hunks: Vec<Hunk>,
}

impl Diff {
    fn parse(text: &str) -> Option<Diff> {
        let mut hunks = Vec::new();
        for l in text.lines() {
            if let Some(rest) = l.strip_prefix("@@ -") {
                let (ranges, section) = rest.split_once(" @@")?;
                let (o, n) = ranges.split_once(" +")?;
                let r = |s: &str| -> Option<(usize, usize)> {
                    match s.split_once(',') {
                        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
                        None => Some((s.parse().ok()?, 1)),
                    }
                };
                let ((os, oc), (ns, nc)) = (r(o)?, r(n)?);
                hunks.push(Hunk {
                    os,
                    oc,
                    ns,
                    nc,
                    section: section.to_owned(),
                    lines: Vec::new(),
                });
            } else if let Some(h) = hunks.last_mut() {
                h.lines.push(l.to_owned());
            }
        }
        (!hunks.is_empty()).then_some(Diff { hunks })
    }

    fn render(&self) -> String {
        let mut s = String::from("--- a/f\n+++ b/f\n");
        for h in &self.hunks {
            let r = |a: usize, b: usize| {
                if b == 1 {
                    format!("{a}")
                } else {
                    format!("{a},{b}")
                }
            };
            s.push_str(&format!(
                "@@ -{} +{} @@{}\n",
                r(h.os, h.oc),
                r(h.ns, h.nc),
                h.section
            ));
            for l in &h.lines {
                s.push_str(l);
                s.push('\n');
            }
        }
        s
    }
}

/// splitmix64: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn git(repo: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(repo)
        .args(args)
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

fn git_dir(path: &Path) -> Option<PathBuf> {
    let out = Command::new("git")
        .arg("-C")
        .arg(path)
        .args(["rev-parse", "--absolute-git-dir"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn extract(repo: &Path, want: usize) -> Vec<Triple> {
    let log = git(repo, &["log", "--no-merges", "--format=%H", "-n", "3000"]).unwrap_or_default();
    let mut out = Vec::new();
    for commit in String::from_utf8_lossy(&log).lines() {
        if out.len() >= want {
            break;
        }
        let Some(stat) = git(
            repo,
            &["show", "--format=", "--numstat", "--diff-filter=M", commit],
        ) else {
            continue;
        };
        let stat = String::from_utf8_lossy(&stat).into_owned();
        for line in stat.lines().take(3) {
            let mut parts = line.split('\t');
            let (Some(add), Some(del), Some(path)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let (Ok(add), Ok(del)) = (add.parse::<usize>(), del.parse::<usize>()) else {
                continue;
            };
            if add + del == 0 || add + del > 150 || path.contains(" => ") {
                continue;
            }
            let (Some(before), Some(after), Some(diff)) = (
                git(repo, &["show", &format!("{commit}^:{path}")]),
                git(repo, &["show", &format!("{commit}:{path}")]),
                git(repo, &["diff", &format!("{commit}^"), commit, "--", path]),
            ) else {
                continue;
            };
            let (Ok(before), Ok(after), Ok(diff)) = (
                String::from_utf8(before),
                String::from_utf8(after),
                String::from_utf8(diff),
            ) else {
                continue;
            };
            if before.contains('\r') || after.contains('\r') || before.len() > 200_000 {
                continue;
            }
            let Some(diff) = Diff::parse(&diff) else {
                continue;
            };
            out.push(Triple {
                commit: commit.to_owned(),
                path: path.to_owned(),
                before,
                after,
                diff,
            });
            if out.len() >= want {
                break;
            }
        }
    }
    out
}

struct Case {
    before: Vec<u8>,
    patch: String,
    /// `None`: the patch must be rejected.
    expected: Option<Vec<u8>>,
}

const CATEGORIES: [&str; 15] = [
    "clean",
    "wrong_line_numbers",
    "wrong_counts",
    "missing_context",
    "extra_context",
    "whitespace_drift",
    "crlf_file_lf_patch",
    "lf_file_crlf_patch",
    "missing_no_newline_marker",
    "hunks_out_of_order",
    "dup_context_with_hint",
    "dup_context_without_hint",
    "conflicting_edit",
    "zero_context_wrong_lines",
    "zero_context_conflict",
];

fn case(t: &Triple, cat: &str, rng: &mut Rng) -> Option<Case> {
    let plain = |diff: &Diff| {
        Some(Case {
            before: t.before.clone().into_bytes(),
            patch: diff.render(),
            expected: Some(t.after.clone().into_bytes()),
        })
    };
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
        "crlf_file_lf_patch" => Some(Case {
            before: t.before.replace('\n', "\r\n").into_bytes(),
            patch: d.render(),
            expected: Some(t.after.replace('\n', "\r\n").into_bytes()),
        }),
        "lf_file_crlf_patch" => Some(Case {
            before: t.before.clone().into_bytes(),
            patch: d.render().replace('\n', "\r\n"),
            expected: Some(t.after.clone().into_bytes()),
        }),
        "missing_no_newline_marker" => {
            // same edit on the file without its final newline; the model left out the marker
            let (b, a) = (t.before.strip_suffix('\n')?, t.after.strip_suffix('\n')?);
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
            Some(Case {
                before: b.as_bytes().to_vec(),
                patch,
                expected: Some(a.as_bytes().to_vec()),
            })
        }
        "hunks_out_of_order" => {
            if d.hunks.len() < 2 {
                return None;
            }
            d.hunks.reverse();
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
            Some(Case {
                before: before.into_bytes(),
                patch: d.render(),
                expected: Some(after.into_bytes()),
            })
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
            Some(Case {
                before: lines.concat().into_bytes(),
                patch: d.render(),
                expected: None,
            })
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
            Some(Case {
                before: before.into_bytes(),
                patch: z.render(),
                expected: (cat == "zero_context_wrong_lines").then(|| t.after.clone().into_bytes()),
            })
        }
        _ => None,
    }
}

/// Category name, case count, per-tool tallies.
type Row = (String, usize, Vec<(String, Tally)>);

#[derive(Default, Clone, Copy)]
struct Tally {
    correct: usize,
    misapplied: usize,
    rejected: usize,
}

impl Tally {
    fn add(&mut self, applied: Option<&[u8]>, expected: Option<&[u8]>) {
        match (applied, expected) {
            (None, _) => self.rejected += 1,
            (Some(a), Some(e)) if a == e => self.correct += 1,
            (Some(_), _) => self.misapplied += 1,
        }
    }
    fn total(&self) -> usize {
        self.correct + self.misapplied + self.rejected
    }
}

const TOOLS: [(&str, &str); 4] = [
    ("git_apply", "git apply p.diff"),
    (
        "git_apply_lenient",
        "git apply --recount -C1 --ignore-whitespace p.diff",
    ),
    (
        "gnu_patch",
        "patch -p1 --batch --silent --no-backup-if-mismatch -r /dev/null -i p.diff",
    ),
    (
        "gnu_patch_F3",
        "patch -p1 -F3 --batch --silent --no-backup-if-mismatch -r /dev/null -i p.diff",
    ),
];

/// Run one external tool over all cases of a category with a single shell (one process per
/// case for the tool itself).
fn run_tool(dir: &Path, cases: usize, cmd: &str) -> Vec<Option<Vec<u8>>> {
    let script = format!(
        "for i in $(seq 0 {last}); do d={dir}/$i; cp $d/before $d/f; (cd $d && {cmd} >/dev/null 2>&1; echo $? > $d/rc); done",
        last = cases as isize - 1,
        dir = dir.display()
    );
    let status = Command::new("sh").arg("-c").arg(&script).status();
    if !status.is_ok_and(|s| s.success()) {
        eprintln!("warning: tool script failed: {cmd}");
    }
    (0..cases)
        .map(|i| {
            let d = dir.join(i.to_string());
            let rc = std::fs::read_to_string(d.join("rc")).unwrap_or_default();
            (rc.trim() == "0").then(|| std::fs::read(d.join("f")).unwrap_or_default())
        })
        .collect()
}

fn main() {
    let arg = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let want: usize = std::env::var("PAPAYU_BENCH_DIFFS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let skip_tools = std::env::var("PAPAYU_BENCH_NO_TOOLS").is_ok();
    let self_repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let candidates: Vec<PathBuf> = arg
        .map(PathBuf::from)
        .into_iter()
        .chain(std::env::var("PAPAYU_BENCH_REPO").ok().map(PathBuf::from))
        .chain([PathBuf::from(DEFAULT_REPO), self_repo])
        .collect();
    let Some(repo) = candidates.iter().find_map(|c| git_dir(c)) else {
        eprintln!("no git repository found among {candidates:?}");
        std::process::exit(2);
    };
    let t0 = Instant::now();
    let triples = extract(&repo, want);
    let commits: std::collections::BTreeSet<&str> =
        triples.iter().map(|t| t.commit.as_str()).collect();
    let hunks: usize = triples.iter().map(|t| t.diff.hunks.len()).sum();
    eprintln!(
        "corpus: {} — {} diffs ({} hunks) from {} commits, extracted in {:.1?}",
        repo.display(),
        triples.len(),
        hunks,
        commits.len(),
        t0.elapsed()
    );
    let json = |category: &str, metric: &str, value: f64, unit: &str| {
        println!(
            r#"{{"bench":"patch_accuracy","category":"{category}","metric":"{metric}","value":{value},"unit":"{unit}"}}"#
        );
    };
    println!(
        r#"{{"bench":"patch_accuracy","category":"corpus","metric":"diffs","value":{},"unit":"count","repo":{:?},"commits":{},"hunks":{},"files":{:?}}}"#,
        triples.len(),
        repo.display().to_string(),
        commits.len(),
        hunks,
        triples
            .iter()
            .take(3)
            .map(|t| format!("{}:{}", &t.commit[..12], t.path))
            .collect::<Vec<_>>()
    );

    // Throughput: in-process, clean single-file diffs.
    let clean: Vec<(String, String)> = triples
        .iter()
        .map(|t| (t.before.clone(), t.diff.render()))
        .collect();
    if !clean.is_empty() {
        let start = Instant::now();
        let mut n = 0usize;
        while start.elapsed() < Duration::from_secs(2) {
            for (b, p) in &clean {
                std::hint::black_box(apply_patch_to_text(b, p).ok());
                n += 1;
            }
        }
        let rate = n as f64 / start.elapsed().as_secs_f64();
        let avg = clean.iter().map(|(b, _)| b.len()).sum::<usize>() / clean.len();
        json("throughput", "patches_per_sec", rate.round(), "patches/s");
        json("throughput", "avg_file_bytes", avg as f64, "bytes");
    }

    let work = std::env::temp_dir().join(format!("papayu-patch-bench-{}", std::process::id()));
    let mut table: BTreeMap<usize, Row> = BTreeMap::new();
    for (ci, cat) in CATEGORIES.iter().enumerate() {
        let mut rng = Rng(0x5EED ^ (ci as u64) << 32);
        let cases: Vec<Case> = triples
            .iter()
            .filter_map(|t| case(t, cat, &mut rng))
            .collect();
        let mut tallies: Vec<(String, Tally)> = Vec::new();
        let mut ours = Tally::default();
        let dump = std::env::var("PAPAYU_BENCH_DUMP").is_ok_and(|d| d == *cat);
        for c in &cases {
            let result = std::str::from_utf8(&c.before)
                .map_err(|e| e.to_string())
                .and_then(|b| apply_patch_to_text(b, &c.patch).map_err(|e| e.to_string()));
            let applied = result.as_ref().ok().map(|o| o.text.clone().into_bytes());
            if dump && applied != c.expected {
                eprintln!(
                    "=== {cat}: {}\n{}",
                    result.as_ref().err().map_or("MISAPPLIED", String::as_str),
                    c.patch
                );
            }
            ours.add(applied.as_deref(), c.expected.as_deref());
        }
        tallies.push(("papayu".into(), ours));
        if !skip_tools && !cases.is_empty() {
            let dir = work.join(cat);
            for (i, c) in cases.iter().enumerate() {
                let d = dir.join(i.to_string());
                std::fs::create_dir_all(&d).expect("temp dir");
                std::fs::write(d.join("before"), &c.before).expect("write");
                std::fs::write(d.join("p.diff"), &c.patch).expect("write");
            }
            for (name, cmd) in TOOLS {
                let results = run_tool(&dir, cases.len(), cmd);
                let mut t = Tally::default();
                for (r, c) in results.iter().zip(&cases) {
                    t.add(r.as_deref(), c.expected.as_deref());
                }
                tallies.push((name.into(), t));
            }
        }
        for (tool, t) in &tallies {
            let total = t.total().max(1) as f64;
            json(
                cat,
                &format!("{tool}.correct_rate"),
                (t.correct as f64 / total * 1000.0).round() / 1000.0,
                "ratio",
            );
            json(
                cat,
                &format!("{tool}.misapplied"),
                t.misapplied as f64,
                "count",
            );
            json(cat, &format!("{tool}.rejected"), t.rejected as f64, "count");
        }
        table.insert(ci, ((*cat).to_owned(), cases.len(), tallies));
    }
    let _ = std::fs::remove_dir_all(&work);

    println!();
    print!("{:<28} {:>5}", "category", "cases");
    let tools: Vec<&str> = std::iter::once("papayu")
        .chain(TOOLS.iter().map(|t| t.0))
        .collect();
    for t in &tools {
        print!(" | {t:^20}");
    }
    println!(
        "\n{:<28} {:>5}{}",
        "",
        "",
        " |  ok% / mis / rej     ".repeat(tools.len())
    );
    for (cat, n, tallies) in table.values() {
        print!("{cat:<28} {n:>5}");
        for (_, t) in tallies {
            let pct = 100.0 * t.correct as f64 / t.total().max(1) as f64;
            print!(" | {pct:>5.1}% {:>4} {:>5}  ", t.misapplied, t.rejected);
        }
        println!();
    }
    println!(
        "(ok% = correct-apply rate; mis = misapplied count; rej = rejected count. For conflicting_edit and zero_context_conflict every case must be rejected.)"
    );
}
