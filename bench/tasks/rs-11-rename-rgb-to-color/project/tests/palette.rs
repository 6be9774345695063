use palette::{mix, shade, Color, Palette, ParseColorError};

#[test]
fn the_type_itself_is_renamed() {
    assert_eq!(std::any::type_name::<Color>(), "palette::color::Color");
}

#[test]
fn parse_and_display() {
    assert_eq!("#ff8000".parse::<Color>(), Ok(Color::new(255, 128, 0)));
    assert_eq!("#0af".parse::<Color>().unwrap().to_string(), "#00aaff");
    assert_eq!(
        "ff8000".parse::<Color>(),
        Err(ParseColorError("ff8000".into()))
    );
    assert!("#12345".parse::<Color>().is_err());
}

#[test]
fn blending() {
    assert_eq!(
        mix(Color::BLACK, Color::WHITE, 0.5),
        Color::new(128, 128, 128)
    );
    assert_eq!(shade(Color::new(200, 100, 0), -0.5), Color::new(100, 50, 0));
    assert_eq!(shade(Color::new(0, 0, 0), 1.0), Color::WHITE);
}

#[test]
fn palettes() {
    let p = Palette::gradient("blue", Color::new(0, 0, 0), Color::new(0, 0, 255), 3);
    assert_eq!(
        p.colors,
        vec![
            Color::new(0, 0, 0),
            Color::new(0, 0, 128),
            Color::new(0, 0, 255)
        ]
    );
    assert_eq!(p.to_css().lines().last(), Some("--blue-2: #0000ff;"));
    assert_eq!(Palette::text_on(Color::new(250, 250, 210)), Color::BLACK);
    assert_eq!(Palette::text_on(Color::new(20, 30, 90)), Color::WHITE);
}
