//! Colours, blending and palettes for terminal themes.

mod blend;
mod color;
mod palette;

pub use blend::{mix, shade};
pub use color::{ParseColorError, Rgb};
pub use palette::Palette;
