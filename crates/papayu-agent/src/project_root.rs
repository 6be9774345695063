//! Which directory is the project: the habit of git and cargo — walk up from where the user
//! stands to the nearest `.papa-yu/`, else the repository or manifest that holds it.
//!
//! Discovery only looks (`stat` calls); it never creates anything, so a read-only command can
//! use it without leaving a `.papa-yu/` behind.
//!
//! ```
//! use papayu_agent::project_root::{Discovery, Reason};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tmp = tempfile::tempdir()?;
//! let root = camino::Utf8Path::from_path(tmp.path()).ok_or("not UTF-8")?;
//! fs_err::create_dir_all(root.join("repo/.git"))?;
//! fs_err::create_dir_all(root.join("repo/src/deep"))?;
//! let found = Discovery::new(root.join("repo/src/deep")).discover()?;
//! assert_eq!(found.root, root.join("repo"));
//! assert_eq!(found.reason, Reason::Vcs { marker: ".git".into() });
//! assert_eq!(found.reason.to_string(), "the nearest repository root (it holds .git)");
//! # Ok(())
//! # }
//! ```

use std::fmt;

use camino::{Utf8Path, Utf8PathBuf};

/// The directory papayu keeps its state in, beneath a project root.
pub const STATE_DIR: &str = ".papa-yu";

/// Markers of a version-control repository's root.
pub const VCS_MARKERS: &[&str] = &[".git", ".hg", ".jj", ".svn", "_darcs", ".pijul", ".fossil"];

/// Manifests that mark a project's root when it is in no repository.
pub const MANIFESTS: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Gemfile",
    "composer.json",
    "mix.exs",
    "deno.json",
    "CMakeLists.txt",
    "Makefile",
];

/// Why a directory was chosen as the project root.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// The user named it (`--project`).
    Given,
    /// The nearest directory holding papayu's own `.papa-yu/`.
    StateDir,
    /// The nearest repository root (no `.papa-yu/` within the repository).
    Vcs {
        /// The marker found (`.git`, `.hg`, `.jj`, …).
        marker: String,
    },
    /// The nearest directory with a manifest (no repository around it).
    Manifest {
        /// The manifest's file name (`Cargo.toml`, `package.json`, …).
        manifest: String,
    },
    /// Nothing marks a project above the start: the start directory itself.
    Start,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Given => f.write_str("given with --project"),
            Reason::StateDir => write!(f, "the nearest directory holding {STATE_DIR}/"),
            Reason::Vcs { marker } => write!(f, "the nearest repository root (it holds {marker})"),
            Reason::Manifest { manifest } => {
                write!(f, "the nearest directory with a manifest ({manifest})")
            }
            Reason::Start => f.write_str("the current directory (no project marker above it)"),
        }
    }
}

/// A discovered project root and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProjectRoot {
    /// The root, absolute.
    pub root: Utf8PathBuf,
    /// Why.
    #[serde(flatten)]
    pub reason: Reason,
}

impl ProjectRoot {
    /// Whether papayu has state there yet (`.papa-yu/` exists).
    pub fn has_state(&self) -> bool {
        self.root.join(STATE_DIR).is_dir()
    }
}

/// Why no root could be chosen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RootError {
    /// The directory the user named does not exist or is not a directory.
    #[error("{path}: no such directory")]
    NotADirectory {
        /// The path as given (made absolute).
        path: Utf8PathBuf,
    },
    /// A path is not valid UTF-8.
    #[error("{path} is not a UTF-8 path")]
    NotUtf8 {
        /// The path, lossily shown.
        path: String,
    },
}

/// How to find the project root: from a start directory (the current one), or the directory the
/// user named, never above the ceilings.
#[derive(Debug, Clone)]
pub struct Discovery {
    start: Utf8PathBuf,
    given: Option<Utf8PathBuf>,
    ceilings: Vec<Utf8PathBuf>,
}

impl Discovery {
    /// Discovery starting at `start` (made absolute by the caller: the current directory).
    pub fn new(start: impl Into<Utf8PathBuf>) -> Self {
        Self {
            start: start.into(),
            given: None,
            ceilings: Vec::new(),
        }
    }

    /// The directory the user named (`--project`): it wins, and must exist. A relative path is
    /// taken from the start directory.
    pub fn given(mut self, dir: Option<impl Into<Utf8PathBuf>>) -> Self {
        self.given = dir.map(Into::into);
        self
    }

