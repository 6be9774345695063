//! The base context (SPEC §14) on projects of the task benchmark (`bench/tasks`): the file the
//! fix belongs in is sent even when the goal only names a symptom.

use std::path::PathBuf;

use papayu_context::{BlockKind, ContextConfig, ContextEngine};

use crate::common::{TempProject, copy_tree, hermetic_config};

fn corpus(task: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/tasks")
        .join(task)
        .join("project")
}

/// A copy of a benchmark task's project (the corpus itself stays untouched).
fn task_project(task: &str) -> TempProject {
    let p = TempProject::new(&[]);
    let from = corpus(task);
    assert!(from.is_dir(), "missing benchmark task {}", from.display());
    copy_tree(&from, p.path().as_std_path());
    p
}

/// Pointing only: the whole-project shortcut off.
fn pointing() -> ContextConfig {
    ContextConfig {
        small_project_bytes: 0,
        ..hermetic_config()
    }
}

fn sent(task: &str, goal: &str, failure: Option<&str>, config: ContextConfig) -> Vec<String> {
    let p = task_project(task);
    let mut engine = ContextEngine::new(p.path(), config).unwrap();
    let ctx = engine.base(goal, failure);
    assert!(
        ctx.blocks.iter().any(|b| b.kind == BlockKind::Map),
        "no project map in {}",
        ctx.text
    );
    ctx.sent_files.iter().map(|(p, _)| p.to_owned()).collect()
}

#[test]
fn a_file_the_goal_names_is_sent_with_its_test() {
    let files = sent(
        "py-01-calc-add",
        "fix: add() in calc.py subtracts instead of adding, so test_calc.py fails",
        None,
        pointing(),
    );
    assert!(files.contains(&"calc.py".to_owned()), "{files:?}");
    assert!(files.contains(&"test_calc.py".to_owned()), "{files:?}");
}

#[test]
fn a_symptom_finds_the_code_by_its_words() {
    let files = sent(
        "py-04-invoice-discount",
        "the total on invoices ignores the discount",
        None,
        pointing(),
    );
    assert!(files.contains(&"pricing.py".to_owned()), "{files:?}");
}

#[test]
fn a_called_out_function_brings_its_definitions() {
    let files = sent(
        "rs-04-inventory-cancel-reservation",
        "cancelling an order reservation doesn't give the stock back: available() stays low afterwards",
        None,
        pointing(),
    );
    assert!(files.contains(&"src/stock.rs".to_owned()), "{files:?}");
}

#[test]
fn a_rename_brings_every_file_using_the_name() {
    let files = sent(
        "js-07-rename-fetch-user",
        "rename getUser to fetchUser everywhere (the tests already use the new name)",
        None,
        pointing(),
    );
    for f in ["src/api.js", "src/profile.js", "src/index.js"] {
        assert!(files.contains(&f.to_owned()), "{f} not in {files:?}");
    }
}

#[test]
fn the_failing_run_brings_its_frames_and_becomes_the_check_log() {
    let failure = "FAIL: test_total_applies_discount (test_invoice.InvoiceTest)\n\
                   Traceback (most recent call last):\n\
                   \x20 File \"pricing.py\", line 27, in compute_totals\n\
                   AssertionError: Decimal('121.00') != Decimal('108.90')\n";
    let p = task_project("py-04-invoice-discount");
    let mut engine = ContextEngine::new(p.path(), pointing()).unwrap();
    let ctx = engine.base("make the tests pass", Some(failure));
    let files: Vec<&str> = ctx.sent_files.iter().map(|(p, _)| p).collect();
    assert!(files.contains(&"pricing.py"), "{files:?}");
    let logs = ctx
        .blocks
        .iter()
        .find(|b| b.kind == BlockKind::Logs)
        .expect("a LOGS[check] block");
    assert!(logs.body.contains("108.90"), "{}", logs.body);
}

#[test]
fn a_small_project_is_sent_whole_code_first() {
    let p = task_project("py-04-invoice-discount");
    let mut engine = ContextEngine::new(p.path(), hermetic_config()).unwrap();
    let ctx = engine.base("the total on invoices ignores the discount", None);
    let files: Vec<&str> = ctx.sent_files.iter().map(|(p, _)| p).collect();
    for f in [
        "models.py",
        "pricing.py",
        "render.py",
        "tax.py",
        "test_invoice.py",
    ] {
        assert!(files.contains(&f), "{f} not in {files:?}");
    }
    // Each file once, read whole: no snippet of a file that is also sent whole.
    let file_blocks = ctx.blocks.iter().filter(|b| b.carries_file()).count();
    assert_eq!(file_blocks, files.len(), "{}", ctx.text);
}

#[test]
fn the_budget_drops_the_map_and_env_before_the_pointed_files() {
    let config = ContextConfig {
        small_project_bytes: 0,
        max_total_chars: 2_500,
        ..hermetic_config()
    };
    let p = task_project("py-01-calc-add");
    let mut engine = ContextEngine::new(p.path(), config).unwrap();
    let ctx = engine.base("fix: add() in calc.py subtracts", None);
    let files: Vec<&str> = ctx.sent_files.iter().map(|(p, _)| p).collect();
    assert!(files.contains(&"calc.py"), "{files:?}");
    assert!(ctx.stats.context_total_chars <= 2_500, "{:?}", ctx.stats);
}

/// A project's build caches — cargo's `target/` (tagged by a `CACHEDIR.TAG`), Python's
/// `__pycache__` — are neither mapped nor searched: generated files, hundreds of hashed names.
/// A `CACHEDIR.TAG` without the specification's signature tags nothing.
#[test]
fn build_caches_are_neither_mapped_nor_searched() {
    let p = task_project("rs-05-lexer-escaped-quote");
    p.write(
        "target/CACHEDIR.TAG",
        b"Signature: 8a477f597d28d172789f06886806bc55\n# cargo's cache\n",
    );
    p.write(
        "target/debug/deps/lexer-96f2adae63e94bb1.d",
        b"tokenize escaped_quotes_stay_inside_the_string\n",
    );
    p.write("src/__pycache__/gen.cpython-312.pyc", b"tokenize\n");
    p.write("notes/CACHEDIR.TAG", b"not a cache: no signature\n");
    p.write("notes/tokenize.md", b"tokenize notes\n");
    let mut engine = ContextEngine::new(p.path(), pointing()).unwrap();
    let ctx = engine.base("the JSONC lexer ends a string at an escaped quote", None);
    let map = ctx
        .blocks
        .iter()
        .find(|b| b.kind == BlockKind::Map)
        .expect("a map");
    assert!(map.body.contains("src/lexer.rs"), "{}", map.body);
    assert!(map.body.contains("notes/tokenize.md"), "{}", map.body);
    for cached in ["target", "__pycache__"] {
        assert!(!map.body.contains(cached), "{cached} mapped:\n{}", map.body);
    }
    let hits = engine
        .project()
        .search_hits("tokenize", None, papayu_context::SearchMode::Literal)
        .unwrap();
    let paths: Vec<String> = hits.hits.iter().map(|h| h.path.to_string()).collect();
    assert!(paths.iter().any(|p| p == "src/lexer.rs"), "{paths:?}");
    assert!(paths.iter().any(|p| p == "notes/tokenize.md"), "{paths:?}");
    assert!(
        !paths
            .iter()
            .any(|p| p.starts_with("target/") || p.contains("__pycache__")),
        "{paths:?}"
    );
}
