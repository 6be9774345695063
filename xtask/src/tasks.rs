//! The task benchmark's corpus (`bench/tasks/<id>/`): loading and checking `task.toml`, copying a
//! task's project, overlaying its reference solution, running its test command, digesting trees.
//! Reads the corpus; writes only into the destinations and scratch directories it is handed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// Directories that are build or tool output, never part of a task's tree: skipped when copying
/// and digesting, at any depth.
pub const IGNORED_DIRS: &[&str] = &["target", "__pycache__", "node_modules", ".papa-yu"];

/// A test run slower than this makes a task too slow for the corpus.
pub const TEST_BUDGET: Duration = Duration::from_secs(20);

/// The language a task's project is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// Python 3.11, standard library only, tests with `unittest`.
    Python,
    /// Node 20, no dependencies, tests with `node --test`.
    Javascript,
    /// A dependency-free edition-2021 crate with a committed `Cargo.lock`.
    Rust,
}

impl Language {
    /// Every language, in table order.
    pub const ALL: [Language; 3] = [Language::Python, Language::Javascript, Language::Rust];

    /// The name used in `task.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Javascript => "javascript",
            Language::Rust => "rust",
        }
    }

    /// Every task id of this language starts with this.
    fn id_prefix(self) -> &'static str {
        match self {
            Language::Python => "py-",
            Language::Javascript => "js-",
            Language::Rust => "rs-",
        }
    }

    /// The test command must start with this (the runner the fresh machine has).
    fn test_prefix(self) -> &'static str {
        match self {
            Language::Python => "python3 -m unittest",
            Language::Javascript => "node --test",
            Language::Rust => "cargo test",
        }
    }

    /// Files the project root must hold for the test command to work without writing into it.
    fn required_files(self) -> &'static [&'static str] {
        match self {
            Language::Python => &[],
            Language::Javascript => &["package.json"],
            // Without a lockfile `cargo test` writes one into the project.
            Language::Rust => &["Cargo.toml", "Cargo.lock"],
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// What the goal asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Existing behaviour is wrong.
    Bugfix,
    /// New behaviour whose test already exists.
    Feature,
    /// A rename or move across files; the tests already use the new names.
    Rename,
}

impl Kind {
    /// The name used in `task.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Bugfix => "bugfix",
            Kind::Feature => "feature",
            Kind::Rename => "rename",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// `task.toml` as written; [`load_tasks`] checks it and turns it into a [`Task`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    id: String,
    language: Language,
    kind: Kind,
    goal: String,
    test: String,
    difficulty: u8,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default)]
    solution_deletes: Vec<String>,
}

/// One task of the corpus: a tiny project before the fix, a goal sentence, the test command that
/// judges success, and the reference fix.
#[derive(Debug, Clone)]
pub struct Task {
    /// Unique id, equal to the task's directory name (`py-01-calc-add`).
    pub id: String,
    /// The project's language.
    pub language: Language,
    /// Bug fix, feature or rename.
    pub kind: Kind,
    /// One sentence, the way a developer would type it to a coding assistant.
    pub goal: String,
    /// Shell command run in the project root; exit 0 means solved.
    pub test: String,
    /// 1 (a one-token fix) to 3 (several places or a large file).
    pub difficulty: u8,
    /// Free text for corpus maintainers; never shown to the model.
    pub notes: Option<String>,
    /// Files (relative to the project root) the reference fix removes.
    pub solution_deletes: Vec<String>,
    /// `bench/tasks/<id>`.
    pub dir: PathBuf,
}

/// The outcome of one run of a task's test command.
#[derive(Debug, Clone)]
pub struct TestRun {
    /// Exit status 0 within the timeout.
    pub passed: bool,
    /// The exit code; `None` when killed (timeout or signal).
    pub exit: Option<i32>,
    /// The command ran past its timeout and was killed with its process group.
    pub timed_out: bool,
    /// The last lines of stdout and stderr, interleaved as written.
    pub output_tail: String,
    /// Wall time until exit (or until killed).
    pub duration: Duration,
}

/// Load every task under `root` (`bench/tasks`), sorted by id. Strict: an unknown key, a missing
/// field or a malformed task is an error naming the file; a missing `root` is an error too.
pub fn load_tasks(root: &Path) -> Result<Vec<Task>> {
    let mut tasks = Vec::new();
    for entry in fs_err::read_dir(root)? {
        let dir = entry?.path();
        if dir.is_dir() {
            tasks.push(load_task(&dir)?);
        }
    }
    tasks.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(tasks)
}

