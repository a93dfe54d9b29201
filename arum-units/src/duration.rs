//! Durations: read from options (`250ms`, `1.5 s`, `0`), written for people (`1.234 µs`).

use std::time::Duration;

use crate::ladder::{Ladder, Ratio};
use crate::number;
use crate::UnitError;

/// The units a duration may be written in, with their nanoseconds.
const UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    // The micro sign (what `format` writes) and the Greek mu look the same: both are read.
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

const UNIT_NAMES: &str = "ns, us (or µs), ms, s, m (or min) or h";

const EXAMPLE: &str = "10ms or 1.5s";

/// The units a duration is shown in. Seconds are the largest: a report's durations compare at a
/// glance (`90 s`, `3600 s`) without converting minutes and hours.
const STEPS: Ladder = Ladder {
    ratio: Ratio::Thousand,
    units: &["ns", "µs", "ms", "s"],
};

/// Reads a duration: a number then a unit (`ns`, `us`/`µs`, `ms`, `s`, `m`/`min`, `h`), spaces
/// allowed around and between (`1.5s`, ` 250 ms`); zero needs no unit (`0`). Rounded to the
/// nanosecond; at most `u64::MAX` nanoseconds (about 584 years).
pub fn parse(text: &str) -> Result<Duration, UnitError> {
    let t = text.trim();
    let parts = number::split(t).map_err(|p| p.explain(t, EXAMPLE))?;
    if parts.unit.is_empty() {
        if parts.number.is_zero() {
            return Ok(Duration::ZERO);
        }
        let n = parts.number.text();
        return Err(UnitError::new(format!(
            "{t:?} has no unit: write e.g. {n}ms or {n}s"
        )));
    }
    let Some(&(_, ns_per_unit)) = UNITS.iter().find(|(name, _)| *name == parts.unit) else {
        return Err(UnitError::new(format!(
            "unknown unit {:?} in {t:?}: use {UNIT_NAMES}",
            parts.unit
        )));
    };
    parts
        .number
        .scaled(ns_per_unit)
        .and_then(|ns| u64::try_from(ns).ok())
        .map(Duration::from_nanos)
        .ok_or_else(|| {
            UnitError::new(format!(
                "{t:?} is longer than the longest duration: \
                 write at most 18446744073s (about 584 years)"
            ))
        })
}

/// `d` for people, as [`format_ns`] writes it.
pub fn format(d: Duration) -> String {
    format_ns(d.as_nanos() as f64)
}

/// Nanoseconds for people: the largest of ns, µs, ms and s in which the value is at least 1
/// (ns below 1 ns), four significant digits, a space, the unit: `25 ns`, `0.3125 ns`,
/// `1.234 µs`, `12.35 ms`, `1.5 s`, `3600 s`. A negative value keeps its sign; NaN and
/// infinities are `-`.
pub fn format_ns(ns: f64) -> String {
    STEPS.format(ns, " ")
}

/// One unit shared by the durations of a row or column, so they compare digit by digit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    step: usize,
}

/// The scale [`format_ns`] would choose for `reference_ns` (nanoseconds for a reference that
/// is not finite).
pub fn scale_for(reference_ns: f64) -> Scale {
    Scale {
        step: if reference_ns.is_finite() {
            STEPS.pick(reference_ns)
        } else {
            0
        },
    }
}

impl Scale {
    /// `ns` in this scale's unit, four significant digits, a space, the unit (`0.95 µs`,
    /// `1500 ms`); NaN and infinities are `-`.
    pub fn format_ns(&self, ns: f64) -> String {
        if !ns.is_finite() {
            return "-".into();
        }
        format!("{} {}", STEPS.number(self.step, ns), self.unit())
    }

