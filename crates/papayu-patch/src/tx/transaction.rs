//! [`Transaction`]: one plan on its way to disk — previewed, or applied all-or-nothing; applying
//! touches the plan's paths through the executor, previewing touches nothing.

use papayu_protocol::ProtocolVersion;
use papayu_validate::ValidatedAction;

use super::execute::{Header, execute, refuse_unfinished};
use super::options::ApplyOptions;
use super::project::Project;
use super::report::{ApplyReport, Preview, build_files};
use crate::error::ApplyError;
use crate::fsx::Root;
use crate::journal::{self, ActionRecord, TxKind};
use crate::{lock, plan};

/// A plan on its way to disk: [`Transaction::preview`] shows it, [`Transaction::apply`] writes it.
pub struct Transaction<'p> {
    project: &'p Project,
    version: ProtocolVersion,
    actions: &'p [ValidatedAction],
    options: ApplyOptions<'p>,
}

impl std::fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("root", &self.project.root())
            .field("options", &self.options)
            .finish()
    }
}

impl<'p> Transaction<'p> {
    /// A transaction of `actions` under `version`. Only [`Project::transaction`] makes one from a
    /// validated plan; papayu-patch's own tests also hand-build actions validation would refuse,
    /// to check that the engine refuses them on its own.
    pub(super) fn new(
        project: &'p Project,
        version: ProtocolVersion,
        actions: &'p [ValidatedAction],
        options: ApplyOptions<'p>,
    ) -> Self {
        Self {
            project,
            version,
            actions,
            options,
        }
    }

    /// Replace the options.
    pub fn options(mut self, options: ApplyOptions<'p>) -> Self {
        self.options = options;
        self
    }

    /// What [`Transaction::apply`] would do, computed by the same code, writing nothing.
    ///
    /// # Errors
    ///
    /// [`ApplyError::Store`] when the project root cannot be opened; what each action would hit
    /// is in [`crate::FileDiff::error`] instead.
    pub fn preview(&self) -> Result<Preview, ApplyError> {
        let root = Root::open(self.project.root())?;
        let computed = plan::compute(&root, self.version, self.actions, self.options.engine);
        let (files, summary) = build_files(&computed, true);
        tracing::info!(target: "papayu", event = "PREVIEW_READY", actions = files.len(), blocked = summary.blocked);
        Ok(Preview { files, summary })
    }

    /// Apply the plan all-or-nothing (SPEC §5.2). On any error nothing has changed on disk.
    ///
    /// # Errors
    ///
    /// [`ApplyError`]: the first action the engine refuses, a failed check, a cancellation, or
    /// a failure of the lock, a file or the journal — each rolled back before it is returned.
    pub fn apply(mut self) -> Result<ApplyReport, ApplyError> {
        let root = Root::open(self.project.root())?;
        let key = self.project.key();
        let _lock = lock::acquire(&root)?;
        let recovery = journal::recover_locked(&root, key, self.options.undo_depth)?;
        let computed = plan::compute(&root, self.version, self.actions, self.options.engine);
        let (files, summary) = build_files(&computed, false);
        if let Some(err) = computed.outcomes.into_iter().find_map(|o| o.result.err()) {
            tracing::info!(target: "papayu", event = "APPLY_ROLLBACK", code = %err.code(), stage = "compute");
            return Err(err);
        }
        refuse_unfinished(&recovery, &computed.ops)?;
        let header = Header {
            kind: TxKind::Apply,
            reverts: None,
            actions: ordered_records(self.actions),
            protocol: Some(self.version.number()),
        };
        let committed =
            execute::<ApplyError>(&root, key, &mut self.options, header, computed.ops, &[])?;
        tracing::info!(target: "papayu", event = "APPLY_SUCCESS", tx = %committed.manifest.id, actions = files.len());
        Ok(ApplyReport {
            tx_id: committed.manifest.id,
            files,
            summary,
            checks: committed.checks,
            displaced: committed.displaced,
        })
    }
}

fn ordered_records(actions: &[ValidatedAction]) -> Vec<ActionRecord> {
    plan::ordered(actions)
        .into_iter()
        .map(|a| ActionRecord {
            kind: a.kind().clone(),
            path: a.path.as_str().to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]

    use papayu_protocol::{Action, ActionKind, ErrorCode};
    use papayu_validate::RelPath;

    use super::*;

    #[test]
    fn plans_never_write_papayu_state_or_git() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        let mut action = Action::new(ActionKind::CreateFile, ".git/config");
        action.content = Some("x".into());
        // Built by hand: validation would refuse it, the engine must refuse it on its own too.
        let actions = [ValidatedAction {
            index: 0,
            path: RelPath::parse(".git/config").unwrap(),
            action,
        }];
        let project = Project::open(dir.path()).unwrap();
        let err = Transaction::new(
            &project,
            ProtocolVersion::V2,
            &actions,
            ApplyOptions::default(),
        )
        .apply()
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ProtectedPath);
        assert!(!dir.path().join(".git/config").exists());
    }
}
