use super::*;

fn entry(path: &str, size: u64) -> FileEntry {
    FileEntry {
        path: path.to_owned(),
        size,
        modified: None,
    }
}

#[test]
fn stems_take_plural_and_verb_endings_off() {
    assert_eq!(stem("invoices"), "invoice");
    assert_eq!(stem("ignores"), "ignore");
    assert_eq!(stem("Discount"), "discount");
    assert_eq!(stem("entries"), "entry");
    assert_eq!(stem("bus"), "bus");
}

#[test]
fn specific_identifiers() {
    assert!(is_specific_identifier("get_user"));
    assert!(is_specific_identifier("fetchUser"));
    assert!(!is_specific_identifier("total"));
    assert!(!is_specific_identifier("README"));
    assert!(!is_specific_identifier("a_b"));
}

#[test]
fn tests_are_recognised_by_name_and_directory() {
    for p in [
        "test_calc.py",
        "tests/order.rs",
        "src/cart.test.js",
        "pkg/x_test.go",
        "__tests__/a.js",
    ] {
        assert!(is_test_path(p), "{p}");
    }
    for p in ["calc.py", "src/testing_utils.rs", "contest.py"] {
        assert!(!is_test_path(p), "{p}");
    }
}

#[test]
fn the_map_lists_files_and_summarises_the_deepest_directories() {
    let mut files = vec![entry("README.md", 120), entry("src/main.rs", 2_000)];
    for i in 0..30 {
        files.push(entry(&format!("vendor/lib/gen/f{i:02}.rs"), 1_000));
    }
    files.push(entry("vendor/lib/mod.rs", 50));
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let block = map_block(&files, 10, 0);
    assert!(
        block.header.starts_with("PROJECT MAP (33 files"),
        "{}",
        block.header
    );
    assert!(block.body.contains("README.md 120 B"), "{}", block.body);
    assert!(block.body.contains("src/main.rs 2000 B"), "{}", block.body);
    assert!(
        block.body.contains("vendor/lib/gen/ (30 files, 30 KB)"),
        "{}",
        block.body
    );
    assert!(block.body.lines().count() <= 10, "{}", block.body);
    // Tighter: the next deepest directory goes too.
    let block = map_block(&files, 3, 0);
    assert_eq!(
        block.body,
        "README.md 120 B\nsrc/main.rs 2000 B\nvendor/lib/ (31 files, 30 KB)"
    );
}

#[test]
fn the_map_marks_the_most_recent_files() {
    let old = SystemTime::UNIX_EPOCH;
    let new = SystemTime::now();
    let files = vec![
        FileEntry {
            path: "a.py".into(),
            size: 1,
            modified: Some(old),
        },
        FileEntry {
            path: "b.py".into(),
            size: 1,
            modified: Some(new),
        },
    ];
    let block = map_block(&files, 10, 1);
    assert_eq!(block.body, "a.py 1 B\nb.py 1 B (recently modified)");
}
