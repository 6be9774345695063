//! Crash tests: `papayu` is SIGKILLed at random moments — while `apply-plan` writes a 200-action
//! plan, while its check runs (and the user edits files the plan touched), while `undo` or
//! `redo` (some forced over a user's edit) runs. After `papayu recover` the tree is exactly the
//! before or the after state — except for the user's bytes, which are where the user left them
//! (or, for what a rollback or a forced undo replaced, in `.papa-yu/conflicts/` or
//! `.papa-yu/displaced/`): no torn tree, no lost user byte.
//!
//! The normal suite runs a few trials of each; `cargo nextest run -p papayu-cli --run-ignored
//! ignored-only -E 'test(crash_stress)' --no-capture` runs 500 of each.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
#![allow(clippy::disallowed_methods, clippy::disallowed_types, missing_docs)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_papayu");

/// One user configuration directory (so one journal key) for every papayu these tests run,
/// outside the user's own.
fn config_home() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

type Tree = BTreeMap<String, Option<Vec<u8>>>;

fn tree(root: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_str()
                .unwrap()
                .to_owned();
            if rel == ".papa-yu" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                out.insert(rel, None);
                walk(root, &e.path(), out);
            } else {
                out.insert(rel, Some(std::fs::read(e.path()).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A before tree and a 200-action plan: 120 creates in new dirs, 70 patches, 8 deletes, 2 dir deletes.
fn fixture(dir: &Path) -> PathBuf {
    let before = dir.join("before");
    let body = |i: usize| {
        (0..40)
            .map(|l| format!("line {l} of file {i}\n"))
            .collect::<String>()
    };
    for i in 0..80 {
        let p = before.join(format!("src/m{}/f{i}.txt", i % 8));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body(i)).unwrap();
    }
    for d in 0..2 {
        for j in 0..5 {
            let p = before.join(format!("old{d}/sub/g{j}.txt"));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("old {d} {j}\n")).unwrap();
        }
    }
    let mut actions = Vec::new();
    for i in 0..120 {
        actions.push(serde_json::json!({"kind": "CREATE_FILE", "path": format!("gen/d{}/n{i}.txt", i % 12), "content": body(1000 + i)}));
    }
    for i in 0..70 {
        let old = body(i);
        let sha = papayu_protocol::sha256_hex(old.as_bytes());
        let patch =
            format!("@@ -20,1 +20,1 @@\n-line 19 of file {i}\n+line 19 of file {i} CHANGED\n");
        actions.push(serde_json::json!({"kind": "PATCH_FILE", "path": format!("src/m{}/f{i}.txt", i % 8), "base_sha256": sha, "patch": patch}));
    }
    for i in 70..78 {
        actions.push(
            serde_json::json!({"kind": "DELETE_FILE", "path": format!("src/m{}/f{i}.txt", i % 8)}),
        );
    }
    actions.push(serde_json::json!({"kind": "DELETE_DIR", "path": "old0"}));
    actions.push(serde_json::json!({"kind": "DELETE_DIR", "path": "old1"}));
    assert_eq!(actions.len(), 200);
    let plan = dir.join("plan.json");
    std::fs::write(
        &plan,
        serde_json::json!({"actions": actions, "summary": "crash test"}).to_string(),
    )
    .unwrap();
    plan
}

fn papayu(project: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.arg("--project")
        .arg(project)
        .env("XDG_CONFIG_HOME", config_home())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn run_trials(trials: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let plan = fixture(tmp.path());
    let before_dir = tmp.path().join("before");
    let before = tree(&before_dir);
    // Reference run: the after state and how long a full apply takes.
    let reference = tmp.path().join("reference");
    copy(&before_dir, &reference);
    let started = Instant::now();
    let out = papayu(&reference)
        .args(["apply-plan", "--yes", "--no-check"])
        .arg(&plan)
        .output()
        .unwrap();
    let full = started.elapsed();
    assert!(
        out.status.success(),
        "reference apply failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = tree(&reference);
    assert_ne!(before, after);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(seed);
    let window = (full.as_micros() as u64 * 12 / 10).max(1000);
    let (mut old, mut new, mut finished) = (0, 0, 0);
    for t in 0..trials {
        let project = tmp.path().join(format!("t{t}"));
        copy(&before_dir, &project);
        let delay = Duration::from_micros(rng.next() % window);
        let mut child = papayu(&project)
            .args(["apply-plan", "--yes", "--no-check"])
            .arg(&plan)
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let killed = child.kill().is_ok();
        let status = child.wait().unwrap();
        if !killed || status.success() {
            finished += 1;
        }
        let rec = papayu(&project).arg("recover").output().unwrap();
        assert!(
            rec.status.success(),
            "trial {t}: recover failed: {}",
            String::from_utf8_lossy(&rec.stderr)
        );
        let got = tree(&project);
        if got == before {
            old += 1;
        } else if got == after {
            new += 1;
        } else {
            let diff: Vec<_> = got
                .keys()
                .chain(before.keys())
                .filter(|k| got.get(*k) != before.get(*k) && got.get(*k) != after.get(*k))
                .take(5)
                .collect();
            panic!(
                "trial {t} (seed {seed}, killed after {delay:?}): tree is neither before nor after; e.g. {diff:?}"
            );
        }
        // Recovery left nothing pending and released the lock.
        assert!(
            !project.join(".papa-yu/lock").exists(),
            "trial {t}: lock left behind"
        );
        std::fs::remove_dir_all(&project).unwrap();
    }
    println!(
        "crash trials: {trials}, full apply {full:?}, kill window {window} µs, before state {old}, after state {new} (apply finished before the kill in {finished}), seed {seed}"
    );
    assert_eq!(old + new, trials);
}

#[test]
fn crash_at_random_moments_leaves_before_or_after() {
    run_trials(24);
}

#[test]
#[ignore = "stress: run with --ignored (500 trials)"]
fn crash_stress() {
    run_trials(500);
}

/// Several `papayu apply-plan` processes started together on one project, which also holds a
/// stale lock (a dead pid): each applies or gets `ERR_LOCKED`, and no two are ever inside the
/// lock at once — their check (run while the lock is held) would see the other's marker.
#[test]
fn concurrent_processes_never_hold_the_project_lock_together() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join(".papa-yu")).unwrap();
    let marker = tmp.path().join("inside");
    let check = format!(
        "mkdir '{m}' || exit 7; sleep 0.05; rmdir '{m}'",
        m = marker.display()
    );
    let mut applied = 0;
    for round in 0..4 {
        let mut dead = Command::new("true").spawn().unwrap();
        let pid = dead.id();
        dead.wait().unwrap();
        std::fs::write(
            project.join(".papa-yu/lock"),
            format!("pid={pid}\nstart=1\n"),
        )
        .unwrap();
        let children: Vec<_> = (0..6)
            .map(|i| {
                let plan = tmp.path().join(format!("plan-{round}-{i}.json"));
                std::fs::write(
                    &plan,
                    serde_json::json!({"actions": [{"kind": "CREATE_FILE", "path": format!("r{round}/f{i}.txt"), "content": "x\n"}], "summary": "s"}).to_string(),
                )
                .unwrap();
                papayu(&project)
                    .args(["apply-plan", "--yes", "--check", &check])
                    .arg(&plan)
                    .spawn()
                    .unwrap()
            })
            .collect();
        for (i, child) in children.into_iter().enumerate() {
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let created = project.join(format!("r{round}/f{i}.txt")).exists();
            if out.status.success() {
                assert!(created, "{stderr}");
                applied += 1;
            } else {
                assert!(
                    stderr.contains("ERR_LOCKED"),
                    "round {round}, process {i}: {stderr}"
                );
                assert!(!created, "{stderr}");
            }
        }
        assert!(!project.join(".papa-yu/lock").exists());
    }
    assert!(applied >= 4, "{applied}");
}

/// Wait (at most 60 s) for `path` to appear.
fn wait_for(path: &Path) {
    let started = Instant::now();
    while !path.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// kill -9 the process group whose id `marker` holds (a check papayu started: its own group).
fn kill_group(marker: &Path) {
    if let Ok(pgid) = std::fs::read_to_string(marker)
        && let Ok(pgid) = pgid.trim().parse::<i32>()
    {
        let _ = Command::new("kill")
            .args(["-9", "--", &format!("-{pgid}")])
            .stderr(Stdio::null())
            .status();
    }
}

const USER: &[u8] = b"the user's own bytes\n";

/// What the user does while the check runs (or before a forced undo).
#[derive(Debug, Clone, Copy)]
enum Edit {
    None,
    /// Edit a file the plan patched.
    Patched,
    /// Add a file to a directory the plan created.
    IntoCreatedDir,
    /// Re-create a file the plan deleted.
    Deleted,
    /// Edit a file the plan created.
    Created,
}

impl Edit {
    const ALL: [Edit; 5] = [
        Edit::None,
        Edit::Patched,
        Edit::IntoCreatedDir,
        Edit::Deleted,
        Edit::Created,
    ];

    /// The path the user writes, and whether a rollback sets an original aside for it.
    fn path(self) -> Option<(&'static str, bool)> {
        match self {
            Edit::None => None,
            Edit::Patched => Some(("src/m5/f5.txt", true)),
            Edit::IntoCreatedDir => Some(("gen/d3/user.txt", false)),
            Edit::Deleted => Some(("src/m6/f70.txt", true)),
            Edit::Created => Some(("gen/d1/n1.txt", false)),
        }
    }

    fn apply(self, project: &Path) {
        if let Some((path, _)) = self.path() {
            std::fs::write(project.join(path), USER).unwrap();
        }
    }
}

/// The copies of `path` under `.papa-yu/<folder>/<tx>/`.
fn set_aside(project: &Path, folder: &str, path: &str) -> Vec<Vec<u8>> {
    let Ok(txs) = std::fs::read_dir(project.join(".papa-yu").join(folder)) else {
        return Vec::new();
    };
    txs.filter_map(|tx| std::fs::read(tx.unwrap().path().join(path)).ok())
        .collect()
}

/// Check the tree after a rollback of the plan on `before` while the user made `edit`: every
/// path as before, except the user's file (and the directories holding it), and the original
/// of what the user replaced set aside. Returns a description of what is wrong.
fn check_rolled_back(project: &Path, before: &Tree, edit: Edit) -> Result<(), String> {
    let mut expected = before.clone();
    if let Some((path, aside)) = edit.path() {
        let mut dir = Path::new(path).parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            expected.insert(d.to_str().unwrap().to_owned(), None);
            dir = d.parent();
        }
        let original = before.get(path).cloned().flatten();
        expected.insert(path.to_owned(), Some(USER.to_vec()));
        if aside {
            let copies = set_aside(project, "conflicts", path);
            if copies != [original.clone().unwrap()] {
                return Err(format!(
                    "lost user bytes: the original of {path} is not set aside ({} copies)",
                    copies.len()
                ));
            }
        }
    }
    let got = tree(project);
    if got == expected {
        Ok(())
    } else {
        let diff: Vec<_> = got
            .keys()
            .chain(expected.keys())
            .filter(|k| got.get(*k) != expected.get(*k))
            .take(5)
            .collect();
        Err(format!("torn tree: e.g. {diff:?}"))
    }
}

/// `papayu apply-plan` with a check that runs until killed; while it runs the user makes one of
/// the [`Edit`]s; papayu and the check are killed at a random moment; `papayu recover` must
/// leave the before tree with the user's bytes kept.
fn run_check_trials(trials: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let plan = fixture(tmp.path());
    let before_dir = tmp.path().join("before");
    let before = tree(&before_dir);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(seed);
    let mut conflicts = 0;
    for t in 0..trials {
        let project = tmp.path().join(format!("c{t}"));
        copy(&before_dir, &project);
        let marker = tmp.path().join(format!("c{t}.check"));
        let check = format!(
            "echo $$ > '{m}.tmp' && mv '{m}.tmp' '{m}' && exec sleep 60",
            m = marker.display()
        );
        let edit = Edit::ALL[(rng.next() % Edit::ALL.len() as u64) as usize];
        let mut child = papayu(&project)
            .args(["apply-plan", "--yes", "--check", &check])
            .arg(&plan)
            .spawn()
            .unwrap();
        wait_for(&marker);
        edit.apply(&project);
        std::thread::sleep(Duration::from_micros(rng.next() % 20_000));
        child.kill().unwrap();
        child.wait().unwrap();
        kill_group(&marker);
        let rec = papayu(&project).arg("recover").output().unwrap();
        let stderr = String::from_utf8_lossy(&rec.stderr);
        assert!(rec.status.success(), "trial {t}: recover failed: {stderr}");
        if let Err(e) = check_rolled_back(&project, &before, edit) {
            panic!("check trial {t} (seed {seed}, {edit:?}): {e}\n{stderr}");
        }
        if stderr.contains("ERR_ROLLBACK_CONFLICT") {
            conflicts += 1;
        }
        assert!(
            !project.join(".papa-yu/lock").exists(),
            "trial {t}: lock note left"
        );
        std::fs::remove_dir_all(&project).unwrap();
    }
    println!(
        "kill during checks: {trials} trials, 0 torn trees, 0 lost user bytes ({conflicts} rollback conflicts reported), seed {seed}"
    );
}

/// A project (with its journal) in state `from`, reverted by `papayu undo|redo` killed at a
/// random moment; half of the trials first edit a file and force it. After `papayu recover`
/// the tree is `from` (with the user's edit) or `to` (with the user's edit set aside).
fn run_revert_trials(trials: usize, redo: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let plan = fixture(tmp.path());
    let before_dir = tmp.path().join("before");
    let applied = tmp.path().join("applied");
    copy(&before_dir, &applied);
    let out = papayu(&applied)
        .args(["apply-plan", "--yes", "--no-check"])
        .arg(&plan)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verb = if redo { "redo" } else { "undo" };
    let template = if redo {
        let undone = tmp.path().join("undone");
        copy(&applied, &undone);
        assert!(papayu(&undone).arg("undo").status().unwrap().success());
        undone
    } else {
        applied.clone()
    };
    let from = tree(&template);
    let to = if redo {
        tree(&applied)
    } else {
        tree(&before_dir)
    };
    assert_ne!(from, to);
    // How long a whole run takes: the kill window.
    let reference = tmp.path().join("reference");
    copy(&template, &reference);
    let started = Instant::now();
    assert!(papayu(&reference).arg(verb).status().unwrap().success());
    let window = (started.elapsed().as_micros() as u64 * 12 / 10).max(1000);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(seed);
    let edited = "src/m5/f5.txt";
    let (mut stayed, mut reverted) = (0, 0);
    for t in 0..trials {
        let project = tmp.path().join(format!("r{t}"));
        copy(&template, &project);
        let force = rng.next() % 2 == 1;
        let mut cmd = papayu(&project);
        cmd.arg(verb);
        let (mut from, to) = (from.clone(), to.clone());
        if force {
            std::fs::write(project.join(edited), USER).unwrap();
            cmd.arg("--force");
            from.insert(edited.to_owned(), Some(USER.to_vec()));
        }
        let mut child = cmd.spawn().unwrap();
        std::thread::sleep(Duration::from_micros(rng.next() % window));
        let _ = child.kill();
        child.wait().unwrap();
        let rec = papayu(&project).arg("recover").output().unwrap();
        let stderr = String::from_utf8_lossy(&rec.stderr);
        assert!(
            rec.status.success(),
            "{verb} trial {t}: recover failed: {stderr}"
        );
        let got = tree(&project);
        if got == from {
            stayed += 1;
        } else if got == to {
            reverted += 1;
            if force && set_aside(&project, "displaced", edited) != [USER.to_vec()] {
                panic!(
                    "{verb} trial {t} (seed {seed}): lost user bytes: {edited} replaced, not set aside"
                );
            }
        } else {
            let diff: Vec<_> = got
                .keys()
                .chain(from.keys())
                .filter(|k| got.get(*k) != from.get(*k) && got.get(*k) != to.get(*k))
                .take(5)
                .collect();
            panic!(
                "{verb} trial {t} (seed {seed}, force {force}): torn tree, e.g. {diff:?}\n{stderr}"
            );
        }
        assert!(
            !project.join(".papa-yu/lock").exists(),
            "trial {t}: lock note left"
        );
        std::fs::remove_dir_all(&project).unwrap();
    }
    println!(
        "kill during {verb}: {trials} trials, 0 torn trees, 0 lost user bytes (not yet {verb}ne {stayed}, {verb}ne {reverted}), kill window {window} µs, seed {seed}"
    );
}

#[test]
fn crash_during_checks_keeps_the_users_bytes_and_rolls_back_the_rest() {
    run_check_trials(6);
}

#[test]
fn crash_during_undo_and_redo_leaves_before_or_after() {
    run_revert_trials(6, false);
    run_revert_trials(4, true);
}

#[test]
#[ignore = "stress: run with --run-ignored (500 trials)"]
fn crash_stress_during_checks() {
    run_check_trials(500);
}

#[test]
#[ignore = "stress: run with --run-ignored (500 trials each)"]
fn crash_stress_during_undo_and_redo() {
    run_revert_trials(500, false);
    run_revert_trials(500, true);
}
