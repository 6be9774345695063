//! `search`: ignore files, glob, binary skip, literal matching, the 50-hit cap and order.

use papayu_context::{ContextConfig, Project, SearchMode};

use crate::common::{TempProject, hermetic_config};

fn paths(p: &Project, query: &str, glob: Option<&str>) -> Vec<String> {
    p.search_hits(query, glob, SearchMode::Literal)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| format!("{}:{}", h.path, h.line))
        .collect()
}

#[test]
fn block_format_and_snapshot() {
    let p = TempProject::new(&[
        ("src/a.rs", "fn needle() {}\nlet x = 1;\n"),
        ("b.txt", "no\nneedle here\n"),
    ]);
    let b = p.project().search("needle", None);
    assert_eq!(b.key, r#"search{query="needle",glob=none}"#);
    insta::assert_snapshot!("search_block", b.render());
}

#[test]
fn honours_gitignore_and_papayuignore_outside_git() {
    let p = TempProject::new(&[
        (".gitignore", "build/\n*.log\n"),
        (".papayuignore", "generated/\n"),
        ("build/out.txt", "needle\n"),
        ("app.log", "needle\n"),
        ("generated/x.rs", "needle\n"),
        ("src/keep.rs", "needle\n"),
    ]);
    assert!(
        !p.root.join(".git").exists(),
        "the test runs outside any git repository"
    );
    assert_eq!(paths(&p.project(), "needle", None), ["src/keep.rs:1"]);
}

#[test]
fn nested_papayuignore_applies_to_its_directory() {
    let p = TempProject::new(&[
        ("a/.papayuignore", "*.txt\n"),
        ("a/x.txt", "needle\n"),
        ("b/x.txt", "needle\n"),
    ]);
    assert_eq!(paths(&p.project(), "needle", None), ["b/x.txt:1"]);
}

#[test]
fn glob_filter_is_honoured() {
    let p = TempProject::new(&[
        ("src/a.rs", "needle\n"),
        ("src/b.py", "needle\n"),
        ("docs/c.md", "needle\n"),
    ]);
    let project = p.project();
    assert_eq!(paths(&project, "needle", Some("*.rs")), ["src/a.rs:1"]);
    assert_eq!(paths(&project, "needle", Some("docs/**")), ["docs/c.md:1"]);
    assert_eq!(
        paths(&project, "needle", Some("!*.py")),
        ["docs/c.md:1", "src/a.rs:1"]
    );
    let b = project.search("needle", Some("*.rs"));
    assert_eq!(b.header, "SEARCH[needle] (glob=*.rs):");
    assert_eq!(b.key, r#"search{query="needle",glob="*.rs"}"#);
}

#[test]
fn binary_files_are_skipped() {
    let p = TempProject::new(&[("text.txt", "needle\n")]);
    p.write("blob.bin", b"needle\n\x00\x01\x02needle\n");
    assert_eq!(paths(&p.project(), "needle", None), ["text.txt:1"]);
}

#[test]
fn literal_by_default() {
    let p = TempProject::new(&[("a.txt", "call(x.y)\ncallAxBy\n")]);
    let project = p.project();
    assert_eq!(paths(&project, "call(x.y)", None), ["a.txt:1"]);
    assert_eq!(paths(&project, "a.*b", None), Vec::<String>::new());
    let re = project
        .search_hits("call.x", None, SearchMode::Regex)
        .unwrap();
    assert_eq!(re.hits.len(), 2);
}

#[test]
fn cap_of_50_in_path_then_line_order_is_deterministic() {
    let mut files = Vec::new();
    for f in 0..30 {
        let content: String = (0..5).map(|i| format!("needle {i}\nfiller\n")).collect();
        files.push((format!("d{}/f{:02}.txt", f % 3, f), content));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let p = TempProject::new(&refs);
    let project = p.project();
    let first = project
        .search_hits("needle", None, SearchMode::Literal)
        .unwrap();
    assert_eq!(first.hits.len(), 50);
    assert!(first.more);
    let mut expected: Vec<(String, u64)> = files
        .iter()
        .flat_map(|(path, _)| (0..5).map(move |i| (path.clone(), 1 + 2 * i)))
        .collect();
    expected.sort();
    expected.truncate(50);
    let got: Vec<(String, u64)> = first
        .hits
        .iter()
        .map(|h| (h.path.clone(), h.line))
        .collect();
    assert_eq!(got, expected);
    for _ in 0..5 {
        assert_eq!(
            project
                .search_hits("needle", None, SearchMode::Literal)
                .unwrap(),
            first
        );
    }
    let one_thread = Project::open(
        p.path(),
        ContextConfig {
            search_threads: 1,
            ..hermetic_config()
        },
    )
    .unwrap();
    assert_eq!(
        one_thread
            .search_hits("needle", None, SearchMode::Literal)
            .unwrap(),
        first
    );
    assert!(
        project
            .search("needle", None)
            .body
            .ends_with("[more matches exist; showing the first 50 by path]")
    );
}

#[test]
fn many_hits_in_one_file_are_capped_too() {
    let p = TempProject::new(&[("a.txt", &"needle\n".repeat(80))]);
    let r = p
        .project()
        .search_hits("needle", None, SearchMode::Literal)
        .unwrap();
    assert_eq!(r.hits.len(), 50);
    assert_eq!(r.hits.last().unwrap().line, 50);
    assert!(r.more);
}

#[test]
fn protected_and_hidden_files_are_not_searched() {
    let p = TempProject::new(&[
        ("secrets/a.txt", "needle\n"),
        ("config/server.key", "needle\n"),
        ("id_rsa", "needle\n"),
        (".hidden/x.txt", "needle\n"),
        ("ok.txt", "needle\n"),
    ]);
    p.write(".env", b"needle\n");
    assert_eq!(paths(&p.project(), "needle", None), ["ok.txt:1"]);
}

#[cfg(unix)]
#[test]
fn symlinks_are_not_followed_out_of_the_project() {
    let outer = TempProject::new(&[("outside/x.txt", "needle\n"), ("proj/in.txt", "needle\n")]);
    crate::common::symlink(outer.root.join("outside"), outer.root.join("proj/linkdir"));
    crate::common::symlink(
        outer.root.join("outside/x.txt"),
        outer.root.join("proj/link.txt"),
    );
    let project = Project::open(outer.root.join("proj"), hermetic_config()).unwrap();
    assert_eq!(paths(&project, "needle", None), ["in.txt:1"]);
}

#[test]
fn long_lines_are_cut_on_a_character_boundary() {
    let line = format!("needle {}", "é".repeat(1000));
    let p = TempProject::new(&[("a.txt", &line)]);
    let hit = &p
        .project()
        .search_hits("needle", None, SearchMode::Literal)
        .unwrap()
        .hits[0];
    assert_eq!(hit.text.chars().count(), 301);
    assert!(hit.text.ends_with('…'));
}

#[test]
fn refusals_are_notes() {
    let p = TempProject::new(&[("a.txt", "x\n")]);
    let project = p.project();
    assert_eq!(
        project.search("", None).body,
        "[refused: the query is empty]"
    );
    assert!(
        project
            .search("a\nb", None)
            .body
            .starts_with("[refused: the query cannot be searched")
    );
    assert!(
        project
            .search("x", Some("["))
            .body
            .starts_with("[refused: invalid glob")
    );
    assert_eq!(project.search("zzz", None).body, "[no matches]");
}
