//! The `env` block as the CLI sends it: only the tools of the project's languages are probed,
//! and their versions are remembered in the user's cache between runs (DECISIONS D51).

use std::os::unix::fs::PermissionsExt;

use crate::papayu_env;

#[test]
fn a_python_project_probes_python_once_and_never_npm() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for (tool, answer) in [
        ("python3", "Python 9.9.9"),
        ("npm", "10.0.0"),
        ("cargo", "cargo 1.0.0"),
    ] {
        let exe = bin.join(tool);
        std::fs::write(
            &exe,
            format!(
                "#!/bin/sh\necho run >> '{}/{tool}.runs'\necho '{answer}'\n",
                tmp.path().display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let runs = |tool: &str| {
        std::fs::read_to_string(tmp.path().join(format!("{tool}.runs")))
            .map_or(0, |s| s.lines().count())
    };
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
    std::fs::write(
        project.join("calc.py"),
        "def add(a, b):\n    return a + b\n",
    )
    .unwrap();
    let cache = tmp.path().join("cache");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let env = [
        ("PATH", path.as_str()),
        ("XDG_CACHE_HOME", cache.to_str().unwrap()),
    ];
    let request = r#"{"type":"env"}"#;
    for _ in 0..2 {
        let run = papayu_env(&project, &env, &["context", "--request", request]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains("python3: Python 9.9.9\n"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.contains(
                "not probed: rustc, cargo, node, npm, go (the project shows none of their files)"
            ),
            "{}",
            run.stdout
        );
    }
    assert_eq!(runs("python3"), 1, "the second run asked python3 again");
    assert_eq!(runs("npm"), 0);
    assert_eq!(runs("cargo"), 0);
    let memory = std::fs::read_to_string(cache.join("papayu/tool-versions.json")).unwrap();
    assert!(memory.contains("Python 9.9.9"), "{memory}");
}
