//! Checking a split command line against the allow-list and its entry's rules.

use camino::Utf8Path;
use serde::Serialize;

use super::allow::{AllowList, BUILTIN};
use super::rules::rules;
use super::value::{Value, check_value};
use crate::error::AutomationError;

/// A command the allow-list and its argument rules accept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckedCommand {
    /// The allow-list entry (`git commit`).
    pub entry: &'static str,
    /// The program run.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl CheckedCommand {
    /// The command as shown to the user.
    pub fn display(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .map(|w| {
                if w.is_empty() || w.contains(char::is_whitespace) {
                    format!("{w:?}")
                } else {
                    w.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Check `words` (a split command line) against `allow` and the entry's argument rules:
/// only known options, each value of its kind, paths inside the project, `npm run` only of
/// a script `package.json` defines, packages only by registry name (no URL, path or git
/// spec). The error names the rule that refused it.
pub fn check(
    words: &[String],
    allow: &AllowList,
    root: &Utf8Path,
) -> Result<CheckedCommand, AutomationError> {
    let shown = words.join(" ");
    let refused = |reason: String| AutomationError::Refused {
        command: shown.clone(),
        reason,
    };
    let entry = BUILTIN
        .iter()
        .copied()
        .filter(|e| {
            let parts: Vec<&str> = e.split(' ').collect();
            words.len() >= parts.len() && parts.iter().zip(words).all(|(p, w)| p == w)
        })
        .max_by_key(|e| e.len())
        .ok_or_else(|| {
            refused(format!(
                "not on the allow-list (a command must start with one of: {})",
                allow.names().join(", ")
            ))
        })?;
    if !allow.allows(entry) {
        return Err(refused(format!(
            "`{entry}` is not on the configured allow-list"
        )));
    }
    let parts: Vec<&str> = entry.split(' ').collect();
    let rules = rules(entry);
    let mut args: Vec<String> = parts[1..].iter().map(|p| (*p).to_owned()).collect();
    let mut rest = words[parts.len()..].iter();
    let mut positional = 0;
    let mut after_dashes = false;
    while let Some(word) = rest.next() {
        if after_dashes {
            let kind = rules
                .after_dashes
                .ok_or_else(|| refused(format!("`{entry}` takes nothing after `--`")))?;
            check_value(kind, word, root).map_err(refused)?;
        } else if word == "--" {
            if rules.after_dashes.is_none() {
                return Err(refused(format!("`{entry}` takes nothing after `--`")));
            }
            after_dashes = true;
        } else if word.starts_with('-') {
            let (name, inline) = match word.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v)),
                _ => (word.as_str(), None),
            };
            let &(_, kind) = rules
                .flags
                .iter()
                .find(|(f, _)| *f == name)
                .ok_or_else(|| refused(format!("option {name:?} is not allowed for `{entry}`")))?;
            match (kind, inline) {
                (Value::None, None) => {}
                (Value::None, Some(_)) => {
                    return Err(refused(format!("option {name:?} takes no value")));
                }
                (kind, Some(v)) => check_value(kind, v, root).map_err(refused)?,
                (kind, None) => {
                    let v = rest
                        .next()
                        .ok_or_else(|| refused(format!("option {name:?} needs a value")))?;
                    check_value(kind, v, root).map_err(refused)?;
                    args.push(word.clone());
                    args.push(v.clone());
                    continue;
                }
            }
        } else {
            let kind = rules
                .positional
                .ok_or_else(|| refused(format!("`{entry}` takes no argument {word:?}")))?;
            positional += 1;
            if positional > rules.max_positional {
                return Err(refused(format!("too many arguments for `{entry}`")));
            }
            check_value(kind, word, root).map_err(refused)?;
        }
        args.push(word.clone());
    }
    Ok(CheckedCommand {
        entry,
        program: parts[0].to_owned(),
        args,
    })
}
