//! A lexer for JSON with comments (JSONC): `//` and `/* */` comments, positions on every token.

mod lexer;
mod token;

pub use lexer::{tokenize, LexError, Lexer};
pub use token::{Pos, Token, TokenKind};
