use crate::color::Rgb;

/// Linear mix: `t = 0.0` gives `a`, `t = 1.0` gives `b`.
pub fn mix(a: Rgb, b: Rgb, t: f64) -> Rgb {
    let t = t.clamp(0.0, 1.0);
    let lerp = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
    Rgb::new(lerp(a.r, b.r), lerp(a.g, b.g), lerp(a.b, b.b))
}

/// Darken (negative `amount`) or lighten (positive) towards black or white.
pub fn shade(color: Rgb, amount: f64) -> Rgb {
    if amount < 0.0 {
        mix(color, Rgb::BLACK, -amount)
    } else {
        mix(color, Rgb::WHITE, amount)
    }
}
