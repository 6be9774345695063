//! The project's files as the context layer may show them: `.gitignore`/`.papayuignore`
//! honoured, protected entries and build caches (`CACHEDIR.TAG`, `__pycache__`) pruned, listed
//! once per cycle with their sizes and times.

use std::sync::Mutex;
use std::time::SystemTime;

use ignore::{WalkBuilder, WalkState};
use papayu_validate::RelPath;

use crate::confine::{is_cache_dir, is_protected_entry, is_vendored};
use crate::project::Project;

/// One file of the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileEntry {
    /// Normalised project-relative path, `/`-separated.
    pub(crate) path: String,
    /// Size in bytes.
    pub(crate) size: u64,
    /// Last modification, when the filesystem tells.
    pub(crate) modified: Option<SystemTime>,
}

/// Files of the project, walked on first use.
#[derive(Debug, Default)]
pub(crate) struct FileIndex {
    files: Option<Vec<FileEntry>>,
}

impl FileIndex {
    pub(crate) fn get(&mut self, project: &Project) -> &[FileEntry] {
        self.files.get_or_insert_with(|| walk(project))
    }

    /// The unique file whose path ends with `/suffix` (or is `suffix`), preferring one under
    /// `prefer_dir` when several match.
    pub(crate) fn unique_suffix(
        &mut self,
        project: &Project,
        suffix: &str,
        prefer_dir: Option<&str>,
    ) -> Option<RelPath> {
        let tail = format!("/{suffix}");
        let candidates: Vec<&str> = self
            .get(project)
            .iter()
            .map(|f| f.path.as_str())
            .filter(|f| (*f == suffix || f.ends_with(&tail)) && !is_vendored(f))
            .collect();
        let pick = match candidates.as_slice() {
            [one] => Some(*one),
            many => prefer_dir.and_then(|d| {
                let want = format!("{d}/{suffix}");
                let mut preferred = many
                    .iter()
                    .filter(|f| **f == want || f.ends_with(&format!("/{want}")));
                match (preferred.next(), preferred.next()) {
                    (Some(p), None) => Some(*p),
                    _ => None,
                }
            }),
        }?;
        RelPath::parse(pick).ok()
    }
}

fn walk(project: &Project) -> Vec<FileEntry> {
    let root = project.root.canonical().as_std_path();
    let files = Mutex::new(Vec::new());
    WalkBuilder::new(root)
        .require_git(false)
        .add_custom_ignore_filename(".papayuignore")
        .follow_links(false)
        .threads(project.config.search_threads)
        .filter_entry({
            let policy = project.root.policy().clone();
            let root = root.to_path_buf();
            move |e| !is_protected_entry(&policy, &root, e) && !is_cache_dir(e)
        })
        .build_parallel()
        .run(|| {
            let files = &files;
            Box::new(move |entry| {
                if let Ok(entry) = entry
                    && entry.file_type().is_some_and(|t| t.is_file())
                    && let Ok(rel) = entry.path().strip_prefix(root)
                    && let Some(rel) = rel.to_str()
                {
                    let meta = entry.metadata().ok();
                    files
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(FileEntry {
                            path: rel.replace('\\', "/"),
                            size: meta.as_ref().map_or(0, std::fs::Metadata::len),
                            modified: meta.and_then(|m| m.modified().ok()),
                        });
                }
                WalkState::Continue
            })
        });
    let mut files = files
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}
