//! What a figure is counted in, so that a figure known only by its unit (a metric of a report, a
//! statistic over runs) is written the way every figure of that kind is.

use crate::{duration, percent, quantity, rate, size};

/// The unit a number is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Seconds,
    Bytes,
    /// Events per second (and frequencies).
    PerSecond,
    /// A percentage: 100 is the whole.
    Percent,
    /// A share: 1 is the whole (shown as a percentage).
    Fraction,
    /// How many times something happened or how many there are.
    Count,
    /// A dimensionless quotient that is not a share (instructions per cycle, max over mean).
    Ratio,
}

impl Unit {
    /// Every unit, for listings and tests.
    pub const ALL: [Unit; 10] = [
        Unit::Nanoseconds,
        Unit::Microseconds,
        Unit::Milliseconds,
        Unit::Seconds,
        Unit::Bytes,
        Unit::PerSecond,
        Unit::Percent,
        Unit::Fraction,
        Unit::Count,
        Unit::Ratio,
    ];

    /// `x` in this unit for people, as the unit's own formatter writes it: times with
    /// [`duration::format_ns`], sizes with [`size::format`], rates with [`rate::format_per_s`],
    /// percentages and fractions with [`percent`], counts and ratios with [`quantity::format`].
    pub fn format(self, x: f64) -> String {
        match self {
            Unit::Nanoseconds => duration::format_ns(x),
            Unit::Microseconds => duration::format_ns(x * 1e3),
            Unit::Milliseconds => duration::format_ns(x * 1e6),
            Unit::Seconds => duration::format_ns(x * 1e9),
            Unit::Bytes => size::format(x),
            Unit::PerSecond => rate::format_per_s(x),
            Unit::Percent => percent::format_percent(x),
            Unit::Fraction => percent::format_fraction(x),
            Unit::Count | Unit::Ratio => quantity::format(x),
        }
    }

    /// Its name in files (a CSV column, a listing): lower case, one word.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Nanoseconds => "nanoseconds",
            Unit::Microseconds => "microseconds",
            Unit::Milliseconds => "milliseconds",
            Unit::Seconds => "seconds",
            Unit::Bytes => "bytes",
            Unit::PerSecond => "per_second",
            Unit::Percent => "percent",
            Unit::Fraction => "fraction",
            Unit::Count => "count",
            Unit::Ratio => "ratio",
        }
    }

    /// Whether figures in this unit add up to a meaningful total (times, sizes, counts, rates),
    /// unlike shares and quotients, whose sum says nothing.
    pub fn additive(self) -> bool {
        !matches!(self, Unit::Percent | Unit::Fraction | Unit::Ratio)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unit_uses_its_formatter() {
        let cases: &[(Unit, f64, &str)] = &[
            (Unit::Nanoseconds, 1.5e9, "1.5 s"),
            (Unit::Microseconds, 1234.0, "1.234 ms"),
            (Unit::Milliseconds, 250.0, "250 ms"),
            (Unit::Seconds, 0.0125, "12.5 ms"),
            (Unit::Bytes, 3.0 * 1048576.0, "3 MiB"),
            (Unit::PerSecond, 1234.0, "1.234k/s"),
            (Unit::Percent, 89.6, "89.6%"),
            (Unit::Fraction, 0.896, "89.6%"),
            (Unit::Count, 1234567.0, "1234567"),
            (Unit::Ratio, 1.23456, "1.235"),
        ];
        for &(u, x, want) in cases {
            assert_eq!(u.format(x), want, "{u:?}");
        }
        for u in Unit::ALL {
            assert_eq!(u.format(f64::NAN), "-", "{u:?}");
        }
    }

    #[test]
    fn names_are_distinct() {
        let mut names: Vec<&str> = Unit::ALL.iter().map(|u| u.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Unit::ALL.len());
    }
}
