//! `undo`, `redo` and `history`: papayu-patch's hash-checked stacks of committed transactions.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use papayu_patch::{ApplyOptions, UndoError};
use serde_json::json;

use super::Reply;
use super::args::RevertArgs;
use crate::served::Served;

impl Served {
    /// `undo` (`redo == false`) or `redo` of the top transaction, itself a transaction.
    pub(crate) fn revert(&self, args: RevertArgs, redo: bool, cancel: Arc<AtomicBool>) -> Reply {
        let options = ApplyOptions::default().cancel_flag(cancel);
        let result = if redo {
            self.patch.redo_with(args.force, options)
        } else {
            self.patch.undo_with(args.force, options)
        };
        match result {
            Ok(report) => Reply::done(json!({
                "tx_id": report.tx_id,
                "reverted": if redo { "redo" } else { "undo" },
                "files": report.files,
                "summary": report.summary,
            })),
            Err(e) => {
                let mut reply = Reply::rejected(e.code(), e.to_string());
                if let UndoError::Conflict { paths } = &e {
                    reply = reply.with("conflicts", paths);
                }
                reply
            }
        }
    }

    /// `history`: both stacks, most recent first.
    pub(crate) fn history(&self) -> Reply {
        match self.patch.history() {
            Ok(h) => Reply::done(h),
            Err(e) => Reply::rejected(e.code(), e.to_string()),
        }
    }
}
