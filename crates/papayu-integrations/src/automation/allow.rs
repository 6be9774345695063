//! The allow-list: which built-in entries papayu may run.

use std::collections::BTreeSet;

use crate::error::AutomationError;

/// Every command papayu can run, as `program subcommand` (the built-in allow-list).
pub const BUILTIN: &[&str] = &[
    "git status",
    "git diff",
    "git log",
    "git add",
    "git commit",
    "git checkout",
    "git branch",
    "git fetch",
    "git pull",
    "git push",
    "npm ci",
    "npm install",
    "npm test",
    "npm run",
    "cargo build",
    "cargo test",
    "cargo check",
    "cargo clippy",
    "cargo fmt",
    "python3 -m pytest",
    "pip install",
];

/// The commands papayu may run: the built-in list or a part of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowList(BTreeSet<&'static str>);

impl AllowList {
    /// Every built-in entry.
    pub fn builtin() -> AllowList {
        AllowList(BUILTIN.iter().copied().collect())
    }

    /// The entries of a comma-separated list (`git status, cargo test`); an empty list allows
    /// nothing; an entry that is not built in is an error.
    pub fn parse(raw: &str) -> Result<AllowList, AutomationError> {
        let mut out = BTreeSet::new();
        for entry in raw
            .split(',')
            .map(|e| e.split_whitespace().collect::<Vec<_>>().join(" "))
        {
            if entry.is_empty() {
                continue;
            }
            let known = BUILTIN.iter().find(|b| **b == entry).ok_or_else(|| {
                AutomationError::AllowList {
                    entry: entry.clone(),
                    known: BUILTIN.join(", "),
                }
            })?;
            out.insert(*known);
        }
        Ok(AllowList(out))
    }

    /// The entries, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().copied().collect()
    }

    /// Whether `entry` is allowed.
    pub fn allows(&self, entry: &str) -> bool {
        self.0.contains(entry)
    }
}
