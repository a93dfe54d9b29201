//! Parsers of option values, on `arum_units`' rules. Each returns one line that names the
//! problem and the fix; none panics, whatever the input (fuzzed in the tests).

use std::time::Duration;

use arum_units::{duration, percent, size};

/// The longest interval accepted (a day): far beyond any run's sampling needs, far below where
/// arithmetic on durations could overflow.
const LONGEST: Duration = Duration::from_secs(86_400);

fn at_most_a_day(s: &str, d: Duration) -> Result<Duration, String> {
    if d > LONGEST {
        return Err(format!("{s:?} is longer than a day"));
    }
    Ok(d)
}

/// `-I`: milliseconds as a bare number (the option is in milliseconds, as `perf stat -I`), or
/// a duration with a unit; at least one millisecond.
pub fn interval_ms(s: &str) -> Result<u64, String> {
    let d = match s.trim().parse::<u64>() {
        Ok(ms) => Duration::from_millis(ms.min(LONGEST.as_millis() as u64 + 1)),
        Err(_) => duration::parse(s)?,
    };
    let d = at_most_a_day(s, d)?;
    if d < Duration::from_millis(1) {
        return Err(format!(
            "{s:?} is below the shortest interval, 1 ms; give e.g. -I 100 (milliseconds)"
        ));
    }
    Ok(d.as_millis() as u64)
}

/// `--ambient=INTERVAL`: a duration with a unit, at least 1 ms; `0` = at the start and the end
/// only.
pub fn ambient_interval(s: &str) -> Result<Duration, String> {
    let d = at_most_a_day(s, duration::parse(s)?)?;
    if !d.is_zero() && d < Duration::from_millis(1) {
        return Err(format!(
            "{s:?} is below the shortest sampling interval, 1 ms (or 0 for start and end only)"
        ));
    }
    Ok(d)
}

/// `--probe-budget`: a percentage above 0 and at most 100 (`2`, `0.5`, `5%`).
pub fn percent(s: &str) -> Result<f64, String> {
    Ok(percent::parse(s)?)
}

/// A share given as a percentage (`2`, `0.5%`), as a fraction (0.02).
pub fn fraction(s: &str) -> Result<f64, String> {
    Ok(percent::parse(s)? / 100.0)
}

/// A confidence level: a fraction (0.9) or a percentage (90%), strictly between 0 and 1.
pub fn confidence_level(s: &str) -> Result<f64, String> {
    Ok(percent::parse_level(s)?)
}

/// A duration with its unit (`250ms`, `1.5s`; `0` alone needs none).
pub fn duration(s: &str) -> Result<Duration, String> {
    Ok(duration::parse(s)?)
}

/// A size in bytes with its unit (`64M`, `4GiB`, `4096B`; `0` alone needs none).
pub fn size(s: &str) -> Result<u64, String> {
    Ok(size::parse(s)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn units_and_bare_numbers() {
        assert_eq!(ambient_interval("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(ambient_interval("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(ambient_interval("0"), Ok(Duration::ZERO));
        assert!(ambient_interval("10").unwrap_err().contains("no unit"));
        assert!(ambient_interval("500us").unwrap_err().contains("1 ms"));
        assert!(ambient_interval("99999999999999999999s").is_err());
        assert!(ambient_interval("2d").is_err());
        assert!(ambient_interval("25h")
            .unwrap_err()
            .contains("longer than a day"));
        assert_eq!(interval_ms("100"), Ok(100));
        assert_eq!(interval_ms("2s"), Ok(2000));
        assert!(interval_ms("0").unwrap_err().contains("1 ms"));
        assert!(interval_ms("99999999999999999999").is_err());
        assert_eq!(duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(duration("10").unwrap_err().contains("no unit"));
        assert_eq!(size("64M"), Ok(64 << 20));
        assert_eq!(size("0"), Ok(0));
        assert!(size("4096").unwrap_err().contains("no unit"));
    }

    #[test]
    fn percentages_and_levels() {
        assert_eq!(percent("2"), Ok(2.0));
        assert_eq!(percent("5%"), Ok(5.0));
        assert!(percent("0").is_err() && percent("101").is_err());
        assert_eq!(confidence_level("0.9"), Ok(0.9));
        assert_eq!(confidence_level("95%"), Ok(0.95));
        assert_eq!(confidence_level("99"), Ok(0.99));
        assert!(confidence_level("1.5").unwrap_err().contains("1.5%"));
        assert!(confidence_level("100%").is_err());
        assert!(confidence_level("0").is_err());
        assert!(confidence_level("x").is_err());
    }

    proptest! {
        #[test]
        fn no_input_panics(s in "\\PC*") {
            let _ = ambient_interval(&s);
            let _ = interval_ms(&s);
            let _ = percent(&s);
            let _ = confidence_level(&s);
            let _ = duration(&s);
            let _ = size(&s);
        }

        #[test]
        fn numbers_with_units_never_panic(v in any::<f64>(), unit in "(ns|us|ms|s|m|h|x|%|B|K|GiB|)") {
            let _ = ambient_interval(&format!("{v}{unit}"));
            let _ = interval_ms(&format!("{v}{unit}"));
            let _ = percent(&format!("{v}{unit}"));
            let _ = confidence_level(&format!("{v}{unit}"));
            let _ = duration(&format!("{v}{unit}"));
            let _ = size(&format!("{v}{unit}"));
        }
    }
}
