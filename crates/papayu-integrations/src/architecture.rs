//! The architecture summary: `.papa-yu/architecture.md` (or `PAPAYU_DOCUMATIC_ARCH_PATH`,
//! relative to the project root), cut to a cap, as the base context's `ARCHITECTURE` block
//! and agent-sync's `architecture_summary`. It only reads that one file.

use std::io::ErrorKind;

use camino::Utf8Path;
use papayu_context::{Block, BlockKind};

use crate::config::ArchitectureConfig;
use crate::error::ArchitectureError;
use crate::project_file;

/// The summary of the project at `root`, cut to `config.max_chars` characters (a note says
/// so); `None` when the file does not exist or is blank.
pub fn summary(
    root: &Utf8Path,
    config: &ArchitectureConfig,
) -> Result<Option<String>, ArchitectureError> {
    let path = project_file(root, &config.path).map_err(|reason| ArchitectureError::Path {
        path: config.path.clone(),
        reason,
    })?;
    let text = match fs_err::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ArchitectureError::Read { path, source }),
    };
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    Ok(Some(match text.char_indices().nth(config.max_chars) {
        Some((cut, _)) => format!(
            "{}\n[cut at {} characters; the whole summary is {}]",
            text[..cut].trim_end(),
            config.max_chars,
            config.path
        ),
        None => text.to_owned(),
    }))
}

/// The base context's `ARCHITECTURE` block for `summary`.
pub fn block(summary: &str) -> Block {
    Block::extra(
        BlockKind::Architecture,
        "architecture",
        "ARCHITECTURE (the project's own summary of its structure):",
        summary,
    )
}
