//! `read_file`: FILE blocks, ranges, notes and confinement.

use papayu_context::Refusal;
use papayu_protocol::sha256_hex;

use crate::common::TempProject;

const LIB: &str = "pub fn a() {}\n\npub fn b() -> u8 {\n    7\n}\n";

#[test]
fn file_block_has_whole_file_hash_and_numbered_lines() {
    let p = TempProject::new(&[("src/lib.rs", LIB)]);
    let b = p.project().read_file("./src/lib.rs", None, None);
    assert_eq!(
        b.header,
        format!("FILE[src/lib.rs] (sha256={}):", sha256_hex(LIB.as_bytes()))
    );
    assert_eq!(b.key, r#"read_file{path="src/lib.rs",start=1,end=200}"#);
    insta::assert_snapshot!("file_block_whole", b.render());
    let f = b.file.unwrap();
    assert_eq!(
        (f.path.as_str(), f.sha256.as_str()),
        ("src/lib.rs", sha256_hex(LIB.as_bytes()).as_str())
    );
}

#[test]
fn range_shows_only_those_lines_and_keeps_whole_file_hash() {
    let p = TempProject::new(&[("src/lib.rs", LIB)]);
    let b = p.project().read_file("src/lib.rs", Some(3), Some(4));
    assert!(b.header.contains(&sha256_hex(LIB.as_bytes())));
    insta::assert_snapshot!("file_block_range", b.render());
}

#[test]
fn default_end_is_start_plus_199() {
    let text: String = (1..=500).map(|i| format!("l{i}\n")).collect();
    let p = TempProject::new(&[("big.txt", &text)]);
    let b = p.project().read_file("big.txt", Some(101), None);
    assert!(b.body.starts_with("101|l101\n"));
    assert!(b.body.contains("300|l300\n"));
    assert!(!b.body.contains("301|"));
    assert!(b.body.ends_with("[lines 101-300 of 500]"));
}

#[test]
fn crlf_lines_are_shown_without_cr() {
    let p = TempProject::new(&[("w.txt", "a\r\nb\r\n")]);
    assert_eq!(p.project().read_file("w.txt", None, None).body, "1|a\n2|b");
}

#[test]
fn range_past_end_and_inverted_range_are_notes_without_content() {
    let p = TempProject::new(&[("a.txt", "one\n")]);
    let past = p.project().read_file("a.txt", Some(5), Some(9));
    assert_eq!(past.body, "[the file has 1 lines; line 5 is past the end]");
    assert!(past.file.is_none());
    let inverted = p.project().read_file("a.txt", Some(9), Some(5));
    assert!(inverted.body.contains("invalid range"));
    assert!(inverted.file.is_none());
}

#[test]
fn empty_file_is_sent_as_empty() {
    let p = TempProject::new(&[("empty.txt", "")]);
    let b = p.project().read_file("empty.txt", None, None);
    assert_eq!(b.body, "[empty file]");
    assert_eq!(b.file.unwrap().sha256, sha256_hex(b""));
}

#[test]
fn missing_file_is_a_note() {
    let p = TempProject::new(&[]);
    let b = p.project().read_file("src/nope.rs", None, None);
    assert_eq!(
        b.render(),
        "FILE[src/nope.rs]:\n[missing: no such file in the project]"
    );
    assert!(b.file.is_none());
}

#[test]
fn non_utf8_file_is_a_note_with_hash_but_no_content() {
    let p = TempProject::new(&[]);
    p.write("latin1.txt", b"caf\xe9\n");
    let b = p.project().read_file("latin1.txt", None, None);
    assert!(b.header.starts_with("FILE[latin1.txt] (sha256="));
    assert_eq!(b.body, "[not sent: the file is not UTF-8 text (5 bytes)]");
    assert!(b.file.is_none());
}

#[test]
fn directory_is_refused() {
    let p = TempProject::new(&[("src/lib.rs", LIB)]);
    assert_eq!(
        p.project().read_file("src", None, None).body,
        "[refused: not a regular file]"
    );
}

#[test]
fn too_large_file_is_a_note() {
    let p = TempProject::new(&[("big.txt", &"x".repeat(100))]);
    let project = papayu_context::Project::open(
        p.path(),
        papayu_context::ContextConfig {
            max_file_bytes: 10,
            ..crate::common::hermetic_config()
        },
    )
    .unwrap();
    assert_eq!(
        project.read_file("big.txt", None, None).body,
        "[not sent: the file is 100 bytes, over the 10-byte limit]"
    );
}

#[test]
fn r_parent_dir_traversal_is_refused() {
    let outer = TempProject::new(&[("secret.txt", "TOP SECRET\n"), ("proj/a.txt", "a\n")]);
    let project =
        papayu_context::Project::open(outer.root.join("proj"), crate::common::hermetic_config())
            .unwrap();
    for raw in [
        "../secret.txt",
        "a/../../secret.txt",
        "..\\secret.txt",
        "./../secret.txt",
    ] {
        let b = project.read_file(raw, None, None);
        assert!(
            b.body.starts_with("[refused: invalid path"),
            "{raw}: {}",
            b.body
        );
        assert!(!b.render().contains("TOP SECRET"));
        assert!(b.file.is_none());
    }
}

#[test]
fn r_absolute_paths_are_refused() {
    let outer = TempProject::new(&[("secret.txt", "TOP SECRET\n"), ("proj/a.txt", "a\n")]);
    let project =
        papayu_context::Project::open(outer.root.join("proj"), crate::common::hermetic_config())
            .unwrap();
    let abs = outer.root.join("secret.txt");
    let inside_abs = outer.root.join("proj/a.txt");
    for raw in [
        abs.as_str(),
        inside_abs.as_str(),
        "/etc/passwd",
        "C:\\Windows\\win.ini",
        "~/.ssh/id_rsa",
        "\\\\srv\\share",
    ] {
        let b = project.read_file(raw, None, None);
        assert!(
            b.body.starts_with("[refused: invalid path"),
            "{raw}: {}",
            b.body
        );
        assert!(!b.render().contains("TOP SECRET"));
    }
}

#[test]
fn protected_files_are_never_sent() {
    let p = TempProject::new(&[
        (".env", "API_KEY=sk-live\n"),
        ("config/.env.production", "X=1\n"),
        (".env.example", "API_KEY=\n"),
        ("certs/server.pem", "-----BEGIN\n"),
        ("deploy/id_ed25519", "key\n"),
        ("secrets/db.txt", "pw\n"),
        (".git/config", "[core]\n"),
        (".papa-yu/project.json", "{}\n"),
    ]);
    let project = p.project();
    for path in [
        ".env",
        "config/.env.production",
        "certs/server.pem",
        "deploy/id_ed25519",
        "secrets/db.txt",
        ".git/config",
        ".papa-yu/project.json",
        ".ENV",
    ] {
        let b = project.read_file(path, None, None);
        assert!(b.body.contains("is a protected file"), "{path}: {}", b.body);
        assert!(b.file.is_none());
    }
    assert!(project.read_file(".env.example", None, None).file.is_some());
}

#[cfg(unix)]
mod symlinks {
    use super::*;
    use crate::common::symlink;

    fn outer_with_project() -> (TempProject, papayu_context::Project, camino::Utf8PathBuf) {
        let outer = TempProject::new(&[
            ("outside/secret.txt", "TOP SECRET\n"),
            ("proj/src/lib.rs", LIB),
        ]);
        let proj = outer.root.join("proj");
        let project =
            papayu_context::Project::open(&proj, crate::common::hermetic_config()).unwrap();
        (outer, project, proj)
    }

    #[test]
    fn r_symlink_escape_via_file_link() {
        let (outer, project, proj) = outer_with_project();
        symlink(outer.root.join("outside/secret.txt"), proj.join("leak.txt"));
        let b = project.read_file("leak.txt", None, None);
        assert_eq!(b.body, format!("[{}]", Refusal::EscapesRoot));
        assert!(!b.render().contains("TOP SECRET"));
        assert!(b.file.is_none());
    }

    #[test]
    fn r_symlink_escape_via_dir_link() {
        let (outer, project, proj) = outer_with_project();
        symlink(outer.root.join("outside"), proj.join("docs"));
        let b = project.read_file("docs/secret.txt", None, None);
        assert_eq!(
            b.body,
            "[refused: the path leaves the project through a symlink]"
        );
        assert!(!b.render().contains("TOP SECRET"));
    }

    #[test]
    fn r_symlink_escape_via_relative_link() {
        let (_outer, project, proj) = outer_with_project();
        symlink("../outside/secret.txt", proj.join("rel.txt"));
        assert_eq!(
            project.read_file("rel.txt", None, None).body,
            "[refused: the path leaves the project through a symlink]"
        );
    }

    #[test]
    fn symlink_inside_the_project_is_read() {
        let (_outer, project, proj) = outer_with_project();
        symlink("src", proj.join("alias"));
        symlink("lib.rs", proj.join("src/again.rs"));
        for path in ["alias/lib.rs", "src/again.rs"] {
            let b = project.read_file(path, None, None);
            assert_eq!(b.body.lines().next(), Some("1|pub fn a() {}"), "{path}");
            assert_eq!(
                b.file.unwrap().path,
                path,
                "recorded under the requested path"
            );
        }
    }

    #[test]
    fn r_symlink_to_protected_file_is_refused() {
        let (_outer, project, proj) = outer_with_project();
        fs_err::write(proj.join(".env"), "API_KEY=sk-live\n").unwrap();
        symlink(".env", proj.join("notes.txt"));
        let b = project.read_file("notes.txt", None, None);
        assert!(b.body.contains("`.env` is a protected file"), "{}", b.body);
        assert!(!b.render().contains("sk-live"));
    }

    #[test]
    fn dangling_symlink_is_missing() {
        let (_outer, project, proj) = outer_with_project();
        symlink("/nonexistent/zzz", proj.join("dangling.txt"));
        assert_eq!(
            project.read_file("dangling.txt", None, None).body,
            "[missing: no such file in the project]"
        );
    }
}

#[test]
fn project_protected_globs_are_honoured_for_reads_and_search() {
    let p = TempProject::new(&[
        ("deploy/prod/vars.yml", "password: hunter2\n"),
        ("ok.txt", "password: see vault\n"),
    ]);
    let policy =
        papayu_validate::Policy::from_json(r#"{"protected_globs": ["deploy/prod/**"]}"#).unwrap();
    let config = papayu_context::ContextConfig {
        policy,
        ..crate::common::hermetic_config()
    };
    let project = papayu_context::Project::open(p.path(), config).unwrap();
    let b = project.read_file("deploy/prod/vars.yml", None, None);
    assert!(b.body.contains("is a protected file"), "{}", b.body);
    let hits = project
        .search_hits("password", None, papayu_context::SearchMode::Literal)
        .unwrap()
        .hits;
    assert_eq!(
        hits.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(),
        ["ok.txt"]
    );
}