    /// The unit's name: `ns`, `µs`, `ms` or `s`.
    pub fn unit(&self) -> &'static str {
        STEPS.unit(self.step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn reads_numbers_with_units() {
        assert_eq!(parse("250ms"), Ok(ms(250)));
        assert_eq!(parse("1.5s"), Ok(ms(1500)));
        assert_eq!(parse(" 1.5 s "), Ok(ms(1500)));
        assert_eq!(parse(".5s"), Ok(ms(500)));
        assert_eq!(parse("87.0us"), Ok(Duration::from_micros(87)));
        assert_eq!(parse("87µs"), Ok(Duration::from_micros(87)));
        assert_eq!(parse("87μs"), Ok(Duration::from_micros(87)));
        assert_eq!(parse("250ns"), Ok(Duration::from_nanos(250)));
        assert_eq!(parse("0.1s"), Ok(ms(100)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("2 min"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("1.5ns"), Ok(Duration::from_nanos(2)));
        assert_eq!(
            parse("18446744073.709551615s"),
            Ok(Duration::from_nanos(u64::MAX))
        );
    }

    #[test]
    fn zero_needs_no_unit() {
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        assert_eq!(parse(" 0.0 "), Ok(Duration::ZERO));
        assert_eq!(parse("0ms"), Ok(Duration::ZERO));
    }

    #[test]
    fn refusals_name_the_problem_and_the_fix() {
        let err = |t: &str| parse(t).unwrap_err().message().to_owned();
        assert_eq!(err("10"), "\"10\" has no unit: write e.g. 10ms or 10s");
        assert_eq!(
            err(" 1.5 "),
            "\"1.5\" has no unit: write e.g. 1.5ms or 1.5s"
        );
        assert_eq!(
            err("5 parsecs"),
            "unknown unit \"parsecs\" in \"5 parsecs\": use ns, us (or µs), ms, s, m (or min) or h"
        );
        assert!(err("5S").contains("unknown unit \"S\""));
        assert!(err("-5s").contains("is negative"));
        assert!(err("").contains("no value given"));
        assert!(err("inf").contains("does not start with a number"));
        assert!(err("NaN s").contains("does not start with a number"));
        assert!(err("1e3ms").contains("unknown unit \"e3ms\""));
        assert!(err("1.2.3s").contains("such as 12 or 1.5"));
        assert!(err("18446744073.709551616s").contains("longer than the longest duration"));
        assert!(err(&format!("{}h", "9".repeat(60))).contains("longer than"));
    }

    #[test]
    fn human_figures() {
        let cases: &[(f64, &str)] = &[
            (25.0, "25 ns"),
            (0.3125, "0.3125 ns"),
            (0.0, "0 ns"),
            (999.0, "999 ns"),
            (999.96, "1 µs"),
            (1234.0, "1.234 µs"),
            (1234.5, "1.235 µs"),
            (12_345_678.0, "12.35 ms"),
            (1.5e9, "1.5 s"),
            (3.6e12, "3600 s"),
            (-1234.0, "-1.234 µs"),
            (-0.5, "-0.5 ns"),
            (f64::NAN, "-"),
            (f64::INFINITY, "-"),
            (f64::NEG_INFINITY, "-"),
        ];
        for &(ns, want) in cases {
            assert_eq!(format_ns(ns), want, "{ns}");
        }
        assert_eq!(format(ms(1500)), "1.5 s");
        assert_eq!(format(Duration::from_nanos(87_000)), "87 µs");
        assert_eq!(format(Duration::ZERO), "0 ns");
    }

    #[test]
    fn a_scale_keeps_its_unit() {
        let s = scale_for(1500.0);
        assert_eq!(s.unit(), "µs");
        assert_eq!(s.format_ns(950.0), "0.95 µs");
        assert_eq!(s.format_ns(1.5e9), "1500000 µs");
        assert_eq!(s.format_ns(-2.0), "-0.002 µs");
        assert_eq!(s.format_ns(f64::NAN), "-");
        assert_eq!(scale_for(999.96).unit(), "µs");
        assert_eq!(scale_for(0.5).unit(), "ns");
        assert_eq!(scale_for(-2e6).unit(), "ms");
        assert_eq!(scale_for(7.2e12).unit(), "s");
        assert_eq!(scale_for(f64::NAN).unit(), "ns");
    }
}
