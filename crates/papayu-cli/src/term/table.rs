//! Tables for people (comfy-table): as wide as the terminal, cells wrapped to fit; 100
//! columns when stdout is not a terminal, so piped output does not depend on a window.

use comfy_table::{ContentArrangement, Table, presets};

/// The width tables fit into when stdout is not a terminal.
const PIPE_WIDTH: u16 = 100;

/// The width of stdout's terminal, if it is one.
pub fn stdout_width() -> Option<u16> {
    terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| w.0)
}

/// A table with `header`, fitted to stdout.
pub fn new<S: AsRef<str>>(header: &[S]) -> Table {
    let mut table = Table::new();
    table
        .load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(stdout_width().unwrap_or(PIPE_WIDTH))
        .set_header(header.iter().map(AsRef::as_ref));
    table
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_cell_wraps_within_the_width() {
        let mut t = super::new(&["key", "value"]);
        t.set_width(30);
        t.add_row(vec!["a", &"word ".repeat(20)]);
        let text = t.to_string();
        assert!(text.lines().all(|l| l.chars().count() <= 30), "{text}");
        assert_eq!(text.matches("word").count(), 20, "{text}");
    }
}
