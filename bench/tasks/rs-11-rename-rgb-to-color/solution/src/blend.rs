use crate::color::Color;

/// Linear mix: `t = 0.0` gives `a`, `t = 1.0` gives `b`.
pub fn mix(a: Color, b: Color, t: f64) -> Color {
    let t = t.clamp(0.0, 1.0);
    let lerp = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
    Color::new(lerp(a.r, b.r), lerp(a.g, b.g), lerp(a.b, b.b))
}

/// Darken (negative `amount`) or lighten (positive) towards black or white.
pub fn shade(color: Color, amount: f64) -> Color {
    if amount < 0.0 {
        mix(color, Color::BLACK, -amount)
    } else {
        mix(color, Color::WHITE, amount)
    }
}
