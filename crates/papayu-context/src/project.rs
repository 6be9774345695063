//! [`Project`]: the four request types of SPEC §6.1, uncached (`web_search` is answered by a
//! [`crate::ContextExtras`] through the engine).

use std::io::{Read, Seek, SeekFrom};

use camino::Utf8Path;
use papayu_protocol::{ContextRequest, sha256_hex};
use papayu_validate::RelPath;

use crate::block::{Block, BlockKind, FileRef};
use crate::confine::{Refusal, Resolved, Root, display_raw};
use crate::{ContextConfig, ContextError};

/// A project opened for context gathering: a canonical root plus the limits.
///
/// Every method returns a [`Block`]; a refused, missing or non-UTF-8 file is a block whose body
/// is a short note, never an error and never silence.
#[derive(Debug, Clone)]
pub struct Project {
    pub(crate) root: Root,
    pub(crate) config: ContextConfig,
}

/// The effective line range of a `read_file` request (defaults applied).
pub(crate) fn read_range(
    config: &ContextConfig,
    start_line: Option<u64>,
    end_line: Option<u64>,
) -> (u64, u64) {
    let start = start_line.unwrap_or(1).max(1);
    let end =
        end_line.unwrap_or_else(|| start.saturating_add(config.read_default_lines.max(1) - 1));
    (start, end)
}

/// The SPEC §6.2 cache key of a request, with defaults applied and the path normalised when it
/// is valid (so `./src/a.rs` and `src/a.rs` share an entry).
pub fn cache_key(config: &ContextConfig, request: &ContextRequest) -> String {
    match request {
        ContextRequest::Env => "env".to_owned(),
        ContextRequest::Logs { source, last_n } => {
            format!(
                "logs{{source={source:?},last_n={}}}",
                last_n.unwrap_or(config.logs_default_last_n)
            )
        }
        ContextRequest::ReadFile {
            path,
            start_line,
            end_line,
        } => {
            let (start, end) = read_range(config, *start_line, *end_line);
            let path = RelPath::parse(path)
                .map(|p| p.as_str().to_owned())
                .unwrap_or_else(|_| path.clone());
            format!("read_file{{path={path:?},start={start},end={end}}}")
        }
        ContextRequest::Search { query, glob } => match glob {
            Some(g) => format!("search{{query={query:?},glob={g:?}}}"),
            None => format!("search{{query={query:?},glob=none}}"),
        },
        ContextRequest::WebSearch { query, domains } => {
            format!("web_search{{query={query:?},domains={domains:?}}}")
        }
    }
}

/// The block of a `web_search` request: the answer's body under `ONLINE[query]:` with its
/// sources, or a note saying why there is none.
pub(crate) fn online_block(
    config: &ContextConfig,
    request: &ContextRequest,
    answer: Option<Result<crate::WebAnswer, String>>,
) -> Block {
    let key = cache_key(config, request);
    let query = match request {
        ContextRequest::WebSearch { query, .. } => query.as_str(),
        _ => "",
    };
    let header = format!("ONLINE[{}]:", display_raw(query));
    match answer {
        Some(Ok(a)) => {
            let mut block = Block::new(BlockKind::Online, key, header, a.body, None);
            block.sources = a.sources;
            block
        }
        Some(Err(why)) => Block::new(
            BlockKind::Online,
            key,
            header,
            note(format!("online research failed: {why}")),
            None,
        ),
        None => Block::new(
            BlockKind::Online,
            key,
            header,
            note("online research is not enabled (PAPAYU_RESEARCH=1 turns it on)"),
            None,
        ),
    }
}

fn file_header(path: &str, sha: &str) -> String {
    format!("FILE[{path}] (sha256={sha}):")
}

fn note(text: impl std::fmt::Display) -> String {
    format!("[{text}]")
}

impl Project {
    /// Open `root` (must be an existing directory) with the given limits.
    pub fn open(root: impl AsRef<Utf8Path>, config: ContextConfig) -> Result<Self, ContextError> {
        Ok(Self {
            root: Root::open(root.as_ref(), config.policy.clone())?,
            config,
        })
    }