    /// A directory the walk does not enter from below (like `GIT_CEILING_DIRECTORIES`): the
    /// home directory, so a stray `~/.papa-yu/` or a dotfiles repository in `~` does not
    /// swallow every project beneath it. Starting *at* a ceiling still finds it.
    pub fn ceiling(mut self, dir: impl Into<Utf8PathBuf>) -> Self {
        self.ceilings.push(dir.into());
        self
    }

    /// Choose the root: `--project`; else walking up, the nearest `.papa-yu/` within the
    /// repository the start is in; else the nearest repository root; else the nearest
    /// manifest; else the start directory.
    ///
    /// # Errors
    ///
    /// [`RootError::NotADirectory`] when the given directory is not one.
    pub fn discover(&self) -> Result<ProjectRoot, RootError> {
        if let Some(given) = &self.given {
            let path = absolute(&self.start, given);
            if !path.is_dir() {
                return Err(RootError::NotADirectory { path });
            }
            return Ok(ProjectRoot {
                root: path,
                reason: Reason::Given,
            });
        }
        let start = normal(&self.start);
        let mut manifest: Option<(Utf8PathBuf, &str)> = None;
        for dir in start.ancestors() {
            if dir != start && self.ceilings.iter().any(|c| normal(c) == dir) {
                break;
            }
            if dir.join(STATE_DIR).is_dir() {
                return Ok(found(dir, Reason::StateDir));
            }
            if let Some(marker) = VCS_MARKERS.iter().find(|m| dir.join(m).exists()) {
                // A `.papa-yu/` above the repository belongs to an enclosing project.
                return Ok(found(
                    dir,
                    Reason::Vcs {
                        marker: (*marker).to_owned(),
                    },
                ));
            }
            if manifest.is_none()
                && let Some(m) = MANIFESTS.iter().find(|m| dir.join(m).is_file())
            {
                manifest = Some((dir.to_owned(), m));
            }
        }
        Ok(match manifest {
            Some((dir, m)) => found(
                &dir,
                Reason::Manifest {
                    manifest: m.to_owned(),
                },
            ),
            None => found(&start, Reason::Start),
        })
    }
}

fn found(dir: &Utf8Path, reason: Reason) -> ProjectRoot {
    ProjectRoot {
        root: dir.to_owned(),
        reason,
    }
}

/// `path` taken from `base` when relative, with `.` and `..` resolved lexically.
fn absolute(base: &Utf8Path, path: &Utf8Path) -> Utf8PathBuf {
    normal(&base.join(path))
}

/// `.` and `..` components resolved without touching the disk (so `..` of a symlink is its
/// lexical parent, as a shell's `cd ..` has it).
fn normal(path: &Utf8Path) -> Utf8PathBuf {
    let mut out = Utf8PathBuf::new();
    for c in path.components() {
        match c {
            camino::Utf8Component::CurDir => {}
            camino::Utf8Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_str()),
        }
    }
    out
}

