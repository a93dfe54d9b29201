//! Parsers of option values that take more than a number: durations. Each returns one line that
//! names the problem and the fix; none panics, whatever the input (fuzzed in the tests).

use std::time::Duration;

/// The longest interval accepted (a day): far beyond any run's sampling needs, far below where
/// arithmetic on durations could overflow.
const LONGEST: Duration = Duration::from_secs(86_400);

/// A duration with a unit (`250ms`, `1.5s`, `500us`, `2m`), or `0`.
fn duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    if number.is_empty() {
        return Err(format!("{s:?} does not start with a number"));
    }
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{number:?} is not a number"))?;
    let scale = match unit.trim() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "" => return Err(format!("{s:?} has no unit; write e.g. {s}ms or {s}s")),
        other => return Err(format!("unknown unit {other:?}; use ns, us, ms, s, m or h")),
    };
    Duration::try_from_secs_f64(value * scale)
        .ok()
        .filter(|d| *d <= LONGEST)
        .ok_or_else(|| format!("{s:?} is longer than a day"))
}

/// `-I`: milliseconds as a bare number (as `perf stat -I`), or a duration with a unit; at least
/// one millisecond.
/// A percentage above 0 and at most 100 (`2`, `0.5`, `5%`).
pub fn percent(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches('%');
    let v: f64 = t
        .parse()
        .map_err(|_| format!("{s:?} is not a number; give a percentage such as 2 or 0.5"))?;
    if v.is_finite() && v > 0.0 && v <= 100.0 {
        Ok(v)
    } else {
        Err(format!("{s:?} is not a percentage above 0 and at most 100"))
    }
}

pub fn interval_ms(s: &str) -> Result<u64, String> {
    let d = match s.trim().parse::<u64>() {
        Ok(ms) => Duration::from_millis(ms.min(LONGEST.as_millis() as u64 + 1)),
        Err(_) => duration(s)?,
    };
    if d > LONGEST {
        return Err(format!("{s:?} is longer than a day"));
    }
    if d < Duration::from_millis(1) {
        return Err(format!(
            "{s:?} is below the shortest interval, 1 ms; give e.g. -I 100 (milliseconds)"
        ));
    }
    Ok(d.as_millis() as u64)
}

/// `--ambient=INTERVAL`: a duration with a unit (a bare number is ambiguous: is `10` ten
/// seconds or ten milliseconds?), at least 1 ms; `0` = at the start and the end only.
pub fn ambient_interval(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if !d.is_zero() && d < Duration::from_millis(1) {
        return Err(format!(
            "{s:?} is below the shortest sampling interval, 1 ms (or 0 for start and end only)"
        ));
    }
    Ok(d)
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
        assert!(ambient_interval("10").unwrap_err().contains("has no unit"));
        assert!(ambient_interval("500us").unwrap_err().contains("1 ms"));
        assert!(ambient_interval("99999999999999999999")
            .unwrap_err()
            .contains("no unit"));
        assert!(ambient_interval("99999999999999999999s")
            .unwrap_err()
            .contains("longer than a day"));
        assert_eq!(interval_ms("100"), Ok(100));
        assert_eq!(interval_ms("2s"), Ok(2000));
        assert!(interval_ms("0").unwrap_err().contains("1 ms"));
        assert!(interval_ms("99999999999999999999").is_err());
    }

    proptest! {
        #[test]
        fn no_input_panics(s in "\\\\PC*") {
            let _ = ambient_interval(&s);
            let _ = interval_ms(&s);
        }

        #[test]
        fn numbers_with_units_never_panic(v in any::<f64>(), unit in "(ns|us|ms|s|m|h|x|)") {
            let _ = ambient_interval(&format!("{v}{unit}"));
            let _ = interval_ms(&format!("{v}{unit}"));
        }
    }
}

/// A confidence level: a fraction (0.9) or a percentage (90%, 90), strictly between 0 and 1.
pub fn confidence_level(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (number, percent) = match t.strip_suffix('%') {
        Some(n) => (n, true),
        None => (t, false),
    };
    let x: f64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a level; write 0.9 or 90%"))?;
    let level = if percent || x >= 1.0 { x / 100.0 } else { x };
    if arum_stats::valid_level(level) {
        Ok(level)
    } else {
        Err(format!("{s:?} is not between 0 and 100%; write 0.9 or 90%"))
    }
}

#[cfg(test)]
mod confidence_tests {
    use super::confidence_level;

    #[test]
    fn fractions_and_percentages() {
        assert_eq!(confidence_level("0.9"), Ok(0.9));
        assert_eq!(confidence_level("95%"), Ok(0.95));
        assert_eq!(confidence_level("99"), Ok(0.99));
        assert!(confidence_level("100%").is_err());
        assert!(confidence_level("0").is_err());
        assert!(confidence_level("x").is_err());
    }
}
