use semver_lite::{ParseError, Version};

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

#[test]
fn parses_and_displays() {
    assert_eq!(v("v1.2.3"), Version::new(1, 2, 3));
    assert_eq!(v("1.0.0-rc.1").to_string(), "1.0.0-rc.1");
    assert_eq!(
        "1.2".parse::<Version>(),
        Err(ParseError::WrongShape("1.2".into()))
    );
    assert_eq!(
        "1.x.0".parse::<Version>(),
        Err(ParseError::BadNumber("x".into()))
    );
    assert_eq!(
        "1.0.0-a..b".parse::<Version>(),
        Err(ParseError::EmptyPreRelease)
    );
}

#[test]
fn numeric_fields_order() {
    assert!(v("1.10.0") > v("1.9.0"));
    assert!(v("2.0.0") > v("1.99.99"));
}

#[test]
fn prerelease_is_lower_than_release() {
    assert!(v("1.0.0-alpha") < v("1.0.0"));
    assert!(v("1.0.0-rc.1") < v("1.0.0"));
    assert!(v("1.0.0") < v("1.0.1-alpha"));
}

#[test]
fn semver_spec_example_order() {
    let ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
    ];
    for pair in ordered.windows(2) {
        assert!(v(pair[0]) < v(pair[1]), "{} < {}", pair[0], pair[1]);
    }
    let mut shuffled: Vec<Version> = ordered.iter().rev().map(|s| v(s)).collect();
    shuffled.sort();
    let sorted: Vec<String> = shuffled.iter().map(Version::to_string).collect();
    assert_eq!(sorted, ordered);
}