/// `path` as UTF-8, or the error naming it.
///
/// # Errors
///
/// [`RootError::NotUtf8`].
pub fn utf8(path: std::path::PathBuf) -> Result<Utf8PathBuf, RootError> {
    Utf8PathBuf::from_path_buf(path).map_err(|p| RootError::NotUtf8 {
        path: p.display().to_string(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn tmp() -> (tempfile::TempDir, Utf8PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let p = Utf8PathBuf::from_path_buf(fs_err::canonicalize(t.path()).unwrap()).unwrap();
        (t, p)
    }

    fn mkdirs(root: &Utf8Path, dirs: &[&str]) {
        for d in dirs {
            fs_err::create_dir_all(root.join(d)).unwrap();
        }
    }

    fn touch(root: &Utf8Path, file: &str) {
        fs_err::write(root.join(file), "").unwrap();
    }

    fn discover(start: &Utf8Path, ceiling: &Utf8Path) -> ProjectRoot {
        Discovery::new(start).ceiling(ceiling).discover().unwrap()
    }

    #[test]
    fn a_subdirectory_finds_the_state_dir_above_it() {
        let (_t, p) = tmp();
        mkdirs(&p, &["proj/.papa-yu", "proj/.git", "proj/src/a/b"]);
        let r = discover(&p.join("proj/src/a/b"), &p);
        assert_eq!(r.root, p.join("proj"));
        assert_eq!(r.reason, Reason::StateDir);
        assert!(r.has_state());
    }

    #[test]
    fn nested_projects_each_keep_their_own_root() {
        let (_t, p) = tmp();
        // An outer project with state, an inner repository inside it, and an inner package
        // without a repository of its own.
        mkdirs(
            &p,
            &[
                "outer/.papa-yu",
                "outer/.git",
                "outer/vendor/inner/.git",
                "outer/vendor/inner/src",
                "outer/pkg/src",
            ],
        );
        touch(&p, "outer/pkg/package.json");
        let inner = discover(&p.join("outer/vendor/inner/src"), &p);
        assert_eq!(inner.root, p.join("outer/vendor/inner"));
        assert_eq!(
            inner.reason,
            Reason::Vcs {
                marker: ".git".into()
            }
        );
        // A package inside the outer project is part of it: the state dir wins.
        let pkg = discover(&p.join("outer/pkg/src"), &p);
        assert_eq!(pkg.root, p.join("outer"));
        assert_eq!(pkg.reason, Reason::StateDir);
        // Once the inner repository has state of its own, it is found first.
        mkdirs(&p, &["outer/vendor/inner/.papa-yu"]);
        let inner = discover(&p.join("outer/vendor/inner/src"), &p);
        assert_eq!(inner.root, p.join("outer/vendor/inner"));
        assert_eq!(inner.reason, Reason::StateDir);
    }

    #[test]
    fn the_repository_root_wins_over_a_manifest_inside_it() {
        let (_t, p) = tmp();
        mkdirs(&p, &["mono/.jj", "mono/crates/a/src"]);
        touch(&p, "mono/Cargo.toml");
        touch(&p, "mono/crates/a/Cargo.toml");
        let r = discover(&p.join("mono/crates/a/src"), &p);
        assert_eq!(r.root, p.join("mono"));
        assert_eq!(
            r.reason,
            Reason::Vcs {
                marker: ".jj".into()
            }
        );
    }

    #[test]
    fn without_a_repository_the_nearest_manifest_is_the_root() {
        let (_t, p) = tmp();
        mkdirs(&p, &["ws/crates/a/src"]);
        touch(&p, "ws/Cargo.toml");
        touch(&p, "ws/crates/a/Cargo.toml");
        let r = discover(&p.join("ws/crates/a/src"), &p);
        assert_eq!(r.root, p.join("ws/crates/a"));
        assert_eq!(
            r.reason,
            Reason::Manifest {
                manifest: "Cargo.toml".into()
            }
        );
    }

    #[test]
    fn nothing_above_means_the_start_and_the_ceiling_is_not_entered() {
        let (_t, p) = tmp();
        // The home directory (the ceiling) has a stray state dir and a dotfiles repository.
        mkdirs(&p, &["home/.papa-yu", "home/.git", "home/scratch/x"]);
        let r = discover(&p.join("home/scratch/x"), &p.join("home"));
        assert_eq!(r.root, p.join("home/scratch/x"));
        assert_eq!(r.reason, Reason::Start);
        // Starting at the ceiling still finds it.
        let r = discover(&p.join("home"), &p.join("home"));
        assert_eq!(r.reason, Reason::StateDir);
    }

    #[test]
    fn a_given_directory_wins_and_must_exist() {
        let (_t, p) = tmp();
        mkdirs(&p, &["a/.git", "b"]);
        let r = Discovery::new(p.join("a"))
            .given(Some("../b"))
            .discover()
            .unwrap();
        assert_eq!(r.root, p.join("b"));
        assert_eq!(r.reason, Reason::Given);
        let e = Discovery::new(p.join("a"))
            .given(Some("/nonexistent-papayu-dir"))
            .discover()
            .unwrap_err();
        assert_eq!(e.to_string(), "/nonexistent-papayu-dir: no such directory");
    }

    #[test]
    fn discovery_creates_nothing() {
        let (_t, p) = tmp();
        mkdirs(&p, &["x/y"]);
        let before: Vec<_> = walk(&p);
        discover(&p.join("x/y"), &p);
        assert_eq!(walk(&p), before);
    }

    fn walk(p: &Utf8Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in fs_err::read_dir(p).unwrap() {
            let e = e.unwrap();
            out.push(e.path().display().to_string());
            if e.file_type().unwrap().is_dir() {
                out.extend(walk(Utf8Path::from_path(&e.path()).unwrap()));
            }
        }
        out.sort();
        out
    }
}