fn load_task(dir: &Path) -> Result<Task> {
    let path = dir.join("task.toml");
    let text = fs_err::read_to_string(&path)?;
    let file: TaskFile =
        toml::from_str(&text).with_context(|| format!("{}: invalid task file", path.display()))?;
    let task = Task {
        id: file.id,
        language: file.language,
        kind: file.kind,
        goal: file.goal,
        test: file.test,
        difficulty: file.difficulty,
        notes: file.notes,
        solution_deletes: file.solution_deletes,
        dir: dir.to_path_buf(),
    };
    task.check()
        .with_context(|| format!("{}: malformed task", path.display()))?;
    Ok(task)
}

impl Task {
    /// The project before the fix.
    pub fn project_dir(&self) -> PathBuf {
        self.dir.join("project")
    }

    /// The files the reference fix changes or adds, with their content after the fix.
    pub fn solution_dir(&self) -> PathBuf {
        self.dir.join("solution")
    }

    /// Copy the project (without build output) into `dest`, which is created if needed.
    pub fn copy_project(&self, dest: &Path) -> Result<()> {
        copy_tree(&self.project_dir(), dest)
    }

    /// Apply the reference fix to a copy of the project in `dest`: overwrite or add the solution's
    /// files and remove `solution_deletes`.
    pub fn overlay_solution(&self, dest: &Path) -> Result<()> {
        copy_tree(&self.solution_dir(), dest)?;
        for rel in &self.solution_deletes {
            fs_err::remove_file(dest.join(rel))?;
        }
        Ok(())
    }

    /// Run the test command in `dir` through `sh -c`, killing its whole process group after
    /// `timeout`. Python never writes bytecode (`PYTHONDONTWRITEBYTECODE=1`) and Rust builds into
    /// `cargo_target_dir`, so a run leaves the tree as it found it.
    pub fn run_test(
        &self,
        dir: &Path,
        timeout: Duration,
        cargo_target_dir: &Path,
    ) -> Result<TestRun> {
        let mut output = tempfile::tempfile().context("creating a file for test output")?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(&self.test)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output.try_clone()?)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("CARGO_TARGET_DIR", cargo_target_dir)
            .env("CARGO_TERM_COLOR", "never")
            .env("NO_COLOR", "1")
            // Short failure output: the tail is what a reader (or a model) gets to see.
            .env("RUST_BACKTRACE", "0");
        cmd.process_group(0);
        let start = Instant::now();
        let mut child = cmd
            .spawn()
            .with_context(|| format!("{}: spawning `sh -c {}`", self.id, self.test))?;
        let mut timed_out = false;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if start.elapsed() >= timeout {
                timed_out = true;
                // cargo, node and unittest all spawn children: kill the group, not just sh.
                let group = rustix::process::Pid::from_child(&child);
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
                break child.wait()?;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let duration = start.elapsed();
        output.seek(SeekFrom::Start(0))?;
        let mut bytes = Vec::new();
        output.read_to_end(&mut bytes)?;
        Ok(TestRun {
            passed: status.success() && !timed_out,
            exit: status.code(),
            timed_out,
            output_tail: tail(&String::from_utf8_lossy(&bytes), 40),
            duration,
        })
    }

