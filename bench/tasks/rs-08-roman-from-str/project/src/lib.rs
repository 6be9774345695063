//! Roman numerals for 1..=3999.

use std::fmt;

const TABLE: [(u16, &str); 13] = [
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Roman(u16);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RomanError {
    OutOfRange(u32),
    Invalid(String),
}

impl Roman {
    pub fn new(value: u32) -> Result<Roman, RomanError> {
        match u16::try_from(value) {
            Ok(v @ 1..=3999) => Ok(Roman(v)),
            _ => Err(RomanError::OutOfRange(value)),
        }
    }

    pub fn value(self) -> u16 {
        self.0
    }
}

impl fmt::Display for Roman {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        for (value, numeral) in TABLE {
            while rest >= value {
                f.write_str(numeral)?;
                rest -= value;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        assert_eq!(Roman::new(1994).unwrap().to_string(), "MCMXCIV");
        assert_eq!(Roman::new(3888).unwrap().to_string(), "MMMDCCCLXXXVIII");
    }

    #[test]
    fn range() {
        assert_eq!(Roman::new(0), Err(RomanError::OutOfRange(0)));
        assert_eq!(Roman::new(4000), Err(RomanError::OutOfRange(4000)));
    }

    #[test]
    fn parse() {
        assert_eq!("MCMXCIV".parse::<Roman>().unwrap().value(), 1994);
        assert_eq!("xiv".parse::<Roman>().unwrap().value(), 14);
        assert_eq!(" MMXXIV ".parse::<Roman>().unwrap().value(), 2024);
    }

    #[test]
    fn parse_rejects_non_canonical_and_garbage() {
        for bad in ["", "IIII", "VX", "IC", "MMMM", "ABC", "X I"] {
            assert_eq!(
                bad.parse::<Roman>(),
                Err(RomanError::Invalid(bad.to_owned())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn round_trip() {
        for n in 1..=3999 {
            let roman = Roman::new(n).unwrap();
            assert_eq!(roman.to_string().parse::<Roman>(), Ok(roman));
        }
    }
}
