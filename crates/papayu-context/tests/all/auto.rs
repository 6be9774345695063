//! Auto-gathering: data-driven fixtures `tests/fixtures/auto/NNN_name/{trace.txt, expected.txt,
//! project/, vendored.txt?}`. `{ROOT}` in the trace is the temp project root; `expected.txt`
//! lists the cache keys of the blocks gathered, in order; `vendored.txt` names third-party files
//! created at run time (git ignores `node_modules/`, so they cannot be committed).

use std::path::Path;

use papayu_context::{Language, Origin, parse_failing_tests, parse_frames};

use crate::common::{TempProject, copy_tree};

fn check(dir: &Path) -> Result<(), String> {
    let p = TempProject::new(&[]);
    copy_tree(&dir.join("project"), p.root.as_std_path());
    if let Ok(vendored) = fs_err::read_to_string(dir.join("vendored.txt")) {
        for line in vendored.lines().filter(|l| !l.is_empty()) {
            p.write(line, b"third party\n");
        }
    }
    let trace = fs_err::read_to_string(dir.join("trace.txt"))
        .unwrap()
        .replace("{ROOT}", p.root.as_str());
    let expected = fs_err::read_to_string(dir.join("expected.txt")).unwrap();
    let mut engine = p.engine();
    let blocks = engine.auto_gather(&trace);
    let got: Vec<&str> = blocks.iter().map(|b| b.key.as_str()).collect();
    let want: Vec<&str> = expected.lines().filter(|l| !l.is_empty()).collect();
    if got != want {
        return Err(format!(
            "{}:\n  expected {want:#?}\n  got      {got:#?}",
            dir.display()
        ));
    }
    for b in &blocks {
        if b.origin != Origin::Auto {
            return Err(format!("{}: {} not marked auto", dir.display(), b.key));
        }
        if b.key.starts_with("read_file") && b.file.is_none() {
            return Err(format!(
                "{}: {} gathered a note, not content: {}",
                dir.display(),
                b.key,
                b.body
            ));
        }
    }
    Ok(())
}

#[test]
fn fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/auto");
    let mut dirs: Vec<_> = fs_err::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 15, "fixtures missing: found {}", dirs.len());
    let failures: Vec<String> = dirs.iter().filter_map(|d| check(d).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
}

#[test]
fn rendered_python_snippet() {
    let p = TempProject::new(&[(
        "app/main.py",
        "import sys\n\ndef run():\n    raise ValueError('x')\n\nrun()\n",
    )]);
    let trace = format!(
        "Traceback (most recent call last):\n  File \"{}/app/main.py\", line 4, in run\nValueError: x\n",
        p.root
    );
    let blocks = p.engine().auto_gather(&trace);
    let rendered: Vec<String> = blocks.iter().map(|b| b.render()).collect();
    insta::assert_snapshot!("auto_python_block", rendered.join("\n\n"));
}

#[test]
fn frames_are_parsed_per_language() {
    let text = "File \"a.py\", line 3, in f\n\
                File \"b.py\", line 9, in g\n\
                panicked at src/x.rs:5:9:\n\
                at f (web/y.ts:7:1)\n\
                \t/go/src/z.go:11 +0x1\n\
                at com.acme.K.run(K.kt:4)\n";
    let frames: Vec<(Language, String, u64)> = parse_frames(text)
        .into_iter()
        .map(|f| (f.language, f.path, f.line))
        .collect();
    assert_eq!(
        frames,
        [
            (Language::Python, "b.py".to_owned(), 9),
            (Language::Python, "a.py".to_owned(), 3),
            (Language::Rust, "src/x.rs".to_owned(), 5),
            (Language::Node, "web/y.ts".to_owned(), 7),
            (Language::Go, "/go/src/z.go".to_owned(), 11),
            (Language::Jvm, "K.kt".to_owned(), 4),
        ]
    );
    assert_eq!(parse_frames("see line 0 of x.rs:0").len(), 0);
}

#[test]
fn failing_tests_are_parsed() {
    let t = parse_failing_tests(
        "FAILED tests/test_a.py::test_b - assert\n--- FAIL: TestX (0.1s)\nthe test `foo::bar` failed",
    );
    let got: Vec<(Option<&str>, Option<&str>)> = t
        .iter()
        .map(|t| (t.path.as_deref(), t.name.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            (Some("tests/test_a.py"), Some("test_b")),
            (None, Some("TestX")),
            (None, Some("foo::bar"))
        ]
    );
}

#[test]
fn max_frames_is_honoured() {
    let files: Vec<(String, String)> = (0..20)
        .map(|i| (format!("src/m{i}.rs"), "x\n".to_owned()))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let p = TempProject::new(&refs);
    let trace: String = (0..20).map(|i| format!("  at src/m{i}.rs:1:1\n")).collect();
    assert_eq!(p.engine().auto_gather(&trace).len(), 10);
}

#[test]
fn ambiguous_relative_frames_are_skipped() {
    let p = TempProject::new(&[("a/src/lib.rs", "x\n"), ("b/src/lib.rs", "y\n")]);
    assert!(
        p.engine()
            .auto_gather("panicked at src/lib.rs:1:1")
            .is_empty()
    );
}

#[test]
fn frames_outside_the_project_are_never_read() {
    let outer = TempProject::new(&[("outside/evil.py", "SECRET\n"), ("proj/a.py", "x\n")]);
    let mut engine = papayu_context::ContextEngine::new(
        outer.root.join("proj"),
        crate::common::hermetic_config(),
    )
    .unwrap();
    let trace = format!(
        "File \"{}/outside/evil.py\", line 1\nFile \"../outside/evil.py\", line 1\n",
        outer.root
    );
    assert!(engine.auto_gather(&trace).is_empty());
}
