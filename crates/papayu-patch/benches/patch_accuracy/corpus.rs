//! The real-diff corpus: `(before, diff, after)` triples read from git histories at run time.
//!
//! Two git processes per repository: `git log -p --full-index` gives every diff and the blob ids
//! of both sides, `git cat-file --batch` gives the blobs. Nothing of the repositories is
//! committed; the bench only reads them from the paths it is given.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One modified file of one commit.
pub struct Triple {
    /// Short repository name (`flask`, `express`, …).
    pub repo: String,
    pub commit: String,
    pub path: String,
    pub before: String,
    pub after: String,
    /// The diff as git printed it (hunks only, no headers).
    pub diff: Diff,
}

#[derive(Clone)]
pub struct Hunk {
    pub os: usize,
    pub oc: usize,
    pub ns: usize,
    pub nc: usize,
    pub section: String,
    /// Body lines with their marker, without line terminator (a CR, when the file has one, stays).
    pub lines: Vec<String>,
}

#[derive(Clone)]
pub struct Diff {
    pub hunks: Vec<Hunk>,
}

impl Diff {
    /// Parse the hunks of one file's diff; `\ No newline` lines are kept as body lines.
    pub fn parse(text: &str) -> Option<Diff> {
        let mut hunks = Vec::new();
        for l in text.split('\n') {
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
                    section: section.trim_end_matches('\r').to_owned(),
                    lines: Vec::new(),
                });
            } else if let Some(h) = hunks.last_mut()
                && l.starts_with([' ', '+', '-', '\\'])
            {
                h.lines.push(l.to_owned());
            }
        }
        (!hunks.is_empty()).then_some(Diff { hunks })
    }

    /// Render with `a/f` / `b/f` headers (the tools run with `-p1` on a file named `f`).
    pub fn render(&self) -> String {
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

/// The git directory of a work tree or bare repository.
pub fn git_dir(path: &Path) -> Option<PathBuf> {
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

/// A readable short name: `/work/.mirror/pallets+flask/repo` → `flask`.
pub fn short_name(repo: &Path) -> String {
    let mut parts = repo
        .components()
        .rev()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .filter(|c| !matches!(c.as_str(), "repo" | ".git"));
    let name = parts.next().unwrap_or_default();
    let name = name.trim_end_matches(".git");
    name.rsplit('+').next().unwrap_or(name).to_owned()
}

fn git_output(repo: &Path, args: &[&str]) -> Vec<u8> {
    Command::new("git")
        .arg("--git-dir")
        .arg(repo)
        .args(args)
        .stderr(Stdio::null())
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default()
}

/// One file section of `git log -p --full-index` output.
struct FileDiff {
    commit: String,
    path: String,
    old_blob: String,
    new_blob: String,
    body: String,
    added: usize,
    removed: usize,
}

fn split_log(log: &str) -> Vec<FileDiff> {
    let mut out: Vec<FileDiff> = Vec::new();
    let mut commit = String::new();
    let mut cur: Option<FileDiff> = None;
    let mut in_body = false;
    for l in log.split('\n') {
        if let Some(c) = l.strip_prefix("commit ")
            && c.len() == 40
            && c.bytes().all(|b| b.is_ascii_hexdigit())
        {
            out.extend(cur.take());
            commit = c.to_owned();
            in_body = false;
            continue;
        }
        if let Some(rest) = l.strip_prefix("diff --git a/") {
            out.extend(cur.take());
            let path = rest.split(" b/").next().unwrap_or(rest).to_owned();
            cur = Some(FileDiff {
                commit: commit.clone(),
                path,
                old_blob: String::new(),
                new_blob: String::new(),
                body: String::new(),
                added: 0,
                removed: 0,
            });
            in_body = false;
            continue;
        }
        let Some(f) = cur.as_mut() else { continue };
        if !in_body {
            if let Some(ids) = l.strip_prefix("index ") {
                let ids = ids.split(' ').next().unwrap_or_default();
                if let Some((a, b)) = ids.split_once("..") {
                    f.old_blob = a.to_owned();
                    f.new_blob = b.to_owned();
                }
            }
            if l.starts_with("@@ ") {
                in_body = true;
            } else {
                continue;
            }
        }
        if l.starts_with('+') {
            f.added += 1;
        } else if l.starts_with('-') {
            f.removed += 1;
        }
        f.body.push_str(l);
        f.body.push('\n');
    }
    out.extend(cur);
    out
}

/// Read blobs through one `git cat-file --batch` process, in request order.
fn blobs(repo: &Path, ids: &[&str]) -> Vec<Option<Vec<u8>>> {
    let Ok(mut child) = Command::new("git")
        .arg("--git-dir")
        .arg(repo)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        return vec![None; ids.len()];
    };
    let mut stdin = child.stdin.take().expect("stdin");
    let request: String = ids.iter().map(|i| format!("{i}\n")).collect();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(request.as_bytes());
    });
    let mut raw = Vec::new();
    let _ = child.stdout.take().expect("stdout").read_to_end(&mut raw);
    let _ = writer.join();
    let _ = child.wait();
    let mut out = Vec::with_capacity(ids.len());
    let mut at = 0usize;
    for _ in ids {
        let Some(nl) = raw[at..].iter().position(|&b| b == b'\n') else {
            out.push(None);
            continue;
        };
        let header = String::from_utf8_lossy(&raw[at..at + nl]).into_owned();
        at += nl + 1;
        let mut parts = header.split(' ');
        let (_, kind, size) = (parts.next(), parts.next(), parts.next());
        match (kind, size.and_then(|s| s.parse::<usize>().ok())) {
            (Some("blob"), Some(size)) if at + size <= raw.len() => {
                out.push(Some(raw[at..at + size].to_vec()));
                at += size + 1;
            }
            _ => out.push(None),
        }
    }
    out
}

