//! The adversarial path table: every entry asserts its exact code (SPEC §4 "Paths", protected
//! paths, extension policy). Sources: OWASP path-traversal examples, PayloadsAllTheThings
//! "Directory Traversal" intruder lists, zip-slip archive names, Windows naming rules.

use papayu_protocol::{Action, ActionKind};
use papayu_protocol::{ErrorCode, ProtocolVersion};
use papayu_validate::{Context, Policy, RelPath, validate_actions};

use ErrorCode::{ForbiddenPath as F, InvalidPath as I, PathTooLong as L, ProtectedPath as P};

/// Validate a CREATE_FILE of `path` and compare the codes (empty = accepted).
#[track_caller]
fn check(path: &str, expect: Option<ErrorCode>) {
    let mut action = Action::new(ActionKind::CreateFile, path);
    action.content = Some("x\n".into());
    let report = validate_actions(
        &[action],
        &Context::new(ProtocolVersion::V3),
        &Policy::default(),
    );
    let codes = report.codes();
    assert_eq!(
        codes,
        expect.into_iter().collect::<Vec<_>>(),
        "path {path:?}\n{report}"
    );
}

const ADVERSARIAL: &[(&str, ErrorCode)] = &[
    // `..` in every position, both separators
    ("..", I),
    ("../", I),
    ("..\\", I),
    ("../etc/passwd", I),
    ("../../etc/passwd", I),
    ("../../../../../../../../etc/passwd", I),
    ("..\\..\\windows\\win.ini", I),
    ("..\\..\\..\\..\\boot.ini", I),
    ("a/../b.txt", I),
    ("a\\..\\b.txt", I),
    ("a/..\\b.txt", I),
    ("a\\../b.txt", I),
    ("a/b/..", I),
    ("a/b/../../..", I),
    ("src/../../x.rs", I),
    ("./../x.rs", I),
    (".\\..\\x.rs", I),
    ("..//x.rs", I),
    ("..\\/x.rs", I),
    ("x/../../../../tmp/evil.sh", I),
    ("....", I),
    ("..../x.rs", I),
    ("...", I),
    (".../x.rs", I),
    ("..././x.rs", I),
    ("....//....//etc/passwd", I),
    ("..\\\\..\\\\etc", I),
    // zip-slip archive member names
    ("../../../../tmp/evil.sh", I),
    ("..\\..\\..\\evil.exe", I),
    ("foo/../../../evil.sh", I),
    ("good/../../evil.sh", I),
    ("/tmp/evil.sh", I),
    ("C:\\evil.exe", I),
    ("../../../../../../root/.ssh/authorized_keys", I),
    ("../../../home/user/.bashrc", I),
    // percent-encoded and overlong UTF-8 traversal (OWASP, PayloadsAllTheThings)
    ("%2e%2e/x.rs", I),
    ("%2e%2e%2fetc%2fpasswd", I),
    ("%2E%2E%2F", I),
    ("..%2fetc/passwd", I),
    ("..%5cwin.ini", I),
    ("%2e%2e%5cboot.ini", I),
    ("%252e%252e%252fetc", I),
    ("..%252f..%252fetc/passwd", I),
    ("..%255c..%255cboot.ini", I),
    ("..%c0%afetc/passwd", I),
    ("..%c1%9cboot.ini", I),
    ("%c0%ae%c0%ae/x.rs", I),
    ("%c0%ae%c0%ae%c0%af", I),
    ("%e0%80%ae%e0%80%ae/x.rs", I),
    ("..%ef%bc%8fetc", I),
    ("%uff0e%uff0e/x.rs", I),
    ("..%u2215etc", I),
    ("..%u2216boot.ini", I),
    ("..%00/x.rs", I),
    ("x.rs%00.md", I),
    ("/%2e%2e/etc", I),
    (".%2e/x.rs", I),
    ("%2e./x.rs", I),
    // absolute and network paths
    ("/", I),
    ("//", I),
    ("///", I),
    ("/etc/passwd", I),
    ("/x.rs", I),
    ("\\", I),
    ("\\windows\\win.ini", I),
    ("//etc/passwd", I),
    ("\\\\server\\share\\x.rs", I),
    ("\\\\?\\C:\\x.rs", I),
    ("\\\\.\\PhysicalDrive0", I),
    ("\\\\.\\pipe\\x", I),
    ("//server/share/x.rs", I),
    ("\\/x.rs", I),
    ("/\\x.rs", I),
    ("file:///etc/passwd", I),
    ("http://example.com/x.js", I),
    // drive letters
    ("C:", I),
    ("C:\\", I),
    ("C:\\Windows\\win.ini", I),
    ("c:/x.rs", I),
    ("C:x.rs", I),
    ("z:..\\x.rs", I),
    ("a/C:/x.rs", I),
    // home directory
    ("~", I),
    ("~/", I),
    ("~/.ssh/id_rsa", I),
    ("~root/x.rs", I),
    ("~\\x.rs", I),
    // r_tilde_after_leading_dot_slash: found by the idempotence proptest
    ("./~", I),
    (".\\~\\x.rs", I),
    ("./~/.ssh/config", I),
    // empty, dot and empty segments
    ("", I),
    (" ", I),
    ("   ", I),
    (".", I),
    ("./", I),
    (".\\", I),
    ("./.", I),
    ("././a.rs", I),
    ("a//b.rs", I),
    ("a/", I),
    ("a\\", I),
    ("a/./b.rs", I),
    ("./a/./b.rs", I),
    ("a/.", I),
    // control characters
    ("\t", I),
    ("a\0b.rs", I),
    ("x.rs\0.md", I),
    ("a\u{1}b.rs", I),
    ("a\nb.rs", I),
    ("a\rb.rs", I),
    ("x.rs\n", I),
    ("a\tb.rs", I),
    ("\u{7f}x.rs", I),
    ("a\u{1b}[31mb.rs", I),
    ("a\u{85}b.rs", I),
    ("a\u{9b}b.rs", I),
    // `:` — NTFS alternate data streams and the rest
    ("file.txt::$DATA", I),
    ("file.txt:stream", I),
    ("x.rs:$DATA", I),
    ("src/main.rs::$INDEX_ALLOCATION", I),
    ("a:b.rs", I),
    (":x.rs", I),
    ("con:", I),
    // trailing dots and spaces (Windows strips them)
    ("x.rs.", I),
    ("x.rs ", I),
    ("dir./x.rs", I),
    ("dir /x.rs", I),
    ("x.rs...", I),
    ("x.rs. . ", I),
    ("a/b. /c.rs", I),
    // Windows device names, any case, with extensions, in any segment
    ("con", I),
    ("CON", I),
    ("Con.txt", I),
    ("con.txt", I),
    ("nul", I),
    ("NUL.rs", I),
    ("nUl.Js", I),
    ("prn.md", I),
    ("aux.json", I),
    ("AUX.tar.gz", I),
    ("com1", I),
    ("COM1.txt", I),
    ("com9.md", I),
    ("COM0.md", I),
    ("lpt1", I),
    ("LPT9.txt", I),
    ("lpt0.js", I),
    ("com\u{b9}.txt", I),
    ("lpt\u{b3}", I),
    ("src/con/x.rs", I),
    ("a/aux/b.md", I),
    ("conin$", I),
    ("CONOUT$.txt", I),
    ("CLOCK$", I),
    ("con .txt", I),
    // bidi, zero-width, and separator/dot lookalikes (fullwidth and best-fit mappings)
    ("a\u{202E}txt.exe", I),
    ("x\u{200B}.rs", I),
    ("\u{FEFF}x.rs", I),
    ("a\u{2215}..\u{2215}x.rs", I),
    ("..\u{FF0F}x.rs", I),
    ("..\u{FF3C}x.rs", I),
    ("\u{FF0E}\u{FF0E}/x.rs", I),
    ("\u{FF0E}\u{FF0E}\u{FF0F}etc\u{FF0F}passwd", I),
    ("a\u{29F5}b.rs", I),
    ("x\u{FF1A}y.rs", I),
    ("a\u{2028}b.rs", I),
    ("x\u{FFFD}.rs", I),
    ("\u{2024}\u{2024}/x.rs", I),
    // lengths
    ("__LONG_241__", L),
    ("__LONG_SEGMENT_256__", L),
    ("__DEEP_300__", L),
    // protected, case-insensitive, in every directory
    (".env", P),
    (".ENV", P),
    (".env.local", P),
    (".env.production", P),
    ("config/.env", P),
    ("app/.Env.Local", P),
    ("server.pem", P),
    ("certs/server.PEM", P),
    ("tls.key", P),
    ("x.p12", P),
    ("cert.pfx", P),
    ("id_rsa", P),
    ("id_rsa.pub", P),
    (".ssh/id_ed25519", P),
    ("id_ecdsa", P),
    ("ID_DSA", P),
    ("secrets/x.txt", P),
    ("config/secrets/db.yml", P),
    ("SECRETS/a.md", P),
    (".git", P),
    (".git/config", P),
    (".git/hooks/pre-commit", P),
    (".GIT/HEAD", P),
    ("vendor/sub/.git/config", P),
    (".papa-yu/policy.json", P),
    (".papa-yu/tx/1/manifest.json", P),
    (".Papa-Yu/x.md", P),
    // extension policy and build/vendor directories
    ("node_modules/x.js", F),
    ("a/node_modules/b.js", F),
    ("NODE_MODULES/x.js", F),
    ("target/debug/x.rs", F),
    ("crates/a/target/x.rs", F),
    ("__pycache__/m.py", F),
    (".venv/lib/x.py", F),
    ("evil.exe", F),
    ("x.dll", F),
    ("payload.so", F),
    ("x.bin", F),
    ("noext", F),
    ("a/b/c", F),
    ("photo.png", F),
    ("archive.zip", F),
];

