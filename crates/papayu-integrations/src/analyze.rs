//! Project analysis: a structured report of a project — languages, size, manifests, the test
//! command, findings, hot spots from papayu's transaction history — for `papayu analyze`
//! (and agent-sync). It only reads the project (`.gitignore` honoured).

use std::collections::BTreeMap;

use camino::Utf8Path;
use papayu_protocol::agent_sync::Finding;
use serde::Serialize;

use crate::config::IntegrationsConfig;
use crate::error::AnalyzeError;
use crate::{architecture, findings};

/// Files read at most when counting (a huge tree is reported as cut).
const MAX_FILES: usize = 50_000;
/// Hot spots listed.
const HOT_SPOTS: usize = 10;

/// Manifests papayu recognises, and the ecosystem each names.
const MANIFESTS: &[(&str, &str)] = &[
    ("Cargo.toml", "rust"),
    ("package.json", "node"),
    ("pyproject.toml", "python"),
    ("setup.py", "python"),
    ("requirements.txt", "python"),
    ("go.mod", "go"),
    ("pom.xml", "java"),
    ("build.gradle", "java"),
    ("build.gradle.kts", "kotlin"),
    ("Gemfile", "ruby"),
    ("composer.json", "php"),
    ("Makefile", "make"),
    ("CMakeLists.txt", "c/c++"),
];

/// The language of a file extension.
fn language(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "rs" => "Rust",
        "py" => "Python",
        "js" | "mjs" | "cjs" | "jsx" => "JavaScript",
        "ts" | "tsx" | "mts" => "TypeScript",
        "go" => "Go",
        "java" => "Java",
        "kt" | "kts" => "Kotlin",
        "rb" => "Ruby",
        "php" => "PHP",
        "c" | "h" => "C",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "C++",
        "cs" => "C#",
        "swift" => "Swift",
        "sh" | "bash" => "Shell",
        "html" | "htm" => "HTML",
        "css" | "scss" | "sass" => "CSS",
        "vue" => "Vue",
        "svelte" => "Svelte",
        "md" => "Markdown",
        "toml" | "yaml" | "yml" | "json" => "Config",
        _ => return None,
    })
}

/// One language's share of the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LanguageShare {
    /// The language.
    pub language: String,
    /// Its files.
    pub files: usize,
    /// Their lines.
    pub lines: usize,
}

/// A file papayu changed often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HotSpot {
    /// The project path.
    pub path: String,
    /// Transactions on the undo stack that touched it.
    pub changes: usize,
}

/// The report of `papayu analyze`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// The project root.
    pub root: String,
    /// Files (not ignored).
    pub files: usize,
    /// Their total size in bytes.
    pub bytes: u64,
    /// Whether counting stopped at the file limit.
    pub truncated: bool,
    /// Languages, most lines first.
    pub languages: Vec<LanguageShare>,
    /// Manifests found at the root, with their ecosystem (`Cargo.toml` → `rust`).
    pub manifests: Vec<(String, String)>,
    /// The test command papayu would run, when one is detected.
    pub test_command: Option<String>,
    /// Findings known without the network (stored and configured SARIF).
    pub findings: Vec<Finding>,
    /// Whether an architecture summary is present.
    pub architecture_summary: bool,
    /// Files papayu's transactions touched most.
    pub hot_spots: Vec<HotSpot>,
}

fn hot_spots(root: &Utf8Path) -> Vec<HotSpot> {
    // Opening the transaction store recovers and locks: only where papayu already keeps one.
    if !root.join(".papa-yu").is_dir() {
        return Vec::new();
    }
    let Some(history) = papayu_patch::Project::open(root)
        .ok()
        .and_then(|p| p.history().ok())
    else {
        return Vec::new();
    };
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for entry in &history.undo {
        for path in &entry.paths {
            *counts.entry(path.clone()).or_default() += 1;
        }
    }
    let mut spots: Vec<HotSpot> = counts
        .into_iter()
        .map(|(path, changes)| HotSpot { path, changes })
        .collect();
    spots.sort_by(|a, b| b.changes.cmp(&a.changes).then_with(|| a.path.cmp(&b.path)));
    spots.truncate(HOT_SPOTS);
    spots
}

