//! Each allow-list entry's argument rules: its options and what its arguments may be.

use super::value::Value;

/// One option an entry accepts: its spelling and whether it takes the next word as value.
pub(super) type Flag = (&'static str, Value);

pub(super) struct Rules {
    pub(super) flags: &'static [Flag],
    /// What positional arguments are (`None`: none allowed).
    pub(super) positional: Option<Value>,
    /// After `--`, arguments are of this kind.
    pub(super) after_dashes: Option<Value>,
    /// At most this many positional arguments.
    pub(super) max_positional: usize,
}

pub(super) fn rules(entry: &str) -> Rules {
    use Value as V;
    let r = |flags, positional, after_dashes, max_positional| Rules {
        flags,
        positional,
        after_dashes,
        max_positional,
    };
    match entry {
        "git status" => r(
            &[
                ("-s", V::None),
                ("--short", V::None),
                ("-b", V::None),
                ("--branch", V::None),
                ("--porcelain", V::None),
            ],
            Some(V::Path),
            Some(V::Path),
            16,
        ),
        "git diff" => r(
            &[
                ("--stat", V::None),
                ("--cached", V::None),
                ("--staged", V::None),
                ("--name-only", V::None),
                ("--name-status", V::None),
                ("--no-color", V::None),
            ],
            Some(V::Ref),
            Some(V::Path),
            16,
        ),
        "git log" => r(
            &[
                ("--oneline", V::None),
                ("--stat", V::None),
                ("--graph", V::None),
                ("--no-color", V::None),
                ("-n", V::Number),
                ("--max-count", V::Number),
            ],
            Some(V::Ref),
            Some(V::Path),
            16,
        ),
        "git add" => r(
            &[
                ("-A", V::None),
                ("--all", V::None),
                ("-u", V::None),
                ("--update", V::None),
            ],
            Some(V::Path),
            Some(V::Path),
            64,
        ),
        "git commit" => r(
            &[
                ("-m", V::Text),
                ("--message", V::Text),
                ("-a", V::None),
                ("--all", V::None),
            ],
            None,
            None,
            0,
        ),
        "git checkout" => r(&[("-b", V::Ref)], Some(V::Ref), Some(V::Path), 1),
        "git branch" => r(
            &[
                ("--list", V::None),
                ("-a", V::None),
                ("-v", V::None),
                ("--show-current", V::None),
            ],
            Some(V::Ref),
            None,
            1,
        ),
        "git fetch" => r(
            &[
                ("--all", V::None),
                ("--tags", V::None),
                ("--prune", V::None),
            ],
            Some(V::Ref),
            None,
            2,
        ),
        "git pull" => r(
            &[
                ("--ff-only", V::None),
                ("--rebase", V::None),
                ("--no-rebase", V::None),
            ],
            Some(V::Ref),
            None,
            2,
        ),
        "git push" => r(
            &[
                ("-u", V::None),
                ("--set-upstream", V::None),
                ("--tags", V::None),
            ],
            Some(V::Ref),
            None,
            2,
        ),
        "npm ci" => r(
            &[
                ("--no-audit", V::None),
                ("--no-fund", V::None),
                ("--ignore-scripts", V::None),
            ],
            None,
            None,
            0,
        ),
        "npm install" => r(
            &[
                ("--no-audit", V::None),
                ("--no-fund", V::None),
                ("--ignore-scripts", V::None),
                ("-D", V::None),
                ("--save-dev", V::None),
            ],
            Some(V::NpmPackage),
            None,
            16,
        ),
        "npm test" => r(&[], None, None, 0),
        "npm run" => r(&[], Some(V::NpmScript), None, 1),
        "cargo build" | "cargo test" | "cargo check" | "cargo clippy" => r(
            &[
                ("--release", V::None),
                ("--workspace", V::None),
                ("--all-targets", V::None),
                ("--all-features", V::None),
                ("--no-default-features", V::None),
                ("--lib", V::None),
                ("--tests", V::None),
                ("-q", V::None),
                ("--quiet", V::None),
                ("-p", V::CargoName),
                ("--package", V::CargoName),
                ("--features", V::CargoName),
            ],
            if entry == "cargo test" {
                Some(V::CargoName)
            } else {
                None
            },
            Some(V::CargoTrailing),
            1,
        ),
        "cargo fmt" => r(
            &[
                ("--all", V::None),
                ("--check", V::None),
                ("-p", V::CargoName),
                ("--package", V::CargoName),
            ],
            None,
            None,
            0,
        ),
        "python3 -m pytest" => r(
            &[
                ("-q", V::None),
                ("-x", V::None),
                ("-v", V::None),
                ("-k", V::Expression),
                ("--maxfail", V::Number),
            ],
            Some(V::Path),
            None,
            16,
        ),
        "pip install" => r(
            &[("-U", V::None), ("--upgrade", V::None)],
            Some(V::PipPackage),
            None,
            16,
        ),
        _ => r(&[], None, None, 0),
    }
}
