//! Rates: bandwidth in bytes per second, and counts per second.

use crate::ladder::{Ladder, Ratio};

/// Bandwidth steps: decimal SI, as bandwidth is customarily given (a "GB/s" of memory or disk
/// is 10^9 bytes a second).
const BYTES_PER_S: Ladder = Ladder {
    ratio: Ratio::Thousand,
    units: &["B/s", "kB/s", "MB/s", "GB/s", "TB/s"],
};

/// Counts per second: SI prefixes on a dimensionless count.
const PER_S: Ladder = Ladder {
    ratio: Ratio::Thousand,
    units: &["/s", "k/s", "M/s", "G/s", "T/s"],
};

/// Bytes per second for people: the largest of B/s, kB/s, MB/s, GB/s and TB/s (powers of 1000)
/// in which the value is at least 1, four significant digits, a space, the unit: `12.3 GB/s`,
/// `512 B/s`. NaN and infinities are `-`.
pub fn format_bytes_per_s(bps: f64) -> String {
    BYTES_PER_S.format(bps, " ")
}

/// Counts per second for people: four significant digits and, attached as `%` is (a count has
/// no unit of measure to set apart), `/s`, `k/s`, `M/s`, `G/s` or `T/s`, the largest in which
/// the value is at least 1: `12/s`, `0.5/s`, `1.234k/s`, `3.5M/s`. NaN and infinities are `-`.
pub fn format_per_s(per_s: f64) -> String {
    PER_S.format(per_s, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth() {
        let cases: &[(f64, &str)] = &[
            (12.3e9, "12.3 GB/s"),
            (512.0, "512 B/s"),
            (1500.0, "1.5 kB/s"),
            (999.96e6, "1 GB/s"),
            (2.5e12, "2.5 TB/s"),
            (3e15, "3000 TB/s"),
            (0.0, "0 B/s"),
            (f64::NAN, "-"),
            (f64::NEG_INFINITY, "-"),
        ];
        for &(v, want) in cases {
            assert_eq!(format_bytes_per_s(v), want, "{v}");
        }
    }

    #[test]
    fn counts() {
        let cases: &[(f64, &str)] = &[
            (12.0, "12/s"),
            (0.5, "0.5/s"),
            (1234.0, "1.234k/s"),
            (3.5e6, "3.5M/s"),
            (2e9, "2G/s"),
            (7.25e12, "7.25T/s"),
            (-1500.0, "-1.5k/s"),
            (f64::NAN, "-"),
            (f64::INFINITY, "-"),
        ];
        for &(v, want) in cases {
            assert_eq!(format_per_s(v), want, "{v}");
        }
    }
}