    /// The canonical project root.
    pub fn root(&self) -> &Utf8Path {
        self.root.canonical()
    }

    /// The limits in force.
    pub fn config(&self) -> &ContextConfig {
        &self.config
    }

    /// Check a model-supplied path against the path rules, the protected list and symlink
    /// confinement; `Ok` only for an existing regular file inside the project.
    pub fn check_path(&self, raw: &str) -> Result<RelPath, Refusal> {
        self.root.resolve(raw).map(|r| r.rel)
    }

    /// Fulfil one request without any cache.
    pub fn fulfil(&self, request: &ContextRequest, check_output: Option<&str>) -> Block {
        match request {
            ContextRequest::ReadFile {
                path,
                start_line,
                end_line,
            } => self.read_file(path, *start_line, *end_line),
            ContextRequest::Search { query, glob } => self.search(query, glob.as_deref()),
            ContextRequest::Logs { source, last_n } => self.logs(source, *last_n, check_output),
            ContextRequest::Env => self.env(),
            ContextRequest::WebSearch { .. } => online_block(&self.config, request, None),
        }
    }

    /// `read_file`: lines `start_line..=end_line` (1-based; defaults 1 and start+199) as
    /// `N|text`, under a header carrying the sha256 of the whole file.
    pub fn read_file(&self, path: &str, start_line: Option<u64>, end_line: Option<u64>) -> Block {
        let (start, end) = read_range(&self.config, start_line, end_line);
        let key = cache_key(
            &self.config,
            &ContextRequest::ReadFile {
                path: path.to_owned(),
                start_line: Some(start),
                end_line: Some(end),
            },
        );
        let refused = |shown: String, why: Refusal| {
            Block::new(
                BlockKind::File,
                key.clone(),
                format!("FILE[{shown}]:"),
                note(why),
                None,
            )
        };
        let resolved = match self.root.resolve(path) {
            Ok(r) => r,
            Err(why) => {
                let shown = RelPath::parse(path)
                    .map(|p| p.as_str().to_owned())
                    .unwrap_or_else(|_| display_raw(path));
                return refused(shown, why);
            }
        };
        let shown = resolved.rel.as_str().to_owned();
        let (bytes, sha) = match self.read_whole(&resolved) {
            Ok(v) => v,
            Err(why) => return refused(shown, why),
        };
        let header = file_header(&shown, &sha);
        let Ok(text) = std::str::from_utf8(&bytes) else {
            let why = Refusal::NotUtf8 {
                bytes: bytes.len() as u64,
            };
            return Block::new(BlockKind::File, key, header, note(why), None);
        };
        let file = Some(FileRef {
            path: shown,
            sha256: sha,
        });
        if end < start {
            let msg = format!("invalid range: end_line {end} is before start_line {start}");
            return Block::new(BlockKind::File, key, header, note(msg), None);
        }
        let (body, total) = number_lines(text, start, end);
        if text.is_empty() {
            return Block::new(BlockKind::File, key, header, note("empty file"), file);
        }
        if start > total {
            let msg = format!("the file has {total} lines; line {start} is past the end");
            return Block::new(BlockKind::File, key, header, note(msg), None);
        }
        let shown_end = end.min(total);
        let mut body = body;
        if start > 1 || shown_end < total {
            body.push_str(&format!("[lines {start}-{shown_end} of {total}]"));
        } else {
            body.pop();
        }
        Block::new(BlockKind::File, key, header, body, file)
    }

    pub(crate) fn read_whole(&self, resolved: &Resolved) -> Result<(Vec<u8>, String), Refusal> {
        if resolved.len > self.config.max_file_bytes {
            return Err(Refusal::TooLarge {
                bytes: resolved.len,
                limit: self.config.max_file_bytes,
            });
        }
        let bytes = fs_err::read(&resolved.abs).map_err(|e| Refusal::Io(e.kind().to_string()))?;
        let sha = sha256_hex(&bytes);
        Ok((bytes, sha))
    }