/// Analyse the project at `root`.
pub fn analyze(root: &Utf8Path, config: &IntegrationsConfig) -> Result<Analysis, AnalyzeError> {
    if !root.is_dir() {
        return Err(AnalyzeError::NotADirectory {
            path: root.to_owned(),
        });
    }
    let mut files = 0;
    let mut bytes = 0u64;
    let mut truncated = false;
    let mut langs: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git" && e.file_name() != ".papa-yu")
        .build();
    for entry in walker.filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if files == MAX_FILES {
            truncated = true;
            break;
        }
        files += 1;
        let size = entry.metadata().map_or(0, |m| m.len());
        bytes += size;
        let Some(lang) = entry
            .path()
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .and_then(|e| language(&e))
        else {
            continue;
        };
        let lines = if size <= 2 << 20 {
            fs_err::read(entry.path()).map_or(0, |b| bytecount(&b))
        } else {
            0
        };
        let slot = langs.entry(lang).or_default();
        slot.0 += 1;
        slot.1 += lines;
    }
    let mut languages: Vec<LanguageShare> = langs
        .into_iter()
        .map(|(language, (files, lines))| LanguageShare {
            language: language.to_owned(),
            files,
            lines,
        })
        .collect();
    languages.sort_by(|a, b| {
        b.lines
            .cmp(&a.lines)
            .then_with(|| a.language.cmp(&b.language))
    });
    let manifests = MANIFESTS
        .iter()
        .filter(|(name, _)| root.join(name).is_file())
        .map(|(name, eco)| ((*name).to_owned(), (*eco).to_owned()))
        .collect();
    Ok(Analysis {
        root: root.to_string(),
        files,
        bytes,
        truncated,
        languages,
        manifests,
        test_command: papayu_agent::verify::detect_test_command(root).map(|t| t.command),
        findings: findings::known(root, &config.snyk),
        architecture_summary: matches!(
            architecture::summary(root, &config.architecture),
            Ok(Some(_))
        ),
        hot_spots: hot_spots(root),
    })
}

fn bytecount(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

impl Analysis {
    /// The report as text, one fact per line.
    pub fn render(&self) -> String {
        let mut out = vec![
            format!("project {}", self.root),
            format!(
                "{} files, {} bytes{}",
                self.files,
                self.bytes,
                if self.truncated {
                    " (counting stopped at the limit)"
                } else {
                    ""
                }
            ),
        ];
        out.push("languages:".to_owned());
        for l in &self.languages {
            out.push(format!(
                "  {:<12} {:>6} files {:>9} lines",
                l.language, l.files, l.lines
            ));
        }
        let manifests: Vec<String> = self
            .manifests
            .iter()
            .map(|(m, e)| format!("{m} ({e})"))
            .collect();
        out.push(format!(
            "manifests: {}",
            if manifests.is_empty() {
                "none".to_owned()
            } else {
                manifests.join(", ")
            }
        ));
        out.push(format!(
            "test command: {}",
            self.test_command.as_deref().unwrap_or("none detected")
        ));
        out.push(format!(
            "architecture summary: {}",
            if self.architecture_summary {
                "present"
            } else {
                "none"
            }
        ));
        out.push(format!("findings: {}", self.findings.len()));
        for f in self.findings.iter().take(10) {
            out.push(format!("  {}", findings::line(f)));
        }
        if !self.hot_spots.is_empty() {
            out.push("hot spots (papayu transactions):".to_owned());
            for h in &self.hot_spots {
                out.push(format!("  {:>3}  {}", h.changes, h.path));
            }
        }
        out.join("\n")
    }
}