    /// The corpus rules that can be checked without running anything.
    fn check(&self) -> Result<()> {
        let name = self.dir.file_name().map(|n| n.to_string_lossy());
        ensure!(
            name.as_deref() == Some(self.id.as_str()),
            "id `{}` differs from the directory name",
            self.id
        );
        ensure!(
            self.id.starts_with(self.language.id_prefix()),
            "a {} task's id starts with `{}`",
            self.language,
            self.language.id_prefix()
        );
        ensure!(
            (1..=3).contains(&self.difficulty),
            "difficulty {} is not 1, 2 or 3",
            self.difficulty
        );
        ensure!(
            !self.goal.trim().is_empty() && !self.goal.contains('\n'),
            "the goal is one non-empty line"
        );
        ensure!(
            self.test.starts_with(self.language.test_prefix()) && !self.test.contains('\n'),
            "a {} task's test command is one line starting with `{}`",
            self.language,
            self.language.test_prefix()
        );
        let project = list_files(&self.project_dir(), IGNORED_DIRS)?;
        ensure!(!project.is_empty(), "project/ holds no files");
        for required in self.language.required_files() {
            ensure!(
                project.contains_key(*required),
                "project/{required} is missing"
            );
        }
        let solution = list_files(&self.solution_dir(), IGNORED_DIRS)?;
        ensure!(
            !solution.is_empty() || !self.solution_deletes.is_empty(),
            "the solution neither changes nor deletes a file"
        );
        for (rel, path) in &solution {
            if let Some(before) = project.get(rel) {
                ensure!(
                    fs_err::read(path)? != fs_err::read(before)?,
                    "solution/{rel} is identical to project/{rel}"
                );
            }
        }
        for rel in &self.solution_deletes {
            ensure!(
                project.contains_key(rel),
                "solution_deletes names `{rel}`, which is not a file in project/"
            );
            ensure!(
                !solution.contains_key(rel),
                "`{rel}` is both deleted and in solution/"
            );
        }
        Ok(())
    }
}

/// The last `lines` lines of `text`.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Every regular file under `dir`, outside directories named in `skip`, by `/`-separated relative
/// path. Symlinks and non-UTF-8 names are errors: a task holds plain files only.
pub(crate) fn list_files(dir: &Path, skip: &[&str]) -> Result<BTreeMap<String, PathBuf>> {
    let mut files = BTreeMap::new();
    collect_files(dir, "", skip, &mut files)?;
    Ok(files)
}

fn collect_files(
    dir: &Path,
    prefix: &str,
    skip: &[&str],
    files: &mut BTreeMap<String, PathBuf>,
) -> Result<()> {
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            bail!("{}: file name is not UTF-8", path.display());
        };
        let rel = format!("{prefix}{name}");
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if !skip.contains(&name.as_str()) {
                collect_files(&path, &format!("{rel}/"), skip, files)?;
            }
        } else if kind.is_file() {
            files.insert(rel, path);
        } else {
            bail!("{}: not a regular file or directory", path.display());
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    for (rel, path) in list_files(from, IGNORED_DIRS)? {
        let dest = to.join(&rel);
        if let Some(parent) = dest.parent() {
            fs_err::create_dir_all(parent)?;
        }
        fs_err::copy(&path, &dest)?;
    }
    Ok(())
}

/// Each file's sha256 (hex) by relative path, outside [`IGNORED_DIRS`].
pub fn tree_listing(dir: &Path) -> Result<BTreeMap<String, String>> {
    hash_files(dir, IGNORED_DIRS)
}

fn hash_files(dir: &Path, skip: &[&str]) -> Result<BTreeMap<String, String>> {
    list_files(dir, skip)?
        .into_iter()
        .map(|(rel, path)| Ok((rel, hex::encode(Sha256::digest(fs_err::read(&path)?)))))
        .collect()
}

