//! SARIF 2.1.0 logs (OASIS; `snyk code test --sarif` writes them): each run's results, with
//! their rule's short description as title, their level as severity, and their first physical
//! location as a project-relative path and line.

use camino::Utf8Path;
use papayu_protocol::agent_sync::{Finding, Severity};
use serde_json::Value;

fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// A result's artifact URI as a project path: relative URIs are resolved against `root` and
/// `file://` URIs read (escapes such as `%20` decoded), then made relative to `root`; a
/// location outside the project is kept as given.
fn project_path(uri: &str, root: &Utf8Path) -> String {
    let resolved = url::Url::from_directory_path(root.as_std_path())
        .ok()
        .and_then(|base| base.join(uri).ok())
        .filter(|u| u.scheme() == "file")
        .and_then(|u| u.to_file_path().ok())
        .and_then(|p| camino::Utf8PathBuf::from_path_buf(p).ok());
    match resolved {
        Some(path) => match path.strip_prefix(root) {
            Ok(relative) => relative.as_str().replace('\\', "/"),
            Err(_) => path.into_string(),
        },
        None => uri.to_owned(),
    }
}

/// The findings of a SARIF 2.1 log (`text`), paths made relative to `root`. The error says
/// what is missing when `text` is not one.
pub fn parse_sarif(text: &str, root: &Utf8Path) -> Result<Vec<Finding>, String> {
    let log: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    match log.get("version").and_then(Value::as_str) {
        Some(v) if v.starts_with("2.1") => {}
        Some(v) => return Err(format!("version {v:?}, expected 2.1.0")),
        None => return Err("no `version`".to_owned()),
    }
    let runs = log
        .get("runs")
        .and_then(Value::as_array)
        .ok_or("no `runs` array")?;
    let mut out = Vec::new();
    for run in runs {
        let rules = run
            .pointer("/tool/driver/rules")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let results = run
            .get("results")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for result in results {
            let rule_id = str_at(result, "/ruleId").map(str::to_owned);
            let rule = result
                .get("ruleIndex")
                .and_then(Value::as_u64)
                .and_then(|i| rules.get(usize::try_from(i).ok()?))
                .or_else(|| {
                    let id = rule_id.as_deref()?;
                    rules.iter().find(|r| str_at(r, "/id") == Some(id))
                });
            let message = str_at(result, "/message/text").unwrap_or_default();
            let title = rule
                .and_then(|r| str_at(r, "/shortDescription/text").or_else(|| str_at(r, "/name")))
                .or(rule_id.as_deref())
                .unwrap_or(message)
                .to_owned();
            let level = str_at(result, "/level")
                .or_else(|| rule.and_then(|r| str_at(r, "/defaultConfiguration/level")))
                .unwrap_or("warning");
            let location = result.pointer("/locations/0/physicalLocation");
            out.push(Finding {
                title,
                details: message.to_owned(),
                path: location
                    .and_then(|l| str_at(l, "/artifactLocation/uri"))
                    .map(|uri| project_path(uri, root)),
                line: location.and_then(|l| l.pointer("/region/startLine")?.as_u64()),
                severity: Severity::parse(level).unwrap_or(Severity::Medium),
                rule_id,
                source: "sarif".to_owned(),
            });
        }
    }
    Ok(out)
}
