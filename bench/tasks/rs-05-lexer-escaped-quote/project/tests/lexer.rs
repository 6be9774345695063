use jsonc_lexer::{tokenize, LexError, Pos, TokenKind};

fn kinds(text: &str) -> Vec<TokenKind> {
    tokenize(text)
        .unwrap()
        .into_iter()
        .map(|t| t.kind)
        .collect()
}

fn s(text: &str) -> TokenKind {
    TokenKind::Str(text.to_owned())
}

#[test]
fn punctuation_words_and_numbers() {
    assert_eq!(
        kinds(r#"{"a": [1, -2.5e3, true, null]}"#),
        vec![
            TokenKind::LBrace,
            s("a"),
            TokenKind::Colon,
            TokenKind::LBracket,
            TokenKind::Number(1.0),
            TokenKind::Comma,
            TokenKind::Number(-2500.0),
            TokenKind::Comma,
            TokenKind::True,
            TokenKind::Comma,
            TokenKind::Null,
            TokenKind::RBracket,
            TokenKind::RBrace,
        ]
    );
}

#[test]
fn escapes_in_strings() {
    assert_eq!(kinds(r#""tab\tnew\nline""#), vec![s("tab\tnew\nline")]);
    assert_eq!(kinds(r#""back\\slash""#), vec![s("back\\slash")]);
    assert_eq!(kinds(r#""\u00e9t\u00e9""#), vec![s("été")]);
}

#[test]
fn escaped_quotes_stay_inside_the_string() {
    assert_eq!(kinds(r#""say \"hi\"""#), vec![s("say \"hi\"")]);
    assert_eq!(kinds(r#"["\"", "x"]"#)[1], s("\""));
    assert_eq!(
        kinds(r#""ends with backslash \\""#),
        vec![s("ends with backslash \\")]
    );
}

#[test]
fn comments_are_skipped() {
    let text = "// header\n{ /* inline */ \"k\": false }\n";
    assert_eq!(
        kinds(text),
        vec![
            TokenKind::LBrace,
            s("k"),
            TokenKind::Colon,
            TokenKind::False,
            TokenKind::RBrace
        ]
    );
}

#[test]
fn positions_are_line_and_column() {
    let tokens = tokenize("{\n  \"k\": 1\n}").unwrap();
    assert_eq!(tokens[1].pos, Pos { line: 2, col: 3 });
    assert_eq!(tokens[4].pos, Pos { line: 3, col: 1 });
}

#[test]
fn errors() {
    assert_eq!(
        tokenize("\"open"),
        Err(LexError::UnterminatedString {
            pos: Pos { line: 1, col: 1 }
        })
    );
    assert!(matches!(
        tokenize(r#""\q""#),
        Err(LexError::BadEscape { ch: 'q', .. })
    ));
    assert!(matches!(tokenize("01"), Err(LexError::BadNumber { .. })));
    assert!(matches!(
        tokenize("nope"),
        Err(LexError::UnknownWord { .. })
    ));
    assert!(matches!(
        tokenize("/* never closed"),
        Err(LexError::UnterminatedComment { .. })
    ));
    assert_eq!(
        tokenize("[1, @]").unwrap_err().to_string(),
        "1:5: unexpected character '@'"
    );
}
