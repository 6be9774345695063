//! Git awareness without taking over the user's git: which files a plan touches have uncommitted
//! changes, one commit per applied transaction when asked, and the commit a transaction became.
//! It runs `git` in the project root and changes nothing but the commit the user asked for.

use std::process::Command;

use camino::{Utf8Path, Utf8PathBuf};

/// The trailer naming the transaction in the message of the commit papayu made for it.
pub const TX_TRAILER: &str = "Papayu-Transaction";

/// Why a git command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitError {
    /// `git` could not be started.
    #[error("cannot run git: {source}")]
    Spawn {
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A git command exited with an error.
    #[error("`git {command}` failed: {message}")]
    Failed {
        /// The subcommand and its options.
        command: String,
        /// What git said on stderr.
        message: String,
    },
}

/// A commit papayu made for a transaction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TxCommit {
    /// The full commit id.
    pub id: String,
    /// Its subject line.
    pub subject: String,
    /// Whether it is the current `HEAD`.
    pub is_head: bool,
}

impl TxCommit {
    /// The short id (12 hex digits).
    pub fn short(&self) -> &str {
        self.id.get(..12).unwrap_or(&self.id)
    }

    /// What the user can do with the commit once the transaction was undone in the work tree.
    pub fn after_undo_hint(&self) -> String {
        let short = self.short();
        if self.is_head {
            format!(
                "the undone transaction was committed as {short} (\"{}\"): the work tree is back, the commit is still there; drop it with `git reset --soft {short}~1` (it is HEAD), or record the undo with `git commit -am \"Revert {short}\"`",
                self.subject
            )
        } else {
            format!(
                "the undone transaction was committed as {short} (\"{}\"), which is not HEAD any more: record the undo with `git commit -am \"Revert {short}\"` (or `git revert {short}` after `papayu redo`)",
                self.subject
            )
        }
    }
}

/// The work tree papayu's project is in.
#[derive(Debug, Clone)]
pub struct Git {
    root: Utf8PathBuf,
}

impl Git {
    /// The repository the project at `root` is in; `None` when git is not installed or `root`
    /// is not in a work tree.
    pub fn open(root: &Utf8Path) -> Option<Git> {
        let git = Git {
            root: root.to_owned(),
        };
        let inside = git.run(&["rev-parse", "--is-inside-work-tree"]).ok()?;
        (inside.trim() == "true").then_some(git)
    }

    fn run(&self, args: &[&str]) -> Result<String, GitError> {
        let out = Command::new("git")
            .args(args)
            .current_dir(&self.root)
            .output()
            .map_err(|source| GitError::Spawn { source })?;
        if !out.status.success() {
            return Err(GitError::Failed {
                command: args
                    .iter()
                    .take_while(|a| **a != "--")
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" "),
                message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn with_paths<'a>(args: &[&'a str], paths: &'a [String]) -> Vec<&'a str> {
        let mut all = args.to_vec();
        all.push("--");
        all.extend(paths.iter().map(String::as_str));
        all
    }

    /// Which of `paths` (relative to the project root) have changes git has not committed:
    /// modified, staged, or untracked and not ignored.
    ///
    /// # Errors
    ///
    /// [`GitError`] when `git status` fails.
    pub fn uncommitted(&self, paths: &[String]) -> Result<Vec<String>, GitError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let out = self.run(&Self::with_paths(
            &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
            paths,
        ))?;
        // Status paths are relative to the repository root; the project may be beneath it.
        let prefix = self.run(&["rev-parse", "--show-prefix"])?;
        let prefix = prefix.trim_end_matches('\n');
        let mut dirty = Vec::new();
        let mut entries = out.split('\0').filter(|e| !e.is_empty());
        while let Some(entry) = entries.next() {
            let (status, path) = entry.split_at(entry.len().min(3));
            if status.starts_with('R') || status.starts_with('C') {
                // A rename lists its source next.
                entries.next();
            }
            dirty.push(path.strip_prefix(prefix).unwrap_or(path).to_owned());
        }
        dirty.sort();
        dirty.dedup();
        Ok(dirty)
    }

    /// Commit exactly `paths` (the files a transaction touched) with `summary` as the subject
    /// and the transaction in a trailer; the user's other staged changes stay staged and out of
    /// the commit. `None` when the paths hold no change to commit.
    ///
    /// # Errors
    ///
    /// [`GitError`] when a git command fails (no identity configured, a hook refused).
    pub fn commit(
        &self,
        paths: &[String],
        summary: &str,
        tx_id: &str,
    ) -> Result<Option<TxCommit>, GitError> {
        let tracked = self.run(&Self::with_paths(&["ls-files", "-z"], paths))?;
        let mut candidates: Vec<String> = paths
            .iter()
            .filter(|p| self.root.join(p).is_file())
            .cloned()
            .chain(
                tracked
                    .split('\0')
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned),
            )
            .collect();
        candidates.sort();
        candidates.dedup();
        if candidates.is_empty() {
            return Ok(None);
        }
        self.run(&Self::with_paths(&["add", "-A"], &candidates))?;
        let staged = self.run(&Self::with_paths(
            &["diff", "--cached", "--name-only", "-z", "--relative"],
            &candidates,
        ))?;
        let staged: Vec<String> = staged
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        if staged.is_empty() {
            return Ok(None);
        }
        let subject = summary
            .lines()
            .find(|l| !l.trim().is_empty())
            .map_or("papayu: apply a plan", str::trim);
        let message = format!("{subject}\n\n{summary}\n\n{TX_TRAILER}: {tx_id}\n");
        self.run(&Self::with_paths(
            &["commit", "--quiet", "-m", &message],
            &staged,
        ))?;
        let id = self.run(&["rev-parse", "HEAD"])?.trim().to_owned();
        Ok(Some(TxCommit {
            id,
            subject: subject.to_owned(),
            is_head: true,
        }))
    }

