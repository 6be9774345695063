//! PATCH accuracy and throughput on real diffs from several git histories, plus LLM-style
//! corruptions, side by side with `git apply` and GNU `patch`.
//!
//! ```text
//! cargo bench -p papayu-patch --bench patch_accuracy [-- REPO_GIT_DIR...]
//! PAPAYU_BENCH_REPOS=/a/repo:/b/repo PAPAYU_BENCH_DIFFS=400 cargo bench -p papayu-patch --bench patch_accuracy
//! ```
//!
//! The corpus is extracted at run time (nothing is committed): for the newest non-merge commits
//! of each repository, up to three modified UTF-8 text files per commit yield a
//! `(before, diff, after)` triple with git's own diff. Repositories: the arguments, else
//! `$PAPAYU_BENCH_REPOS` (`:`-separated), else [`DEFAULT_REPOS`] (bare clones brought in with the
//! search tool's `fetch`); a missing repository or an empty corpus stops the bench (exit 2). Each repository
//! gives at most `$PAPAYU_BENCH_DIFFS` triples (default 400). Real commits that convert a file's
//! line endings are found with `git log -G '\r$'` and join `eol_changing_commit`.
//!
//! Each category's cases are deterministic (seeded). Outcomes per tool: **correct** (applied,
//! result equals the expected bytes), **misapplied** (applied, anything else — including applying
//! a case that must be rejected), **rejected** (refused / non-zero exit). Output: one JSON object
//! per line, then a human table, the mean papayu correct over the corruption categories, and that
//! mean's ceiling for an engine that never guesses (every case correct except those papayu
//! rejects as reading two or more ways). `PAPAYU_BENCH_NO_TOOLS=1` runs papayu only;
//! `PAPAYU_BENCH_DUMP=<category>` prints every case papayu does not get right;
//! `PAPAYU_BENCH_DUMP_DIR=<dir>` writes every case papayu misapplies, in any category, to
//! `<dir>/<category>/<n>/{before, patch, expected, got, origin}` (`expected` absent when the
//! case must be rejected);
//! `PAPAYU_BENCH_BATCH_DIR=<dir>` also writes the clean cases there as files and a
//! `manifest.jsonl` for `papayu apply-patch --batch` (`PAPAYU_BENCH_BATCH_DIFFS` per repository,
//! default 1 100).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs
)]

mod cases;
mod corpus;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cases::{Case, FORMATS, MUST_REJECT, Rng, UNIFIED, case, real_eol_case};
use corpus::{Triple, eol_commits, extract, git_dir};
use papayu_patch::engine::apply_patch_to_text;

/// Python, JavaScript and Rust histories.
const DEFAULT_REPOS: [&str; 3] = [
    "/work/.mirror/pallets+flask/repo",
    "/work/.mirror/expressjs+express/repo",
    "/work/.mirror/BurntSushi+ripgrep/repo",
];

/// Category name, case count, per-tool tallies.
type Row = (String, usize, Vec<(String, Tally)>);

#[derive(Default, Clone, Copy)]
struct Tally {
    correct: usize,
    misapplied: usize,
    rejected: usize,
    /// Rejections because the patch reads two or more ways with different results (papayu's
    /// only): its old lines match at several places, or it inserts lines with nothing to place
    /// them by. No engine that never misapplies gets these right except by luck.
    ambiguous: usize,
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
    fn rate(&self) -> f64 {
        self.correct as f64 / self.total().max(1) as f64
    }
    /// The correct rate of an engine that gets every case right but the ambiguous ones.
    fn ceiling(&self) -> f64 {
        (self.total() - self.ambiguous) as f64 / self.total().max(1) as f64
    }
}

