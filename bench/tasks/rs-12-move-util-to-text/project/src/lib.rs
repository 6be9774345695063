//! A static blog's content model: posts and an Atom-like feed summary.

pub mod feed;
pub mod post;
pub mod util;
