//! `read_file`, `search` and `context`: papayu-context's confined reads (path rules, protected
//! files, no symlink out of the project) — the only way these tools reach a file.

use papayu_context::{ContextEngine, Refusal, SearchMode};
use papayu_protocol::{ContextRequest, ErrorCode, sha256_hex};
use serde_json::{Value, json};

use super::args::{ContextArgs, ReadFileArgs, SearchArgs};
use super::{ArgError, McpTool, Reply};
use crate::served::Served;

impl Served {
    /// `read_file`: the text (or a line range of it) and the sha256 of the whole file.
    pub(crate) fn read_file(&self, args: ReadFileArgs) -> Result<Reply, ArgError> {
        let tool = McpTool::ReadFile;
        if let (Some(start), Some(end)) = (args.start_line, args.end_line)
            && end < start
        {
            return Err(ArgError::new(
                tool.name(),
                format!("`end_line` {end} is before `start_line` {start}"),
            ));
        }
        if args.start_line == Some(0) || args.end_line == Some(0) {
            return Err(ArgError::new(tool.name(), "line numbers start at 1"));
        }
        let rel = match self.context.check_path(&args.path) {
            Ok(rel) => rel,
            Err(why) => return Ok(refusal(&args.path, &why)),
        };
        let abs = self.root.join(rel.as_str());
        let limit = self.context_config.max_file_bytes;
        let size = fs_err::metadata(&abs).map(|m| m.len()).unwrap_or(0);
        if size > limit {
            return Ok(refusal(
                rel.as_str(),
                &Refusal::TooLarge { bytes: size, limit },
            ));
        }
        let bytes = match fs_err::read(&abs) {
            Ok(b) => b,
            Err(e) => return Ok(refusal(rel.as_str(), &Refusal::Io(e.kind().to_string()))),
        };
        let sha256 = sha256_hex(&bytes);
        let Ok(text) = String::from_utf8(bytes) else {
            return Ok(Reply::rejected(
                ErrorCode::NonUtf8File,
                format!("`{rel}` is not UTF-8 text; papayu edits text files only"),
            )
            .with("path", rel.as_str())
            .with("sha256", sha256)
            .with("bytes", size));
        };
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let total = lines.len() as u64;
        let start = args.start_line.unwrap_or(1);
        let end = args.end_line.unwrap_or(total).min(total);
        let whole = start == 1 && end >= total;
        let content = if whole {
            text.clone()
        } else if start > total {
            String::new()
        } else {
            lines[(start - 1) as usize..end as usize].concat()
        };
        Ok(Reply::done(json!({
            "path": rel.as_str(),
            "sha256": sha256,
            "bytes": text.len(),
            "total_lines": total,
            "start_line": start,
            "end_line": end.max(start.saturating_sub(1)),
            "whole_file": whole,
            "content": content,
        })))
    }

    /// `search`: the hits, sorted by path then line.
    pub(crate) fn search(&self, args: SearchArgs) -> Result<Reply, ArgError> {
        let mode = if args.regex {
            SearchMode::Regex
        } else {
            SearchMode::Literal
        };
        let result = self
            .context
            .search_hits(&args.query, args.glob.as_deref(), mode)
            .map_err(|e| ArgError::new(McpTool::Search.name(), format!("search: {e}")))?;
        Ok(Reply::done(json!({
            "query": args.query,
            "hits": result.hits,
            "more": result.more,
        })))
    }

    /// `context`: requests and auto-gathering under the diet, or the base context of a goal.
    pub(crate) fn context(&self, args: ContextArgs) -> Result<Reply, ArgError> {
        let tool = McpTool::Context;
        let requests = args
            .requests
            .iter()
            .enumerate()
            .map(|(i, r)| context_request(tool, i, r))
            .collect::<Result<Vec<_>, _>>()?;
        let mut engine = ContextEngine::from_project(self.context.clone());
        let assembled = match &args.goal {
            Some(_) if !requests.is_empty() => {
                return Err(ArgError::new(
                    tool.name(),
                    "give `goal` (the base context of a goal) or `requests`, not both",
                ));
            }
            Some(goal) => engine.base(goal, args.text.as_deref()),
            None => engine.assemble(&requests, args.text.as_deref()),
        };
        let blocks: Vec<Value> = assembled
            .blocks
            .iter()
            .map(|b| {
                json!({
                    "kind": b.kind, "origin": b.origin, "key": b.key, "header": b.header,
                    "file": b.file, "diet": b.diet, "chars": b.rendered_chars(),
                })
            })
            .collect();
        Ok(Reply::done(json!({
            "text": assembled.text,
            "blocks": blocks,
            "stats": assembled.stats,
            "sent_files": assembled.sent_files,
        })))
    }
}

/// The `i`-th context request of a call.
fn context_request(tool: McpTool, i: usize, value: &Value) -> Result<ContextRequest, ArgError> {
    if !value.is_object() {
        return Err(ArgError::new(
            tool.name(),
            format!(
                "`requests[{i}]` must be an object such as {{\"type\":\"read_file\",\"path\":\"src/lib.rs\"}}, not {value}"
            ),
        ));
    }
    serde_json::from_value(value.clone())
        .map_err(|e| ArgError::new(tool.name(), format!("`requests[{i}]`: {e}")))
}

/// A refused read: the code of the refusal and why.
fn refusal(path: &str, why: &Refusal) -> Reply {
    let code = match why {
        Refusal::InvalidPath(_) | Refusal::NotAFile => ErrorCode::InvalidPath,
        Refusal::Protected(_) => ErrorCode::ProtectedPath,
        Refusal::EscapesRoot => ErrorCode::PathEscapesRoot,
        Refusal::TooLarge { .. } => ErrorCode::ContentTooLarge,
        Refusal::NotUtf8 { .. } => ErrorCode::NonUtf8File,
        Refusal::Missing | Refusal::Io(_) => ErrorCode::Io,
        _ => ErrorCode::Io,
    };
    Reply::rejected(code, why.to_string()).with("path", path)
}
