use crate::blend::mix;
use crate::color::Rgb;

/// A named list of colours.
#[derive(Debug, Clone, PartialEq)]
pub struct Palette {
    pub name: String,
    pub colors: Vec<Rgb>,
}

impl Palette {
    /// `steps` colours evenly spaced from `from` to `to` (both included).
    pub fn gradient(name: &str, from: Rgb, to: Rgb, steps: usize) -> Palette {
        let colors = match steps {
            0 => Vec::new(),
            1 => vec![from],
            n => (0..n)
                .map(|i| mix(from, to, i as f64 / (n - 1) as f64))
                .collect(),
        };
        Palette {
            name: name.to_owned(),
            colors,
        }
    }

    /// Black or white, whichever reads better on `background`.
    pub fn text_on(background: Rgb) -> Rgb {
        if background.luminance() > 0.5 {
            Rgb::BLACK
        } else {
            Rgb::WHITE
        }
    }

    pub fn to_css(&self) -> String {
        self.colors
            .iter()
            .enumerate()
            .map(|(i, c)| format!("--{}-{}: {c};", self.name, i))
            .collect::<Vec<_>>()
            .join("\n")
    }
}
