//! The styles papayu's human output uses, and the coloured diff.

use anstyle::{AnsiColor, Style};

/// A line a diff adds.
pub const ADDED: Style = AnsiColor::Green.on_default();
/// A line a diff removes.
pub const REMOVED: Style = AnsiColor::Red.on_default();
/// A hunk header (`@@ … @@`).
pub const HUNK: Style = AnsiColor::Cyan.on_default();
/// A file header, a heading.
pub const BOLD: Style = Style::new().bold();
/// Something that went well (a passing check).
pub const GOOD: Style = AnsiColor::Green.on_default().bold();
/// Something that went wrong (a failing check, a blocked action).
pub const BAD: Style = AnsiColor::Red.on_default().bold();
/// Secondary text (timings).
pub const DIM: Style = Style::new().dimmed();

/// `text` in `style`, for a writer that goes through anstream (which strips the codes where
/// colour is off).
pub fn paint(style: Style, text: &str) -> String {
    format!("{style}{text}{style:#}")
}

/// `text` in `style` when `colour`, else as it is: for writers that bypass anstream.
pub fn paint_if(colour: bool, style: Style, text: &str) -> String {
    if colour {
        paint(style, text)
    } else {
        text.to_owned()
    }
}

/// A unified diff with its headers, hunks, additions and removals styled.
pub fn diff(diff: &str) -> String {
    let mut out = String::with_capacity(diff.len() + diff.len() / 4);
    for line in diff.split_inclusive('\n') {
        let style = if line.starts_with("+++") || line.starts_with("---") {
            BOLD
        } else if line.starts_with('+') {
            ADDED
        } else if line.starts_with('-') {
            REMOVED
        } else if line.starts_with("@@") {
            HUNK
        } else {
            out.push_str(line);
            continue;
        };
        let text = line.trim_end_matches('\n');
        out.push_str(&paint(style, text));
        out.push_str(&line[text.len()..]);
    }
    out
}

/// A duration for people: `840 ms`, `1.2 s`, `3 min 5 s`.
pub fn duration_ms(ms: u64) -> String {
    match ms {
        0..1000 => format!("{ms} ms"),
        1000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_keeps_its_text_and_line_ends() {
        let d = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same";
        let styled = diff(d);
        assert_eq!(anstream::adapter::strip_str(&styled).to_string(), d);
        assert!(styled.contains(&format!("{}+new{}\n", ADDED.render(), ADDED.render_reset())));
        assert!(styled.ends_with(" same"));
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration_ms(840), "840 ms");
        assert_eq!(duration_ms(1234), "1.2 s");
        assert_eq!(duration_ms(185_000), "3 min 5 s");
    }
}