/// A sha256 (hex) over every file's relative path and content, ignoring [`IGNORED_DIRS`]: equal
/// digests mean the same files with the same bytes. Empty directories do not count.
pub fn tree_digest(dir: &Path) -> Result<String> {
    let mut hasher = Sha256::new();
    for (rel, file_hash) in tree_listing(dir)? {
        hasher.update(rel.as_bytes());
        hasher.update([0]);
        hasher.update(file_hash.as_bytes());
        hasher.update([0]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// What changed between two [`tree_listing`]s, as `+added`, `-removed`, `~changed` paths.
fn listing_changes(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<String> {
    let paths: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    paths
        .into_iter()
        .filter_map(|p| match (before.get(p), after.get(p)) {
            (None, Some(_)) => Some(format!("+{p}")),
            (Some(_), None) => Some(format!("-{p}")),
            (Some(a), Some(b)) if a != b => Some(format!("~{p}")),
            _ => None,
        })
        .collect()
}

/// `cargo xtask bench tasks [--verify | --list | --run OPTIONS] [ID-FILTER...]`.
pub fn cli(root: &Path, args: &[String]) -> Result<()> {
    let corpus = root.join("bench/tasks");
    let usage = "usage: cargo xtask bench tasks [--verify | --list | --run | --extract-answers DIR] \
[--scripted | --replay DIR] \
[--expect-all | --expect-solved] [--papayu PATH] [--model-path FILE] [--attempts N] [--run-arg ARG]... \
[--env KEY=VALUE]... \
[--out FILE] [--traces DIR] [ID-FILTER...]";
    let mut mode = "--run";
    let mut run = crate::bench_run::RunOptions::default();
    let mut filters: Vec<&String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .with_context(|| format!("{a} needs a value\n{usage}"))
        };
        match a.as_str() {
            "--verify" | "--list" | "--run" => mode = a.as_str(),
            "--scripted" => run.scripted = true,
            "--replay" => run.replay = Some(PathBuf::from(value()?)),
            "--extract-answers" => {
                let dir = PathBuf::from(value()?);
                for id in crate::replay::extract(&dir)? {
                    println!("{}", dir.join(format!("{id}.answers.json")).display());
                }
                return Ok(());
            }
            "--expect-all" => run.expect_all = true,
            "--expect-solved" => run.expect_solved = true,
            "--papayu" => run.papayu = Some(PathBuf::from(value()?)),
            "--model-path" => run.model_path = Some(PathBuf::from(value()?)),
            "--attempts" => run.attempts = Some(value()?.parse().context("--attempts")?),
            "--run-arg" => run.run_args.push(value()?.clone()),
            "--out" => run.out = Some(PathBuf::from(value()?)),
            "--traces" => run.traces = Some(PathBuf::from(value()?)),
            "--env" => {
                let kv = value()?;
                let (k, v) = kv
                    .split_once('=')
                    .with_context(|| format!("--env {kv}: expected KEY=VALUE"))?;
                run.env.push((k.to_owned(), v.to_owned()));
            }
            flag if flag.starts_with("--") => bail!("unknown flag {flag}\n{usage}"),
            _ => filters.push(a),
        }
    }
    let tasks: Vec<Task> = load_tasks(&corpus)?
        .into_iter()
        .filter(|t| filters.is_empty() || filters.iter().any(|f| t.id.contains(f.as_str())))
        .collect();
    if tasks.is_empty() {
        bail!("no task in {} matches {filters:?}", corpus.display());
    }
    if mode == "--verify" {
        return verify(&tasks);
    }
    if mode == "--run" {
        return crate::bench_run::run(root, &tasks, &run);
    }
    for t in &tasks {
        println!(
            "{:<34} {:<10} {:<7} {}  {}",
            t.id, t.language, t.kind, t.difficulty, t.goal
        );
        if let Some(notes) = &t.notes {
            println!("{:<34} {notes}", "");
        }
    }
    Ok(())
}

/// The checks `--verify` makes on one task.
struct Verdict {
    before: TestRun,
    after: TestRun,
    problems: Vec<String>,
}

/// Check every task: its test fails on the project, passes with the solution overlaid, stays in
/// budget, and neither run writes anything into the copy (nor into the corpus).
fn verify(tasks: &[Task]) -> Result<()> {
    let scratch = tempfile::Builder::new()
        .prefix("papayu-bench-tasks-")
        .tempdir()?;
    let cargo_target = scratch.path().join("cargo-target");
    let started = Instant::now();
    println!(
        "{:<34} {:<10} {:<7} {:>4}  {:<7} {:<7} {:>6}",
        "task", "language", "kind", "diff", "before", "after", "secs"
    );
    let mut bad = Vec::new();
    for task in tasks {
        let work = scratch.path().join("work").join(&task.id);
        let verdict = verify_one(task, &work, &cargo_target)?;
        fs_err::remove_dir_all(&work)?;
        println!(
            "{:<34} {:<10} {:<7} {:>4}  {:<7} {:<7} {:>6.1}",
            task.id,
            task.language,
            task.kind,
            task.difficulty,
            // Capitals mark the wrong outcome.
            ["fails", "PASSES"][usize::from(verdict.before.passed)],
            ["FAILS", "passes"][usize::from(verdict.after.passed)],
            (verdict.before.duration + verdict.after.duration).as_secs_f64()
        );
        if !verdict.problems.is_empty() {
            for p in &verdict.problems {
                println!("    ! {p}");
            }
            bad.push(task.id.clone());
        }
    }
    let per_language: Vec<String> = Language::ALL
        .iter()
        .map(|l| format!("{} {l}", tasks.iter().filter(|t| t.language == *l).count()))
        .collect();
    println!(
        "\n{} tasks ({}) verified in {:.1} s; {} bad",
        tasks.len(),
        per_language.join(", "),
        started.elapsed().as_secs_f64(),
        bad.len()
    );
    if !bad.is_empty() {
        bail!("bad tasks: {}", bad.join(", "));
    }
    Ok(())
}

fn verify_one(task: &Task, work: &Path, cargo_target: &Path) -> Result<Verdict> {
    let timeout = TEST_BUDGET * 3;
    let source = tree_digest(&task.project_dir())?;
    task.copy_project(work)?;
    let mut problems = Vec::new();

    let copied = hash_files(work, &[])?;
    let before = task.run_test(work, timeout, cargo_target)?;
    if before.passed {
        problems.push("the test passes before the fix".to_owned());
    }
    // sh's "not found" / "not executable": the test fails, but not because of the bug.
    if matches!(before.exit, Some(126 | 127)) {
        problems.push(format!(
            "the test command could not run (exit {:?}):\n{}",
            before.exit,
            indent(&before.output_tail)
        ));
    }
    problems.extend(writes_by(&copied, work, "before")?);
    if tree_digest(work)? != source {
        problems.push("the copy's digest differs from project/'s after the test".to_owned());
    }

    task.overlay_solution(work)?;
    let solved = hash_files(work, &[])?;
    let after = task.run_test(work, timeout, cargo_target)?;
    if !after.passed {
        let exit = after
            .exit
            .map_or("killed".to_owned(), |c| format!("exit {c}"));
        problems.push(format!(
            "the test fails with the solution ({exit}):\n{}",
            indent(&after.output_tail)
        ));
    }
    problems.extend(writes_by(&solved, work, "after")?);

    for (run, when) in [(&before, "before"), (&after, "after")] {
        if run.timed_out {
            problems.push(format!("the test timed out {when} the fix"));
        } else if run.duration > TEST_BUDGET {
            problems.push(format!(
                "the test took {:.1} s {when} the fix (budget {} s)",
                run.duration.as_secs_f64(),
                TEST_BUDGET.as_secs()
            ));
        }
    }
    if tree_digest(&task.project_dir())? != source {
        problems.push("verification changed the corpus's project/".to_owned());
    }
    Ok(Verdict {
        before,
        after,
        problems,
    })
}

/// A problem when the test run left `dir` different from `snapshot`, build output included:
/// the runner's "left unchanged" must mean papayu changed nothing.
fn writes_by(
    snapshot: &BTreeMap<String, String>,
    dir: &Path,
    when: &str,
) -> Result<Option<String>> {
    let changes = listing_changes(snapshot, &hash_files(dir, &[])?);
    Ok((!changes.is_empty()).then(|| {
        format!(
            "the test writes into the project {when} the fix: {}",
            changes.join(" ")
        )
    }))
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn corpus_root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/tasks")
    }

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (rel, text) in files {
            let path = dir.join(rel);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, text).unwrap();
        }
    }

    const GOOD_TOML: &str = r#"id = "py-01-x"