fn triples_from(
    repo: &Path,
    name: &str,
    diffs: Vec<FileDiff>,
    keep: impl Fn(&str, &str) -> bool,
) -> Vec<Triple> {
    let ids: Vec<&str> = diffs
        .iter()
        .flat_map(|d| [d.old_blob.as_str(), d.new_blob.as_str()])
        .collect();
    let mut contents = blobs(repo, &ids).into_iter();
    let mut out = Vec::new();
    for d in &diffs {
        let (Some(Some(before)), Some(Some(after))) = (contents.next(), contents.next()) else {
            continue;
        };
        let (Ok(before), Ok(after)) = (String::from_utf8(before), String::from_utf8(after)) else {
            continue;
        };
        if before.len() > 200_000 || !keep(&before, &after) {
            continue;
        }
        let Some(diff) = Diff::parse(&d.body) else {
            continue;
        };
        out.push(Triple {
            repo: name.to_owned(),
            commit: d.commit.clone(),
            path: d.path.clone(),
            before,
            after,
            diff,
        });
    }
    out
}

/// Up to `want` triples from the newest non-merge commits: at most three modified text files per
/// commit, each with at most 150 changed lines, no CR anywhere, at most 200 KB.
pub fn extract(repo: &Path, want: usize) -> Vec<Triple> {
    let name = short_name(repo);
    let log = git_output(
        repo,
        &[
            "log",
            "--no-merges",
            "--no-renames",
            "--diff-filter=M",
            "-p",
            "--full-index",
            "--format=commit %H",
            "-n",
            "6000",
        ],
    );
    let log = String::from_utf8_lossy(&log);
    let mut per_commit: std::collections::HashMap<String, usize> = Default::default();
    let mut picked = Vec::new();
    // ask for more than needed: some are dropped for CRs, size or encoding
    for d in split_log(&log) {
        if picked.len() >= want + want / 2 + 16 {
            break;
        }
        let seen = per_commit.entry(d.commit.clone()).or_default();
        if *seen >= 3 || d.old_blob.is_empty() || d.body.is_empty() {
            continue;
        }
        *seen += 1;
        if d.added + d.removed == 0 || d.added + d.removed > 150 {
            continue;
        }
        picked.push(d);
    }
    let mut out = triples_from(repo, &name, picked, |b, a| {
        !b.contains('\r') && !a.contains('\r')
    });
    out.truncate(want);
    out
}

/// Real commits that change a file's line endings (most lines CRLF on one side, none on the
/// other), with the diff git printed for them.
pub fn eol_commits(repo: &Path) -> Vec<Triple> {
    let name = short_name(repo);
    let log = git_output(
        repo,
        &[
            "log",
            "--no-merges",
            "--no-renames",
            "--diff-filter=M",
            "-G",
            "\r$",
            "-p",
            "--full-index",
            "--format=commit %H",
        ],
    );
    let log = String::from_utf8_lossy(&log);
    let diffs: Vec<FileDiff> = split_log(&log)
        .into_iter()
        .filter(|d| !d.old_blob.is_empty() && !d.body.is_empty())
        .collect();
    let crlf_share = |s: &str| {
        let lines = s.matches('\n').count().max(1);
        s.matches("\r\n").count() * 100 / lines
    };
    triples_from(repo, &name, diffs, |b, a| {
        let (x, y) = (crlf_share(b), crlf_share(a));
        (x >= 90 && y == 0) || (x == 0 && y >= 90)
    })
}
