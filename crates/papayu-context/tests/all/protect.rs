//! Credential files and the other-file-system aliases of protected entries are never read or
//! searched (the read answers with a refusal note, the search skips them).

use papayu_context::SearchMode;

use crate::common::TempProject;

const SECRET: &str = "TOP-SECRET-VALUE\n";

#[test]
fn r_credential_files_of_common_tools_are_never_read() {
    let files = [
        ".envrc",
        ".npmrc",
        ".pypirc",
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".aws/credentials",
        ".docker/config.json",
        "vault.kdbx",
        "app/release.keystore",
        "upload.jks",
        ".pgpass",
        "credentials.json",
        ".config/gcloud/application_default_credentials.json",
        ".htpasswd",
        "deploy/id_rsa",
        ".ssh/config",
        ".kube/config",
    ];
    let owned: Vec<(&str, &str)> = files.iter().map(|f| (*f, SECRET)).collect();
    let p = TempProject::new(&owned);
    let project = p.project();
    for path in files {
        let b = project.read_file(path, None, None);
        assert!(b.body.contains("is a protected file"), "{path}: {}", b.body);
        assert!(!b.render().contains("TOP-SECRET"), "{path}");
        assert!(b.file.is_none(), "{path}");
    }
}

#[test]
fn r_aliases_of_git_and_papayu_state_are_refused_for_reads() {
    // On Linux these are distinct directories; on macOS and Windows they are `.git` and
    // `.papa-yu` themselves. Either way nothing inside is sent.
    let dirs = [
        ".g\u{200C}it",
        ".g\u{206B}it",
        "GIT~1",
        "git~1",
        "PAPA-Y~1",
        ".git.",
        ".papa\u{FEFF}-yu",
    ];
    let p = TempProject::new(&[]);
    for d in dirs {
        p.write(&format!("{d}/config"), SECRET.as_bytes());
    }
    let project = p.project();
    for d in dirs {
        let path = format!("{d}/config");
        let b = project.read_file(&path, None, None);
        assert!(
            b.body.contains("is a protected file"),
            "{path:?}: {}",
            b.body
        );
        assert!(!b.render().contains("TOP-SECRET"), "{path:?}");
        assert!(b.file.is_none(), "{path:?}");
    }
}

#[test]
fn r_credential_files_and_short_name_aliases_are_not_searched() {
    let p = TempProject::new(&[
        ("credentials.json", "needle\n"),
        ("vault.kdbx", "needle\n"),
        ("upload.jks", "needle\n"),
        ("GIT~1/config", "needle\n"),
        ("PAPA-Y~1/state.json", "needle\n"),
        ("ok.txt", "needle\n"),
    ]);
    let hits: Vec<String> = p
        .project()
        .search_hits("needle", None, SearchMode::Literal)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| h.path)
        .collect();
    assert_eq!(hits, ["ok.txt"]);
}
