//! Temperature conversions between Celsius, Fahrenheit and Kelvin.

/// Absolute zero in degrees Celsius.
pub const ABSOLUTE_ZERO_C: f64 = -273.15;

pub fn celsius_to_fahrenheit(c: f64) -> f64 {
    c * 9.0 / 5.0 + 32.0
}

pub fn fahrenheit_to_celsius(f: f64) -> f64 {
    (f - 32.0) * 9.0 / 5.0
}

pub fn celsius_to_kelvin(c: f64) -> Option<f64> {
    (c >= ABSOLUTE_ZERO_C).then(|| c - ABSOLUTE_ZERO_C)
}

pub fn kelvin_to_celsius(k: f64) -> Option<f64> {
    (k >= 0.0).then(|| k + ABSOLUTE_ZERO_C)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn celsius_to_fahrenheit_known_points() {
        assert!(close(celsius_to_fahrenheit(100.0), 212.0));
        assert!(close(celsius_to_fahrenheit(-40.0), -40.0));
    }

    #[test]
    fn fahrenheit_to_celsius_known_points() {
        assert!(close(fahrenheit_to_celsius(212.0), 100.0));
        assert!(close(fahrenheit_to_celsius(32.0), 0.0));
        assert!(close(fahrenheit_to_celsius(-40.0), -40.0));
    }

    #[test]
    fn round_trip() {
        for c in [-273.15, -10.5, 0.0, 36.6, 1000.0] {
            assert!(close(fahrenheit_to_celsius(celsius_to_fahrenheit(c)), c));
        }
    }

    #[test]
    fn kelvin_rejects_below_absolute_zero() {
        assert_eq!(celsius_to_kelvin(-300.0), None);
        assert!(close(celsius_to_kelvin(0.0).unwrap(), 273.15));
        assert_eq!(kelvin_to_celsius(-1.0), None);
    }
}
