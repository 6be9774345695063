//! Each operation's own error: structured variants, `.code()` and `.path()`, and messages that
//! leave the code to the frontend.

use papayu_patch::{ApplyError, Direction, OpenError, Project, StoreError, UndoError};
use papayu_protocol::ErrorCode;

use crate::common::{v2, write_files};

#[test]
fn undo_and_redo_say_which_stack_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let project = Project::open(dir.path()).unwrap();
    for (result, direction) in [
        (project.undo(false), Direction::Undo),
        (project.redo(false), Direction::Redo),
    ] {
        let err = result.unwrap_err();
        assert!(
            matches!(err, UndoError::NothingToUndo { direction: d } if d == direction),
            "{err:?}"
        );
        let code = match direction {
            Direction::Undo => ErrorCode::NothingToUndo,
            Direction::Redo => ErrorCode::NothingToRedo,
        };
        assert_eq!(err.code(), code);
        assert_eq!(err.to_string(), format!("nothing to {direction}"));
        assert_eq!(err.path(), None);
    }
}

#[test]
fn an_action_error_names_the_action_by_its_validated_path() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("src/a.txt", "old\n")]);
    let project = Project::open(dir.path()).unwrap();
    let plan = v2(
        r#"{"actions":[{"kind":"CREATE_FILE","path":"src/a.txt","content":"new\n"}],"summary":"s"}"#,
    );
    let preview = project.transaction(&plan).preview().unwrap();
    let blocked = preview.files[0].error.as_ref().unwrap();
    assert_eq!(blocked.code, ErrorCode::FileExists);
    assert!(!blocked.message.starts_with("ERR_"), "{}", blocked.message);
    let err = project.transaction(&plan).apply().unwrap_err();
    match &err {
        ApplyError::FileExists { index: 0, path } => assert_eq!(path.as_str(), "src/a.txt"),
        other => panic!("{other:?}"),
    }
    assert_eq!(err.code(), ErrorCode::FileExists);
    assert_eq!(err.path(), Some("src/a.txt"));
    assert_eq!(err.to_string(), blocked.message);
}

#[test]
fn a_held_lock_is_a_store_error_naming_its_holder() {
    let dir = tempfile::tempdir().unwrap();
    let project = Project::open(dir.path()).unwrap();
    let _held = crate::common::hold_lock(dir.path());
    let err = Project::open(dir.path()).unwrap_err();
    match &err {
        OpenError::Store(StoreError::Locked { pid, lock }) => {
            assert_eq!(*pid, std::process::id());
            assert!(lock.as_str().ends_with(".papa-yu/lock"), "{lock}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.code(), ErrorCode::Locked);
    assert!(err.to_string().starts_with("another papayu"), "{err}");
    let err = project.undo(false).unwrap_err();
    assert!(
        matches!(err, UndoError::Store(StoreError::Locked { .. })),
        "{err:?}"
    );
}
