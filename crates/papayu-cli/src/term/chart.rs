//! Small charts drawn with block characters, for a table cell.

/// The eighths of a block, from one eighth to a full block.
const EIGHTHS: [char; 8] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];

/// A horizontal bar `width` cells long at most, filled to `fraction` (clamped to 0..=1) in
/// eighths of a cell, padded with spaces to `width`.
pub fn bar(fraction: f64, width: usize) -> String {
    let fraction = if fraction.is_finite() {
        fraction.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let eighths = (fraction * (width * 8) as f64).round() as usize;
    let mut out: String = std::iter::repeat_n('█', eighths / 8).collect();
    if !eighths.is_multiple_of(8) {
        out.push(EIGHTHS[eighths % 8 - 1]);
    }
    let len = out.chars().count();
    out.extend(std::iter::repeat_n(' ', width - len));
    out
}

/// A rate as a bar and a percentage (`████▌      45%`), or `–` without one.
pub fn rate(rate: Option<f64>, width: usize) -> String {
    match rate {
        Some(r) => format!("{} {:>3.0}%", bar(r, width), r * 100.0),
        None => "–".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_fill_in_eighths_and_keep_their_width() {
        assert_eq!(bar(0.0, 4), "    ");
        assert_eq!(bar(1.0, 4), "████");
        assert_eq!(bar(0.5, 4), "██  ");
        assert_eq!(bar(1.0 / 32.0, 4), "▏   ");
        assert_eq!(bar(2.0, 2), "██");
        assert_eq!(bar(f64::NAN, 2), "  ");
        assert_eq!(rate(Some(0.25), 4), "█     25%");
        assert_eq!(rate(Some(1.0), 2), "██ 100%");
        assert_eq!(rate(None, 4), "–");
    }
}