/// Whether papayu's rejection says the patch reads two or more ways (see [`Tally::ambiguous`]).
fn ambiguous(error: &str) -> bool {
    error.contains("match at several places")
        || error.contains("only inserts lines without context")
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

fn papayu(c: &Case) -> Result<Vec<u8>, String> {
    let before = std::str::from_utf8(&c.before).map_err(|e| e.to_string())?;
    apply_patch_to_text(before, &c.patch)
        .map(|o| o.text.into_bytes())
        .map_err(|e| format!("{}: {e}", e.code()))
}

fn repos() -> Vec<PathBuf> {
    let args: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .collect();
    let from_env: Vec<PathBuf> = std::env::var("PAPAYU_BENCH_REPOS")
        .or_else(|_| std::env::var("PAPAYU_BENCH_REPO"))
        .map(|v| {
            v.split(':')
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default();
    let defaults: Vec<PathBuf> = DEFAULT_REPOS.iter().map(PathBuf::from).collect();
    let list = [args, from_env, defaults]
        .into_iter()
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    // Every named repository must be there: a figure measured on a silently smaller corpus
    // would be reported as if it were the full one.
    let missing: Vec<String> = list
        .iter()
        .filter(|p| git_dir(p).is_none())
        .map(|p| p.display().to_string())
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "corpus missing: no git repository at {} (bring it in with `fetch`, or name the \
             repositories as arguments or in PAPAYU_BENCH_REPOS)",
            missing.join(", ")
        );
        std::process::exit(2);
    }
    list.iter().filter_map(|p| git_dir(p)).collect()
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The clean cases as files plus a `papayu apply-patch --batch` manifest (and the expected
/// results beside them, `NNNN.after`, for checking).
fn write_batch(dir: &Path, triples: &[Triple]) {
    std::fs::create_dir_all(dir).expect("batch dir");
    let mut manifest = String::new();
    for (i, t) in triples.iter().enumerate() {
        std::fs::write(dir.join(format!("{i:05}.txt")), &t.before).expect("write");
        std::fs::write(dir.join(format!("{i:05}.diff")), t.diff.render()).expect("write");
        std::fs::write(dir.join(format!("{i:05}.after")), &t.after).expect("write");
        manifest.push_str(&format!(
            "{{\"file\":\"{i:05}.txt\",\"patch\":\"{i:05}.diff\",\"out\":\"{i:05}.out\"}}\n"
        ));
    }
    std::fs::write(dir.join("manifest.jsonl"), manifest).expect("write");
    eprintln!("batch: {} cases in {}", triples.len(), dir.display());
}

/// One misapplied case as files, to reproduce it outside the bench.
fn dump_misapplied(dir: &Path, c: &Case, got: &[u8]) {
    std::fs::create_dir_all(dir).expect("dump dir");
    std::fs::write(dir.join("before"), &c.before).expect("write");
    std::fs::write(dir.join("patch"), &c.patch).expect("write");
    std::fs::write(dir.join("got"), got).expect("write");
    std::fs::write(dir.join("origin"), format!("{} {}\n", c.repo, c.origin)).expect("write");
    if let Some(e) = &c.expected {
        std::fs::write(dir.join("expected"), e).expect("write");
    }
}

fn main() {
    let want = env_usize("PAPAYU_BENCH_DIFFS", 400);
    let skip_tools = std::env::var("PAPAYU_BENCH_NO_TOOLS").is_ok();
    let only: Option<Vec<String>> = std::env::var("PAPAYU_BENCH_ONLY")
        .ok()
        .map(|v| v.split(',').map(str::to_owned).collect());
    let repos = repos();
    if repos.is_empty() {
        eprintln!("no git repository found");
        std::process::exit(2);
    }
    if let Ok(dir) = std::env::var("PAPAYU_BENCH_BATCH_DIR") {
        let per_repo = env_usize("PAPAYU_BENCH_BATCH_DIFFS", 1_100);
        let all: Vec<Triple> = repos.iter().flat_map(|r| extract(r, per_repo)).collect();
        write_batch(Path::new(&dir), &all);
        if std::env::var("PAPAYU_BENCH_BATCH_ONLY").is_ok() {
            return;
        }
    }
    let t0 = Instant::now();
    let mut triples: Vec<Triple> = Vec::new();
    let mut eol_real: Vec<Triple> = Vec::new();
    for repo in &repos {
        let got = extract(repo, want);
        let eol = eol_commits(repo);
        let commits: std::collections::BTreeSet<&str> =
            got.iter().map(|t| t.commit.as_str()).collect();
        let hunks: usize = got.iter().map(|t| t.diff.hunks.len()).sum();
        eprintln!(
            "corpus: {} — {} diffs ({} hunks) from {} commits; {} real line-ending conversions",
            repo.display(),
            got.len(),
            hunks,
            commits.len(),
            eol.len()
        );
        println!(
            r#"{{"bench":"patch_accuracy","category":"corpus","metric":"diffs","value":{},"unit":"count","repo":{:?},"commits":{},"hunks":{},"eol_conversions":{}}}"#,
            got.len(),
            repo.display().to_string(),
            commits.len(),
            hunks,
            eol.len()
        );
        triples.extend(got);
        eol_real.extend(eol);
    }
    if triples.is_empty() {
        eprintln!("corpus missing: the repositories yielded no diffs");
        std::process::exit(2);
    }
    eprintln!("extracted in {:.1?}", t0.elapsed());
    let json = |category: &str, metric: &str, value: f64, unit: &str| {
        println!(
            r#"{{"bench":"patch_accuracy","category":"{category}","metric":"{metric}","value":{value},"unit":"{unit}"}}"#
        );
    };

    // Throughput: in-process, clean single-file diffs.
    let clean: Vec<(String, String)> = triples
        .iter()
        .map(|t| (t.before.clone(), t.diff.render()))
        .collect();
    if !clean.is_empty() && only.is_none() {
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
    let categories: Vec<&str> = UNIFIED.iter().chain(FORMATS.iter()).copied().collect();
    for (ci, cat) in categories.iter().enumerate() {
        if only.as_ref().is_some_and(|o| !o.iter().any(|c| c == cat)) {
            continue;
        }
        let mut rng = Rng(0x5EED ^ (ci as u64) << 32);
        let mut cases: Vec<Case> = triples
            .iter()
            .filter_map(|t| case(t, cat, &mut rng))
            .collect();
        if *cat == "eol_changing_commit" {
            cases.extend(eol_real.iter().map(real_eol_case));
        }
        let mut tallies: Vec<(String, Tally)> = Vec::new();
        let mut ours = Tally::default();
        let mut per_repo: BTreeMap<String, Tally> = BTreeMap::new();
        let dump = std::env::var("PAPAYU_BENCH_DUMP").is_ok_and(|d| d == *cat);
        let dump_dir = std::env::var("PAPAYU_BENCH_DUMP_DIR")
            .ok()
            .map(PathBuf::from);
        let mut misapplied_seen = 0usize;
        for c in &cases {
            let result = papayu(c);
            let applied = result.as_ref().ok();
            if let (Some(root), Some(got)) = (&dump_dir, applied)
                && c.expected.as_ref() != Some(got)
            {
                dump_misapplied(&root.join(cat).join(misapplied_seen.to_string()), c, got);
                misapplied_seen += 1;
            }
            if dump && applied != c.expected.as_ref() {
                eprintln!(
                    "=== {cat} [{} {}]: {}\n--- patch\n{}",
                    c.repo,
                    c.origin,
                    result.as_ref().err().map_or("MISAPPLIED", String::as_str),
                    c.patch
                );
            }
            ours.add(applied.map(Vec::as_slice), c.expected.as_deref());
            ours.ambiguous += usize::from(result.as_ref().is_err_and(|e| ambiguous(e)));
            per_repo
                .entry(c.repo.clone())
                .or_default()
                .add(applied.map(Vec::as_slice), c.expected.as_deref());
        }
        tallies.push(("papayu".into(), ours));
        let unified = UNIFIED.contains(cat);
        if unified && !skip_tools && !cases.is_empty() {
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
            let _ = std::fs::remove_dir_all(&dir);
        }
        for (tool, t) in &tallies {
            json(
                cat,
                &format!("{tool}.correct_rate"),
                (t.rate() * 1000.0).round() / 1000.0,
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
        json(
            cat,
            "papayu.ambiguous",
            tallies[0].1.ambiguous as f64,
            "count",
        );
        for (repo, t) in &per_repo {
            println!(
                r#"{{"bench":"patch_accuracy","category":"{cat}","metric":"papayu.by_repo","repo":"{repo}","correct":{},"misapplied":{},"rejected":{}}}"#,
                t.correct, t.misapplied, t.rejected
            );
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
    let mut recovered: Vec<f64> = Vec::new();
    let mut ceilings: Vec<f64> = Vec::new();
    let mut ambiguous_cases = 0usize;
    for (cat, n, tallies) in table.values() {
        print!("{cat:<28} {n:>5}");
        for (_, t) in tallies {
            print!(
                " | {:>5.1}% {:>4} {:>5}  ",
                100.0 * t.rate(),
                t.misapplied,
                t.rejected
            );
        }
        println!();
        if cat != "clean" && !MUST_REJECT.contains(&cat.as_str()) && UNIFIED.contains(&cat.as_str())
        {
            recovered.push(tallies[0].1.rate());
            ceilings.push(tallies[0].1.ceiling());
            ambiguous_cases += tallies[0].1.ambiguous;
        }
    }
    if !recovered.is_empty() {
        let mean = recovered.iter().sum::<f64>() / recovered.len() as f64;
        json(
            "summary",
            "papayu.mean_correct_corruptions",
            (mean * 1000.0).round() / 1000.0,
            "ratio",
        );
        println!(
            "mean papayu correct over the {} corruption categories: {:.1}%",
            recovered.len(),
            100.0 * mean
        );
        let ceiling = ceilings.iter().sum::<f64>() / ceilings.len() as f64;
        json(
            "summary",
            "ceiling_mean_correct_corruptions",
            (ceiling * 1000.0).round() / 1000.0,
            "ratio",
        );
        println!(
            "ceiling without guessing: {:.1}% (every case correct except the {ambiguous_cases} that read two or more ways: \
             old lines at several places, insertions with nothing to place them)",
            100.0 * ceiling
        );
    }
    println!(
        "(ok% = correct-apply rate; mis = misapplied count; rej = rejected count. Every case of {MUST_REJECT:?} must be rejected.)"
    );
}