language = "python"
kind = "bugfix"
goal = "fix add()"
test = "python3 -m unittest -q"
difficulty = 1
"#;

    /// A corpus with one task `py-01-x` whose task.toml is `toml`; returns the load error.
    fn load_error(toml: &str, files: &[(&str, &str)]) -> String {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("py-01-x");
        write(&dir, &[("task.toml", toml)]);
        write(&dir, files);
        format!("{:#}", load_tasks(root.path()).unwrap_err())
    }

    /// (relative path, content) pairs.
    type Files = &'static [(&'static str, &'static str)];

    const FILES: Files = &[
        ("project/calc.py", "def add(a, b):\n    return a - b\n"),
        ("solution/calc.py", "def add(a, b):\n    return a + b\n"),
    ];

    /// A task built in memory (no load-time checks) running `test` in `dir`.
    fn adhoc_task(dir: &Path, test: &str) -> Task {
        Task {
            id: "py-99-adhoc".to_owned(),
            language: Language::Python,
            kind: Kind::Bugfix,
            goal: "adhoc".to_owned(),
            test: test.to_owned(),
            difficulty: 1,
            notes: None,
            solution_deletes: Vec::new(),
            dir: dir.to_path_buf(),
        }
    }

    #[test]
    fn corpus_has_the_promised_shape() {
        let tasks = load_tasks(&corpus_root()).unwrap();
        assert!(tasks.len() >= 36, "only {} tasks", tasks.len());
        for language in Language::ALL {
            let n = tasks.iter().filter(|t| t.language == language).count();
            assert!(n >= 12, "only {n} {language} tasks");
        }
        for kind in [Kind::Bugfix, Kind::Feature, Kind::Rename] {
            assert!(tasks.iter().any(|t| t.kind == kind), "no {kind} task");
        }
        let ids: HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids.len(), tasks.len(), "duplicate ids");
        for task in &tasks {
            assert_eq!(
                task.dir.file_name().unwrap().to_str(),
                Some(task.id.as_str())
            );
            let project = list_files(&task.project_dir(), IGNORED_DIRS).unwrap();
            let solution = list_files(&task.solution_dir(), IGNORED_DIRS).unwrap();
            assert!(!project.is_empty(), "{}: empty project/", task.id);
            assert!(
                !solution.is_empty() || !task.solution_deletes.is_empty(),
                "{}: the solution changes nothing",
                task.id
            );
            for rel in &task.solution_deletes {
                assert!(
                    project.contains_key(rel),
                    "{}: deletes missing {rel}",
                    task.id
                );
            }
        }
    }

    #[test]
    fn py_01_is_the_sample_project() {
        let task = load_tasks(&corpus_root())
            .unwrap()
            .into_iter()
            .find(|t| t.id == "py-01-calc-add")
            .unwrap();
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/sample-project");
        assert_eq!(
            tree_listing(&task.project_dir()).unwrap(),
            tree_listing(&sample).unwrap()
        );
    }

    #[test]
    fn a_missing_corpus_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        assert!(load_tasks(&root.path().join("absent")).is_err());
        assert!(load_tasks(root.path()).unwrap().is_empty());
    }

    #[test]
    fn a_well_formed_task_loads() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("py-01-x");
        write(&dir, &[("task.toml", GOOD_TOML)]);
        write(&dir, FILES);
        let tasks = load_tasks(root.path()).unwrap();
        assert_eq!(tasks.len(), 1);
        assert_eq!(
            (tasks[0].language, tasks[0].kind),
            (Language::Python, Kind::Bugfix)
        );
    }

    #[test]
    fn malformed_tasks_are_errors_naming_the_file() {
        let cases: &[(String, Files, &str)] = &[
            (
                format!("{GOOD_TOML}colour = \"red\"\n"),
                FILES,
                "unknown field `colour`",
            ),
            (
                GOOD_TOML.replace("difficulty = 1\n", ""),
                FILES,
                "missing field `difficulty`",
            ),
            (
                GOOD_TOML.replace("py-01-x", "py-02-y"),
                FILES,
                "differs from the directory",
            ),
            (GOOD_TOML.replace("= 1", "= 4"), FILES, "difficulty 4"),
            (
                GOOD_TOML.replace("\"python\"", "\"rust\""),
                FILES,
                "starts with `rs-`",
            ),
            (
                GOOD_TOML.replace("bugfix", "refactor"),
                FILES,
                "unknown variant `refactor`",
            ),
            (
                GOOD_TOML.replace("python3 -m unittest -q", "pytest"),
                FILES,
                "starting with `python3 -m unittest`",
            ),
            (
                GOOD_TOML.to_owned(),
                &[
                    ("project/calc.py", "x = 1\n"),
                    ("solution/calc.py", "x = 1\n"),
                ],
                "identical to project/calc.py",
            ),
            (
                format!("{GOOD_TOML}solution_deletes = [\"gone.py\"]\n"),
                FILES,
                "`gone.py`, which is not a file in project/",
            ),
            (GOOD_TOML.to_owned(), &FILES[..1], "solution"),
        ];
        for (toml, files, expected) in cases {
            let error = load_error(toml, files);
            assert!(error.contains("py-01-x/task.toml"), "{error}");
            assert!(error.contains(expected), "expected {expected:?} in {error}");
        }
    }

    #[test]
    fn tree_digest_sees_names_and_bytes_and_ignores_build_output() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[("a.py", "x = 1\n"), ("pkg/b.py", "y = 2\n")]);
        let base = tree_digest(dir.path()).unwrap();
        write(
            dir.path(),
            &[
                ("__pycache__/a.pyc", "junk"),
                ("target/debug/x", "junk"),
                ("pkg/node_modules/m.js", "junk"),
                (".papa-yu/state", "junk"),
            ],
        );
        assert_eq!(tree_digest(dir.path()).unwrap(), base);
        write(dir.path(), &[("a.py", "x = 2\n")]);
        let changed = tree_digest(dir.path()).unwrap();
        assert_ne!(changed, base);
        write(dir.path(), &[("a.py", "x = 1\n")]);
        fs_err::rename(dir.path().join("pkg/b.py"), dir.path().join("pkg/c.py")).unwrap();
        assert_ne!(tree_digest(dir.path()).unwrap(), base);
    }

    #[test]
    fn copy_and_overlay_apply_the_solution_and_its_deletes() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("task");
        write(
            &dir,
            &[
                ("project/utils.py", "def f(): pass\n"),
                ("project/app.py", "from utils import f\n"),
                ("project/__pycache__/app.pyc", "junk"),
                ("solution/app.py", "from helpers import f\n"),
                ("solution/helpers.py", "def f(): pass\n"),
            ],
        );
        let mut task = adhoc_task(&dir, "true");
        task.solution_deletes = vec!["utils.py".to_owned()];
        let work = root.path().join("work");
        task.copy_project(&work).unwrap();
        assert_eq!(
            tree_listing(&work).unwrap().keys().collect::<Vec<_>>(),
            ["app.py", "utils.py"]
        );
        assert!(!work.join("__pycache__").exists());
        task.overlay_solution(&work).unwrap();
        assert_eq!(
            tree_listing(&work).unwrap().keys().collect::<Vec<_>>(),
            ["app.py", "helpers.py"]
        );
        assert_eq!(
            fs_err::read_to_string(work.join("app.py")).unwrap(),
            "from helpers import f\n"
        );
    }

    #[test]
    fn run_test_reports_exit_status_and_output() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("cargo-target");
        let failing = adhoc_task(dir.path(), "echo to-stdout; echo to-stderr >&2; exit 3");
        let run = failing
            .run_test(dir.path(), Duration::from_secs(10), &target)
            .unwrap();
        assert!(!run.passed && !run.timed_out);
        assert_eq!(run.exit, Some(3));
        assert_eq!(run.output_tail, "to-stdout\nto-stderr");
        let env = adhoc_task(dir.path(), "test \"$PYTHONDONTWRITEBYTECODE\" = 1");
        let run = env
            .run_test(dir.path(), Duration::from_secs(10), &target)
            .unwrap();
        assert!(run.passed);
    }

    #[test]
    fn run_test_kills_the_process_group_on_timeout() {
        let dir = tempfile::tempdir().unwrap();
        // Killing only `sh` would leave the subshell alive to write the marker afterwards.
        let task = adhoc_task(dir.path(), "(sleep 1; echo survived > marker) & wait");
        let run = task
            .run_test(dir.path(), Duration::from_millis(200), dir.path())
            .unwrap();
        assert!(run.timed_out && !run.passed);
        assert_eq!(run.exit, None);
        assert!(run.duration < Duration::from_secs(1));
        std::thread::sleep(Duration::from_millis(1300));
        assert!(!dir.path().join("marker").exists());
    }

    #[test]
    fn verify_flags_tests_that_pass_early_or_write_into_the_project() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("task");
        write(
            &dir,
            &[("project/a.txt", "before\n"), ("solution/a.txt", "after\n")],
        );
        let work = root.path().join("work");
        let target = root.path().join("target");

        let good = adhoc_task(&dir, "grep -q after a.txt");
        let verdict = verify_one(&good, &work, &target).unwrap();
        assert!(verdict.problems.is_empty(), "{:?}", verdict.problems);
        assert!(!verdict.before.passed && verdict.after.passed);
        fs_err::remove_dir_all(&work).unwrap();

        let sloppy = adhoc_task(&dir, "mkdir -p out && touch out/log; true");
        let problems = verify_one(&sloppy, &work, &target).unwrap().problems;
        assert!(
            problems[0].contains("passes before the fix"),
            "{problems:?}"
        );
        assert!(
            problems[1].contains("before the fix: +out/log"),
            "{problems:?}"
        );
        assert!(problems[2].contains("digest"), "{problems:?}");
    }
}
