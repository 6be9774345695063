use std::fmt;
use std::iter::Peekable;
use std::str::Chars;

use crate::token::{Pos, Token, TokenKind};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexError {
    UnexpectedChar { ch: char, pos: Pos },
    UnterminatedString { pos: Pos },
    UnterminatedComment { pos: Pos },
    BadEscape { ch: char, pos: Pos },
    BadUnicodeEscape { pos: Pos },
    ControlCharInString { pos: Pos },
    BadNumber { text: String, pos: Pos },
    UnknownWord { word: String, pos: Pos },
}

impl fmt::Display for LexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LexError::UnexpectedChar { ch, pos } => {
                write!(f, "{}:{}: unexpected character {ch:?}", pos.line, pos.col)
            }
            LexError::UnterminatedString { pos } => {
                write!(f, "{}:{}: unterminated string", pos.line, pos.col)
            }
            LexError::UnterminatedComment { pos } => {
                write!(f, "{}:{}: unterminated comment", pos.line, pos.col)
            }
            LexError::BadEscape { ch, pos } => {
                write!(f, "{}:{}: bad escape \\{ch}", pos.line, pos.col)
            }
            LexError::BadUnicodeEscape { pos } => {
                write!(f, "{}:{}: bad \\u escape", pos.line, pos.col)
            }
            LexError::ControlCharInString { pos } => {
                write!(f, "{}:{}: control character in string", pos.line, pos.col)
            }
            LexError::BadNumber { text, pos } => {
                write!(f, "{}:{}: bad number {text:?}", pos.line, pos.col)
            }
            LexError::UnknownWord { word, pos } => {
                write!(f, "{}:{}: unknown word {word:?}", pos.line, pos.col)
            }
        }
    }
}

impl std::error::Error for LexError {}

/// Tokenizes JSONC text one token at a time.
pub struct Lexer<'a> {
    chars: Peekable<Chars<'a>>,
    line: u32,
    col: u32,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Self {
        Lexer {
            chars: text.chars().peekable(),
            line: 1,
            col: 1,
        }
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn skip_trivia(&mut self) -> Result<(), LexError> {
        loop {
            match self.chars.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('/') => {
                    let start = self.pos();
                    self.bump();
                    match self.bump() {
                        Some('/') => {
                            while let Some(c) = self.bump() {
                                if c == '\n' {
                                    break;
                                }
                            }
                        }
                        Some('*') => self.block_comment(start)?,
                        _ => {
                            return Err(LexError::UnexpectedChar {
                                ch: '/',
                                pos: start,
                            })
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn block_comment(&mut self, start: Pos) -> Result<(), LexError> {
        let mut star = false;
        while let Some(c) = self.bump() {
            if star && c == '/' {
                return Ok(());
            }
            star = c == '*';
        }
        Err(LexError::UnterminatedComment { pos: start })
    }

    /// The next token, `Ok(None)` at the end of the input.
    pub fn next_token(&mut self) -> Result<Option<Token>, LexError> {
        self.skip_trivia()?;
        let pos = self.pos();
        let Some(&c) = self.chars.peek() else {
            return Ok(None);
        };
        let kind = match c {
            '{' | '}' | '[' | ']' | ':' | ',' => {
                self.bump();
                match c {
                    '{' => TokenKind::LBrace,
                    '}' => TokenKind::RBrace,
                    '[' => TokenKind::LBracket,
                    ']' => TokenKind::RBracket,
                    ':' => TokenKind::Colon,
                    _ => TokenKind::Comma,
                }
            }
            '"' => {
                self.bump();
                self.string(pos)?
            }
            '-' | '0'..='9' => self.number(pos)?,
            c if c.is_ascii_alphabetic() => self.word(pos)?,
            ch => return Err(LexError::UnexpectedChar { ch, pos }),
        };
        Ok(Some(Token { kind, pos }))
    }

    fn string(&mut self, start: Pos) -> Result<TokenKind, LexError> {
        let mut out = String::new();
        let mut escaped = false;
        while let Some(c) = self.bump() {
            if c == '"' && !escaped {
                return Ok(TokenKind::Str(out));
            }
            if escaped {
                out.push(self.unescape(c)?);
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c.is_control() {
                return Err(LexError::ControlCharInString { pos: self.pos() });
            } else {
                out.push(c);
            }
        }
        Err(LexError::UnterminatedString { pos: start })
    }

    fn unescape(&mut self, c: char) -> Result<char, LexError> {
        Ok(match c {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let pos = self.pos();
                let hex: String = (0..4).filter_map(|_| self.bump()).collect();
                u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                    .and_then(char::from_u32)
                    .ok_or(LexError::BadUnicodeEscape { pos })?
            }
            ch => {
                return Err(LexError::BadEscape {
                    ch,
                    pos: self.pos(),
                })
            }
        })
    }

    fn number(&mut self, pos: Pos) -> Result<TokenKind, LexError> {
        let mut text = String::new();
        while let Some(&c) = self.chars.peek() {
            if c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E') {
                text.push(c);
                self.bump();
            } else {
                break;
            }
        }
        let leading_zero = text.trim_start_matches('-').starts_with('0')
            && text
                .trim_start_matches('-')
                .chars()
                .nth(1)
                .is_some_and(|c| c.is_ascii_digit());
        match text.parse::<f64>() {
            Ok(n) if !leading_zero && !text.ends_with('.') && !text.starts_with('+') => {
                Ok(TokenKind::Number(n))
            }
            _ => Err(LexError::BadNumber { text, pos }),
        }
    }

    fn word(&mut self, pos: Pos) -> Result<TokenKind, LexError> {
        let mut word = String::new();
        while let Some(&c) = self.chars.peek() {
            if !c.is_ascii_alphanumeric() {
                break;
            }
            word.push(c);
            self.bump();
        }
        match word.as_str() {
            "true" => Ok(TokenKind::True),
            "false" => Ok(TokenKind::False),
            "null" => Ok(TokenKind::Null),
            _ => Err(LexError::UnknownWord { word, pos }),
        }
    }
}

/// Every token of `text`.
pub fn tokenize(text: &str) -> Result<Vec<Token>, LexError> {
    let mut lexer = Lexer::new(text);
    let mut tokens = Vec::new();
    while let Some(token) = lexer.next_token()? {
        tokens.push(token);
    }
    Ok(tokens)
}
