//! Human-friendly durations such as `1h30m`.

use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    Empty,
    MissingNumber(usize),
    MissingUnit(usize),
    UnknownUnit(String),
    Overflow,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Empty => write!(f, "empty duration"),
            DurationError::MissingNumber(at) => write!(f, "expected a number at byte {at}"),
            DurationError::MissingUnit(at) => write!(f, "expected a unit at byte {at}"),
            DurationError::UnknownUnit(unit) => write!(f, "unknown unit {unit:?}"),
            DurationError::Overflow => write!(f, "duration too long"),
        }
    }
}

/// Parse a sequence of `<number><unit>` parts, e.g. `2h`, `1h30m`, `250ms`. Units: `h`, `m`, `s`,
/// `ms`.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(DurationError::Empty);
    }
    let bytes = text.as_bytes();
    let mut total = Duration::ZERO;
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if start == i {
            return Err(DurationError::MissingNumber(start));
        }
        let number: u64 = text[start..i]
            .parse()
            .map_err(|_| DurationError::Overflow)?;
        let unit_start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        if unit_start == i {
            return Err(DurationError::MissingUnit(i));
        }
        let part = match &text[unit_start..i] {
            "h" => number.checked_mul(3600).map(Duration::from_secs),
            "m" => number.checked_mul(60).map(Duration::from_secs),
            "s" => Some(Duration::from_secs(number)),
            "ms" => Some(Duration::from_millis(number)),
            other => return Err(DurationError::UnknownUnit(other.to_owned())),
        };
        total = part
            .and_then(|p| total.checked_add(p))
            .ok_or(DurationError::Overflow)?;
    }
    Ok(total)
}

/// The inverse of `parse_duration` for whole minutes: `5400s` → `1h30m`.
pub fn format_duration(d: Duration) -> String {
    let minutes = d.as_secs() / 60;
    match (minutes / 60, minutes % 60) {
        (0, m) => format!("{m}m"),
        (h, 0) => format!("{h}h"),
        (h, m) => format!("{h}h{m}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn hours_and_minutes() {
        assert_eq!(parse_duration("2h"), Ok(secs(7200)));
        assert_eq!(parse_duration(" 1h30m "), Ok(secs(5400)));
        assert_eq!(parse_duration("90m"), Ok(secs(5400)));
    }

    #[test]
    fn seconds_and_milliseconds() {
        assert_eq!(parse_duration("45s"), Ok(secs(45)));
        assert_eq!(parse_duration("1m30s"), Ok(secs(90)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(
            parse_duration("1h0m5s20ms"),
            Ok(Duration::from_millis(3_605_020))
        );
    }

    #[test]
    fn errors() {
        assert_eq!(parse_duration(""), Err(DurationError::Empty));
        assert_eq!(parse_duration("h"), Err(DurationError::MissingNumber(0)));
        assert_eq!(parse_duration("10"), Err(DurationError::MissingUnit(2)));
        assert_eq!(
            parse_duration("3d"),
            Err(DurationError::UnknownUnit("d".into()))
        );
        assert_eq!(
            parse_duration("3sec"),
            Err(DurationError::UnknownUnit("sec".into()))
        );
        assert_eq!(
            parse_duration("99999999999999999999h"),
            Err(DurationError::Overflow)
        );
    }

    #[test]
    fn format() {
        assert_eq!(format_duration(secs(5400)), "1h30m");
        assert_eq!(format_duration(secs(7200)), "2h");
        assert_eq!(format_duration(secs(59)), "0m");
    }
}