    /// `logs`: the last `last_n` (default 200) lines of `check` (the last check output, given
    /// by the caller) or of a named `log_files` entry (confined like any path).
    pub fn logs(&self, source: &str, last_n: Option<u64>, check_output: Option<&str>) -> Block {
        self.logs_of(source, last_n, self.log_text(source, check_output))
    }

    /// Whether `source` is a log source of the project itself (`check` or a `log_files` name).
    pub(crate) fn knows_log(&self, source: &str) -> bool {
        source == "check" || self.config.log_files.contains_key(source)
    }

    /// The `logs` block of `source` whose text (or why there is none) is `text`.
    pub(crate) fn logs_of(
        &self,
        source: &str,
        last_n: Option<u64>,
        text: Result<String, String>,
    ) -> Block {
        let n = last_n.unwrap_or(self.config.logs_default_last_n);
        let key = cache_key(
            &self.config,
            &ContextRequest::Logs {
                source: source.to_owned(),
                last_n: Some(n),
            },
        );
        let header = format!("LOGS[{}]:", display_raw(source));
        let body = match text {
            Ok(text) => {
                let tail = last_lines(&text, n);
                if tail.is_empty() {
                    note("the log is empty")
                } else {
                    tail.to_owned()
                }
            }
            Err(msg) => note(msg),
        };
        Block::new(BlockKind::Logs, key, header, body, None)
    }

    fn log_text(&self, source: &str, check_output: Option<&str>) -> Result<String, String> {
        if source == "check" {
            return check_output
                .map(str::to_owned)
                .ok_or_else(|| "no check output has been recorded yet".to_owned());
        }
        let Some(path) = self.config.log_files.get(source) else {
            let mut names: Vec<&str> = vec!["check"];
            names.extend(self.config.log_files.keys().map(String::as_str));
            return Err(format!(
                "unknown log source; available: {}",
                names.join(", ")
            ));
        };
        let resolved = self.root.resolve(path).map_err(|r| r.to_string())?;
        let window = self.config.max_file_bytes;
        let mut file =
            fs_err::File::open(&resolved.abs).map_err(|e| format!("not read: {}", e.kind()))?;
        let skip = resolved.len.saturating_sub(window);
        if skip > 0 {
            file.seek(SeekFrom::Start(skip))
                .map_err(|e| format!("not read: {}", e.kind()))?;
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| format!("not read: {}", e.kind()))?;
        if skip > 0 {
            // The window may start mid-line or mid-character: drop up to the first newline.
            let cut = bytes
                .iter()
                .position(|b| *b == b'\n')
                .map_or(bytes.len(), |i| i + 1);
            bytes.drain(..cut);
        }
        String::from_utf8(bytes).map_err(|_| {
            Refusal::NotUtf8 {
                bytes: resolved.len,
            }
            .to_string()
        })
    }
}

/// Lines `start..=end` of `text` as `N|line\n`, plus the total line count.
fn number_lines(text: &str, start: u64, end: u64) -> (String, u64) {
    let mut out = String::new();
    let mut total = 0u64;
    for (i, line) in text.lines().enumerate() {
        let n = i as u64 + 1;
        total = n;
        if n >= start && n <= end {
            out.push_str(&n.to_string());
            out.push('|');
            out.push_str(line);
            out.push('\n');
        }
    }
    (out, total)
}

/// The last `n` lines of `text` (without a trailing newline).
pub(crate) fn last_lines(text: &str, n: u64) -> &str {
    let trimmed = text.trim_end_matches(['\n', '\r']);
    if n == 0 {
        return "";
    }
    let mut seen = 0u64;
    for (i, b) in trimmed.bytes().enumerate().rev() {
        if b == b'\n' {
            seen += 1;
            if seen == n {
                return &trimmed[i + 1..];
            }
        }
    }
    trimmed
}
