//! Splitting a command line into words, refusing shell syntax nothing would interpret.

use crate::error::AutomationError;

/// Split a command line into words without a shell: `"…"` and `'…'` group words; shell
/// syntax (`;`, `|`, `&`, `<`, `>`, `$`, backquote, backslash, globs, newlines) is refused,
/// since nothing would interpret it.
pub fn split_line(line: &str) -> Result<Vec<String>, AutomationError> {
    let refuse = |reason: &str| AutomationError::Parse {
        line: line.to_owned(),
        reason: reason.to_owned(),
    };
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        if c.is_control() && c != '\t' {
            return Err(refuse("control characters"));
        }
        if matches!(c, '$' | '`' | '\\') {
            return Err(refuse(
                "shell expansion (`$`, backquotes, backslashes) is not run",
            ));
        }
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            None if matches!(
                c,
                ';' | '|' | '&' | '<' | '>' | '*' | '?' | '(' | ')' | '{' | '}' | '~' | '#'
            ) =>
            {
                return Err(refuse(
                    "shell syntax (pipes, redirections, globs, `;`, `&&`) is not run",
                ));
            }
            None => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(refuse("an unclosed quote"));
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(refuse("no command"));
    }
    Ok(words)
}
