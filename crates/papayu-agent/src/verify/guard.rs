//! Whether a change edits the tests that judge it: an existing test file it changes or deletes,
//! or the `#[cfg(test)]` module of a Rust file. A fix the tests confirm only because it rewrote
//! them is no fix. Reads the project's files (as they are before the change); writes nothing.

use camino::Utf8Path;
use papayu_patch::Preview;

/// The part of a file that is test code: all of a test file (`papayu_context::is_test_path`),
/// the `#[cfg(test)]` module of a Rust file and what follows it, nothing of any other file.
///
/// ```
/// use papayu_agent::verify::test_section;
/// let lib = "pub fn f() -> u8 { 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() { assert_eq!(super::f(), 1); }\n}\n";
/// assert!(test_section("src/lib.rs", lib).unwrap().starts_with("#[cfg(test)]\nmod tests"));
/// assert_eq!(test_section("test_calc.py", "x = 1\n"), Some("x = 1\n"));
/// assert_eq!(test_section("calc.py", "x = 1\n"), None);
/// ```
pub fn test_section<'a>(path: &str, text: &'a str) -> Option<&'a str> {
    if papayu_context::is_test_path(path) {
        return Some(text);
    }
    if !path.ends_with(".rs") {
        return None;
    }
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            let next = lines
                .clone()
                .find(|l| !l.trim().is_empty() && !l.trim().starts_with("#["));
            if next.is_some_and(|l| {
                let l = l.trim_start();
                l.starts_with("mod ")
                    || l.starts_with("pub mod ")
                    || l.starts_with("pub(crate) mod ")
            }) {
                return Some(&text[offset..]);
            }
        }
        offset += line.len();
    }
    None
}

/// The first file whose existing test code (see [`test_section`]) the previewed change alters or
/// deletes, or `None`. New test files and a test module added to a file that had none are not
/// edits of the tests that judge the change. Whitespace at the ends of lines is not an edit.
pub fn edited_tests(root: &Utf8Path, preview: &Preview) -> Option<String> {
    preview.files.iter().find_map(|f| {
        if f.noop || f.old_bytes.is_none() || f.diff.is_empty() {
            return None;
        }
        let old = fs_err::read(root.join(&f.path)).ok()?;
        let old = String::from_utf8(old).ok()?;
        let before = test_section(&f.path, &old)?;
        let edited = match f.new_bytes {
            None => true,
            Some(_) => match papayu_patch::engine::apply_patch_to_text(&old, &f.diff) {
                Ok(new) => {
                    test_section(&f.path, &new.text).is_none_or(|after| !same(before, after))
                }
                Err(_) => false,
            },
        };
        edited.then(|| f.path.clone())
    })
}

/// Equal but for whitespace at the ends of lines.
fn same(a: &str, b: &str) -> bool {
    a.lines()
        .map(str::trim_end)
        .eq(b.lines().map(str::trim_end))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "pub fn f() -> u8 {\n    2\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() {\n        assert_eq!(super::f(), 1);\n    }\n}\n";

    #[test]
    fn a_cfg_test_attribute_on_an_import_is_not_the_test_module() {
        let text = "#[cfg(test)]\nuse std::fmt;\n\npub fn f() {}\n";
        assert_eq!(test_section("src/lib.rs", text), None);
        let text = "#[cfg(test)]\n#[allow(dead_code)]\npub(crate) mod helpers {}\n";
        assert_eq!(test_section("src/lib.rs", text), Some(text));
    }

    #[test]
    fn sections_compare_without_trailing_whitespace() {
        assert!(same("a\nb\n", "a  \nb"));
        assert!(!same("a\nb\n", "a\nc\n"));
    }

    fn preview(path: &str, diff: &str, kind: papayu_protocol::ActionKind) -> Preview {
        Preview {
            files: vec![papayu_patch::FileDiff {
                index: 0,
                kind,
                path: path.into(),
                diff: diff.into(),
                old_bytes: Some(LIB.len()),
                new_bytes: Some(LIB.len()),
                removed_files: 0,
                noop: false,
                hunks: Vec::new(),
                error: None,
            }],
            summary: papayu_patch::Summary::default(),
        }
    }

    #[test]
    fn an_edit_of_a_rust_files_test_module_is_an_edit_of_the_tests_and_of_its_code_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        fs_err::create_dir_all(root.join("src")).unwrap();
        fs_err::write(root.join("src/lib.rs"), LIB).unwrap();
        let kind = papayu_protocol::ActionKind::PatchFile;
        let code = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn f() -> u8 {\n-    2\n+    1\n }\n";
        assert_eq!(
            edited_tests(root, &preview("src/lib.rs", code, kind.clone())),
            None
        );
        let tests = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -8,3 +8,3 @@\n     fn one() {\n-        assert_eq!(super::f(), 1);\n+        assert_eq!(super::f(), 2);\n     }\n";
        assert_eq!(
            edited_tests(root, &preview("src/lib.rs", tests, kind.clone())),
            Some("src/lib.rs".into())
        );
        // Deleting the file deletes its tests.
        let mut gone = preview(
            "src/lib.rs",
            "whatever",
            papayu_protocol::ActionKind::DeleteFile,
        );
        gone.files[0].new_bytes = None;
        assert_eq!(edited_tests(root, &gone), Some("src/lib.rs".into()));
        // A new test file is not an edit of the tests that judge the change.
        let mut new = preview("tests/new.rs", "+x", kind);
        new.files[0].old_bytes = None;
        assert_eq!(edited_tests(root, &new), None);
    }

    #[test]
    fn lib_sections_start_at_the_module() {
        let s = test_section("src/lib.rs", LIB).unwrap();
        assert!(s.starts_with("#[cfg(test)]\nmod tests {"));
        assert!(LIB.ends_with(s));
    }
}
