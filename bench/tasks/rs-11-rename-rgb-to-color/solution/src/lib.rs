//! Colours, blending and palettes for terminal themes.

mod blend;
mod color;
mod palette;

pub use blend::{mix, shade};
pub use color::{Color, ParseColorError};
pub use palette::Palette;