fn expand(path: &str) -> String {
    match path {
        "__LONG_241__" => format!("{}.rs", "a".repeat(238)),
        "__LONG_SEGMENT_256__" => format!("{}.rs", "b".repeat(253)),
        "__DEEP_300__" => format!("{}x.rs", "d/".repeat(150)),
        other => other.to_owned(),
    }
}

#[test]
fn adversarial_paths_have_their_exact_code() {
    assert!(
        ADVERSARIAL.len() >= 150,
        "only {} adversarial paths",
        ADVERSARIAL.len()
    );
    let mut seen = std::collections::BTreeSet::new();
    for (path, code) in ADVERSARIAL {
        assert!(seen.insert(*path), "duplicate table entry {path:?}");
        check(&expand(path), Some(*code));
    }
}

#[test]
fn adversarial_invalid_paths_are_refused_by_relpath_too() {
    for (path, code) in ADVERSARIAL.iter().filter(|(_, c)| matches!(c, I | L)) {
        let err = RelPath::parse(&expand(path)).expect_err(path);
        assert_eq!(err.code, *code, "{path:?}: {err}");
    }
}

/// `(raw, normalised)`.
const ACCEPTED: &[(&str, &str)] = &[
    ("a..b.txt", "a..b.txt"),
    ("notes/a..b.txt", "notes/a..b.txt"),
    ("src/main.rs", "src/main.rs"),
    ("./src/main.rs", "src/main.rs"),
    ("src\\lib.rs", "src/lib.rs"),
    (".\\docs\\guide.md", "docs/guide.md"),
    ("docs/Привет.md", "docs/Привет.md"),
    ("документы/заметки.md", "документы/заметки.md"),
    ("文档/说明.md", "文档/说明.md"),
    ("日本語/テスト.ts", "日本語/テスト.ts"),
    ("emoji_🎉.md", "emoji_🎉.md"),
    (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
    (".github/CODEOWNERS", ".github/CODEOWNERS"),
    (".env.example", ".env.example"),
    ("config/.ENV.example", "config/.ENV.example"),
    ("README", "README"),
    ("Makefile", "Makefile"),
    ("Dockerfile", "Dockerfile"),
    ("LICENSE", "LICENSE"),
    (".gitignore", ".gitignore"),
    (".editorconfig", ".editorconfig"),
    ("scripts/build.sh", "scripts/build.sh"),
    // Decision: `...rs` is an ordinary name (no segment is `.`/`..`, none ends in a dot), and
    // its extension is `rs`.
    ("src/...rs", "src/...rs"),
    ("a b/c d.md", "a b/c d.md"),
    (" leading.md", " leading.md"),
    ("src/con_test.rs", "src/con_test.rs"),
    ("console.js", "console.js"),
    ("com10.txt", "com10.txt"),
    ("lpt.md", "lpt.md"),
    ("auxiliary.rs", "auxiliary.rs"),
    ("src/secrets.rs", "src/secrets.rs"),
    ("src/secret/x.rs", "src/secret/x.rs"),
    ("keys.json", "keys.json"),
    ("monkey.rs", "monkey.rs"),
    ("target.rs", "target.rs"),
    ("src/targets/x.rs", "src/targets/x.rs"),
    (".gitattributes", ".gitattributes"),
    ("a.b.c.d.rs", "a.b.c.d.rs"),
    ("x~/a.rs", "x~/a.rs"),
    ("50%off.md", "50%off.md"),
    ("CHANGELOG.md", "CHANGELOG.md"),
    ("Cargo.lock", "Cargo.lock"),
    ("go.mod", "go.mod"),
];

#[test]
fn accepted_paths_normalise_as_expected() {
    for (raw, normalised) in ACCEPTED {
        check(raw, None);
        assert_eq!(
            RelPath::parse(raw).unwrap().as_str(),
            *normalised,
            "{raw:?}"
        );
    }
    let exactly_240 = format!("{}.rs", "e".repeat(237));
    assert_eq!(exactly_240.len(), 240);
    check(&exactly_240, None);
}

#[test]
fn relpath_helpers_and_case_folding() {
    let p = RelPath::parse("Docs/README.md").unwrap();
    assert_eq!(p.folded(), "docs/readme.md");
    assert_eq!(p.depth(), 2);
    assert_eq!(
        p.parent().unwrap().join("b.md").unwrap().as_str(),
        "Docs/b.md"
    );
    assert!(p.parent().unwrap().join("../b.md").is_err());
}
