//! Plain quantities: counts and ratios with no unit.

use crate::digits::{significant, HUMAN};

/// Whole numbers below 10^15 in absolute value are written exactly, without decimals
/// (`1234567`: a count is read digit for digit); anything else has four significant digits
/// (`1.235`, `0.0001235`, `1235`). NaN and infinities are `-`.
pub fn format(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x == 0.0 {
        "0".into()
    } else if x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        significant(x, HUMAN)
    }
}

/// A count with its digits in groups of three (`1,234,567`), as the original report printed
/// event counts: long counts are compared by eye.
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_three_digits() {
        for (n, want) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (1234567, "1,234,567"),
            (u64::MAX, "18,446,744,073,709,551,615"),
        ] {
            assert_eq!(grouped(n), want);
        }
    }

    #[test]
    fn known_values() {
        let cases: &[(f64, &str)] = &[
            (1234567.0, "1234567"),
            (-42.0, "-42"),
            (0.0, "0"),
            (-0.0, "0"),
            (999_999_999_999_999.0, "999999999999999"),
            (1e15, "1000000000000000"),
            (1.23456, "1.235"),
            (0.00012345, "0.0001235"),
            (1234.5, "1235"),
            (2.5e15 + 0.5, "2500000000000001"),
            (f64::NAN, "-"),
            (f64::INFINITY, "-"),
        ];
        for &(x, want) in cases {
            assert_eq!(format(x), want, "{x}");
        }
    }
}
