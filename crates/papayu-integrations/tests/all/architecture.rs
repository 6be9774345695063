//! The architecture summary: default and configured path, cap, refusal outside the project.

use papayu_integrations::{ArchitectureError, architecture};

use crate::support::{config, project, write};

#[test]
fn summary_is_read_capped_and_optional() {
    let p = project();
    let cfg = config(&[]);
    assert_eq!(
        architecture::summary(&p.root, &cfg.architecture).expect("ok"),
        None
    );
    write(
        &p.root,
        ".papa-yu/architecture.md",
        "# Layers\n\nui -> app -> core\n",
    );
    let s = architecture::summary(&p.root, &cfg.architecture)
        .expect("ok")
        .expect("present");
    assert_eq!(s, "# Layers\n\nui -> app -> core");
    assert!(architecture::block(&s).body.contains("ui -> app"));

    write(&p.root, "docs/arch.md", &"x".repeat(500));
    let cfg = config(&[
        ("PAPAYU_DOCUMATIC_ARCH_PATH", "docs/arch.md"),
        ("PAPAYU_ARCH_MAX_CHARS", "200"),
    ]);
    let s = architecture::summary(&p.root, &cfg.architecture)
        .expect("ok")
        .expect("present");
    assert!(s.starts_with(&"x".repeat(200)));
    assert!(!s.starts_with(&"x".repeat(201)));
    assert!(s.contains("[cut at 200 characters"));
}

#[test]
fn paths_outside_the_project_are_refused() {
    let p = project();
    for bad in ["/etc/passwd", "../secret.md", "docs/../../x.md"] {
        let cfg = config(&[("PAPAYU_DOCUMATIC_ARCH_PATH", bad)]);
        let err = architecture::summary(&p.root, &cfg.architecture).expect_err(bad);
        assert!(
            matches!(err, ArchitectureError::Path { .. }),
            "{bad}: {err}"
        );
    }
}
