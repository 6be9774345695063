//! Git around an apply (papayu-agent's `git`): warn before touching files with uncommitted
//! changes, commit an applied transaction when asked (`--commit`, `git.commit`), and say what to
//! do with the commit of an undone one.

use papayu_agent::git::Git;

use crate::global::Global;

fn repository(global: &Global) -> Option<Git> {
    let root = crate::layers::project_root(global).ok()?.root;
    Git::open(&root)
}

/// Warn (on stderr, not with `--json`) when files a plan touches have uncommitted changes:
/// papayu's undo still protects them, but a commit would mix them in.
pub fn warn_uncommitted(global: &Global, paths: &[String]) {
    let Some(git) = repository(global) else {
        return;
    };
    match git.uncommitted(paths) {
        Ok(dirty) if !dirty.is_empty() && !global.json => eprintln!(
            "papayu: note: uncommitted changes in {} (papayu undo restores them as they are now; a --commit would include them)",
            dirty.join(", ")
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!("git status: {e}"),
    }
}

/// Whether applied transactions are committed: `--commit`, else `git.commit`.
fn wanted(global: &Global) -> bool {
    crate::layers::layered(global)
        .ok()
        .and_then(|l| l.bool(papayu_agent::layered::keys::GIT_COMMIT).ok())
        .unwrap_or(false)
}

/// Commit transaction `tx_id`'s `paths` with `summary` when asked to; what happened, as one
/// line for people (`None`: nothing asked or nothing to commit).
pub fn commit_applied(
    global: &Global,
    paths: &[String],
    summary: &str,
    tx_id: &str,
) -> Option<String> {
    if !wanted(global) {
        return None;
    }
    let Some(git) = repository(global) else {
        return Some("not committed: the project is not in a git work tree".to_owned());
    };
    match git.commit(paths, summary, tx_id) {
        Ok(Some(c)) => Some(format!("committed as {} (\"{}\")", c.short(), c.subject)),
        Ok(None) => None,
        Err(e) => Some(format!(
            "not committed: {e} (the change is applied; commit it yourself)"
        )),
    }
}

/// After undoing transaction `tx_id`: what to do with the commit it became, if it did.
pub fn after_undo(global: &Global, tx_id: &str) -> Option<String> {
    let git = repository(global)?;
    git.commit_of(tx_id)
        .ok()
        .flatten()
        .map(|c| c.after_undo_hint())
}
