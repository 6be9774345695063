//! Protected entries under the names other file systems give them (HFS+ ignorable code
//! points, NTFS trailing dots and streams, Windows 8.3 short names), and the credential files
//! every tool keeps secrets in: refused as `ERR_PROTECTED_PATH` for every action kind.

use papayu_protocol::{Action, ActionKind, ErrorCode, ProtocolVersion};
use papayu_validate::{BUILTIN_PROTECTED, Context, Policy, RelPath, validate_actions};

/// Every kind of protocol v3, with the fields its shape needs.
fn actions_for(path: &str) -> Vec<Action> {
    let sha = "0".repeat(64);
    let mut out = Vec::new();
    for kind in ProtocolVersion::V3.kinds() {
        let mut a = Action::new(kind.clone(), path);
        match kind {
            ActionKind::CreateFile | ActionKind::UpdateFile => a.content = Some("x\n".into()),
            ActionKind::PatchFile => {
                a.patch = Some("@@ -1 +1 @@\n-a\n+b\n".into());
                a.base_sha256 = Some(sha.clone());
            }
            ActionKind::EditFile => {
                a.base_sha256 = Some(sha.clone());
                a.edits = Some(vec![papayu_protocol::Edit {
                    anchor: "a".into(),
                    before: "a".into(),
                    after: "b".into(),
                    ..Default::default()
                }]);
            }
            ActionKind::ReplaceRange => {
                a.base_sha256 = Some(sha.clone());
                a.start_line = Some(1);
                a.end_line = Some(1);
                a.content = Some("x\n".into());
            }
            _ => {}
        }
        out.push(a);
    }
    out
}

#[track_caller]
fn refused_as_protected(path: &str) {
    for action in actions_for(path) {
        let kind = action.kind.clone();
        let report = validate_actions(
            &[action],
            &Context::new(ProtocolVersion::V3),
            &Policy::default(),
        );
        let codes = report.codes();
        assert!(
            codes.contains(&ErrorCode::ProtectedPath),
            "{kind} {path:?}: {codes:?}\n{report}"
        );
        assert!(report.into_plan().is_err(), "{kind} {path:?}");
    }
}

/// The code points git's `is_hfs_dotgit` treats as ignorable (HFS+ drops them from names).
const HFS_IGNORABLE: &[char] = &[
    '\u{200C}', '\u{200D}', '\u{200E}', '\u{200F}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}',
    '\u{202E}', '\u{206A}', '\u{206B}', '\u{206C}', '\u{206D}', '\u{206E}', '\u{206F}', '\u{FEFF}',
];

#[test]
fn r_hfs_ignorable_code_points_do_not_unprotect_git_or_papayu_state() {
    for &c in HFS_IGNORABLE {
        for path in [
            format!(".g{c}it/config"),
            format!(".G{c}IT/HEAD"),
            format!("{c}.git/hooks/pre-commit"),
            format!(".git{c}/config"),
            format!("vendor/sub/.gi{c}t/config"),
            format!(".papa{c}-yu/policy.json"),
            format!(".PAPA-YU{c}/state.json"),
            format!(".e{c}nv"),
            format!("secre{c}ts/db.yml"),
        ] {
            refused_as_protected(&path);
            let err = RelPath::parse(&path).expect_err(&path);
            assert_eq!(err.code, ErrorCode::ProtectedPath, "{path:?}: {err}");
        }
    }
    // The same code points in an ordinary name stay an invalid path, not a protected one.
    let err = RelPath::parse("src/ma\u{206B}in.rs").unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidPath);
}

#[test]
fn r_ntfs_short_names_and_dotted_variants_of_git_are_protected() {
    for path in [
        "GIT~1/config",
        "git~1/config",
        "Git~1/hooks/pre-commit",
        "git~2/HEAD",
        "sub/GIT~1/config",
        "PAPA-Y~1/policy.json",
        "papa-y~1/state.json",
        "Papa-Y~2/tx/1/manifest.json",
        "ENV~1",
        "ENV~1.LOC",
        "GI7EBA~1",
        ".git./config",
        ".git../config",
        ".GIT /config",
        ".git . /config",
        ".git::$INDEX_ALLOCATION/config",
        ".git:stream/config",
        ".papa-yu./x.json",
        ".papa-yu /x.json",
        ".env.",
        ".env ",
        "config/.env::$DATA",
    ] {
        refused_as_protected(path);
    }
    for path in ["GIT~1/config", "papa-y~1/x.md", "ENV~1"] {
        let rel = RelPath::parse(path).unwrap();
        assert!(Policy::default().is_protected(&rel), "{path}");
    }
}

#[test]
fn names_that_only_resemble_short_names_are_ordinary() {
    for path in [
        "src/a~b.rs",
        "docs/long-name~1.md",
        "notes/file.tar~1.md",
        "src/git.rs",
        "src/gitignore.rs",
        "docs/.github/workflows/ci.yml",
        "docs/git-guide.md",
        "src/papa-yu.rs",
        "docs/environment.md",
    ] {
        let rel = RelPath::parse(path).unwrap();
        assert!(!Policy::default().is_protected(&rel), "{path}");
    }
}

#[test]
fn r_credential_files_of_common_tools_are_protected() {
    for path in [
        ".envrc",
        "app/.envrc",
        ".npmrc",
        "web/.NPMRC",
        ".pypirc",
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".aws/credentials",
        "home/.aws/credentials",
        ".docker/config.json",
        "vault.kdbx",
        "release.keystore",
        "android/app/upload.jks",
        ".pgpass",
        "credentials.json",
        "config/gcloud/credentials.json",
        ".config/gcloud/application_default_credentials.json",
        ".config/gcloud/legacy_credentials/me/adc.json",
        "id_rsa",
        "keys/id_ed25519",
        ".htpasswd",
        "public/.htdigest",
        ".ssh/config",
        ".gnupg/pubring.kbx",
        ".kube/config",
        ".cargo/credentials.toml",
        ".s3cfg",
        ".my.cnf",
        ".vault-token",
        "putty.ppk",
        "AuthKey_ABC123.p8",
    ] {
        refused_as_protected(path);
    }
    assert!(BUILTIN_PROTECTED.len() >= 40, "{}", BUILTIN_PROTECTED.len());
}

#[test]
fn ordinary_neighbours_of_credential_files_are_not_protected() {
    for path in [
        ".env.example",
        "src/credentials.rs",
        "docs/npmrc.md",
        ".github/workflows/ci.yml",
        ".aws/config.md",
        "docker/config.json",
        "src/keystore.rs",
        "src/keys.rs",
    ] {
        let rel = RelPath::parse(path).unwrap();
        assert!(!Policy::default().is_protected(&rel), "{path}");
    }
}

#[test]
fn a_policy_cannot_raise_limits_past_the_protocol_ceilings() {
    let err = Policy::from_json(r#"{"max_actions": 10001}"#).unwrap_err();
    assert!(err.to_string().contains("max_actions"), "{err}");
    assert!(Policy::from_json(r#"{"max_actions": 10000}"#).is_ok());
    let over = papayu_protocol::MAX_ANSWER_BYTES + 1;
    let err = Policy::from_json(&format!(r#"{{"max_total_bytes": {over}}}"#)).unwrap_err();
    assert!(err.to_string().contains("max_total_bytes"), "{err}");
}