    /// The commit papayu made for transaction `tx_id`, among the last 500 of `HEAD`.
    ///
    /// # Errors
    ///
    /// [`GitError`] when `git log` fails (a repository without commits has none).
    pub fn commit_of(&self, tx_id: &str) -> Result<Option<TxCommit>, GitError> {
        let Ok(head) = self.run(&["rev-parse", "HEAD"]) else {
            return Ok(None);
        };
        let grep = format!("--grep=^{TX_TRAILER}: {tx_id}$");
        let out = self.run(&["log", "-n", "500", "--format=%H%x1f%s", &grep])?;
        Ok(out
            .lines()
            .next()
            .and_then(|l| l.split_once('\u{1f}'))
            .map(|(id, subject)| TxCommit {
                is_head: id == head.trim(),
                id: id.to_owned(),
                subject: subject.to_owned(),
            }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(root: &Utf8Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(root)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn repo() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        sh(&root, &["init", "-q"]);
        sh(&root, &["config", "user.name", "T"]);
        sh(&root, &["config", "user.email", "t@example.com"]);
        sh(&root, &["config", "commit.gpgsign", "false"]);
        fs_err::write(root.join("a.txt"), "a\n").unwrap();
        fs_err::write(root.join("b.txt"), "b\n").unwrap();
        sh(&root, &["add", "."]);
        sh(&root, &["commit", "-q", "-m", "init"]);
        (dir, root)
    }

    #[test]
    fn outside_a_repository_there_is_no_git() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        assert!(Git::open(root).is_none());
    }

    #[test]
    fn uncommitted_lists_only_the_touched_files_that_changed() {
        let (_dir, root) = repo();
        let git = Git::open(&root).unwrap();
        fs_err::write(root.join("a.txt"), "changed\n").unwrap();
        fs_err::write(root.join("new.txt"), "n\n").unwrap();
        let touched = ["a.txt", "b.txt", "new.txt", "absent.txt"].map(String::from);
        assert_eq!(git.uncommitted(&touched).unwrap(), ["a.txt", "new.txt"]);
        assert!(git.uncommitted(&["b.txt".into()]).unwrap().is_empty());
    }

    #[test]
    fn a_transaction_commit_holds_its_paths_only_and_is_found_again() {
        let (_dir, root) = repo();
        let git = Git::open(&root).unwrap();
        // The user's own staged change stays staged and out of the commit.
        fs_err::write(root.join("b.txt"), "user\n").unwrap();
        sh(&root, &["add", "b.txt"]);
        fs_err::write(root.join("a.txt"), "papayu\n").unwrap();
        fs_err::write(root.join("c.txt"), "created\n").unwrap();
        fs_err::create_dir(root.join("empty")).unwrap();
        let touched = ["a.txt", "c.txt", "empty"].map(String::from);
        let c = git
            .commit(&touched, "Make a papayu's\n\n1. edit a", "tx-123")
            .unwrap()
            .unwrap();
        assert_eq!(c.subject, "Make a papayu's");
        assert!(c.is_head);
        let shown = git
            .run(&["show", "--name-only", "--format=%B", "HEAD"])
            .unwrap();
        assert!(shown.contains("Papayu-Transaction: tx-123"), "{shown}");
        assert!(
            shown.contains("a.txt") && shown.contains("c.txt"),
            "{shown}"
        );
        assert!(!shown.contains("b.txt"), "{shown}");
        let staged = git.run(&["diff", "--cached", "--name-only"]).unwrap();
        assert_eq!(staged.trim(), "b.txt");

        assert_eq!(git.commit_of("tx-123").unwrap(), Some(c.clone()));
        assert_eq!(git.commit_of("tx-999").unwrap(), None);
        assert!(c.after_undo_hint().contains("git reset --soft"));
        // Nothing left to commit in those paths.
        assert_eq!(git.commit(&touched, "again", "tx-124").unwrap(), None);
    }
}
