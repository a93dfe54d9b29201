//! Significant digits: the one rounding of every figure ARUM shows.
//!
//! The rounding works on the shortest decimal that reads back as the same `f64` (what `{}`
//! prints), half away from zero: the figure a reader would round by hand from the printed
//! value, with no error from scaling by a power of ten in floating point.

/// The significant digits of every human-readable figure.
pub const HUMAN: usize = 4;

/// `v` with `digits` significant digits (at least 1), written out in full, never with an
/// exponent; the integer part keeps all its digits (`12345.6` → `12346`); trailing zeros and a
/// trailing `.` are dropped (`1.500` → `1.5`). `NaN` → `NaN`, infinities → `inf`/`-inf`, both
/// zeros → `0`.
pub fn significant(v: f64, digits: usize) -> String {
    significant_shifted(v, 0, digits)
}

/// `v` times 10^`power` as [`significant`] writes it, with the point moved in the decimal
/// digits rather than by a multiplication that would round in binary: a fraction `0.00012345`
/// is `0.01235` percent, where `0.00012345 * 100.0` is `0.012344999…`.
pub fn significant_shifted(v: f64, power: i32, digits: usize) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let (mut mantissa, exponent) = decimal(v.abs());
    let mut exponent = exponent.saturating_add(power);
    // Digits before the point are always kept.
    let whole = usize::try_from(exponent + 1).unwrap_or(0);
    let keep = whole.max(digits.max(1));
    if mantissa.len() > keep {
        let round_up = mantissa[keep] >= 5;
        mantissa.truncate(keep);
        if round_up && carry(&mut mantissa) {
            mantissa.insert(0, 1);
            mantissa.pop();
            exponent += 1;
        }
    }
    let text = positional(&mantissa, exponent);
    if v < 0.0 {
        format!("-{text}")
    } else {
        text
    }
}

/// The shortest decimal digits of a finite positive `v` (first one non-zero) and the power of
/// ten of the first.
fn decimal(v: f64) -> (Vec<u8>, i32) {
    let text = format!("{v:e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let digits = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    (digits, exponent.parse().unwrap_or(0))
}

/// Adds one to the last digit; true when it carried out of the first (all nines).
fn carry(digits: &mut [u8]) -> bool {
    for d in digits.iter_mut().rev() {
        if *d == 9 {
            *d = 0;
        } else {
            *d += 1;
            return false;
        }
    }
    true
}

/// The digits written out with the point after the digit of 10^`exponent`, trailing zeros of the
/// fraction dropped.
fn positional(digits: &[u8], exponent: i32) -> String {
    let char_of = |d: &u8| char::from(b'0' + d);
    let mut out = String::new();
    match usize::try_from(exponent) {
        Ok(power) => {
            let whole = power + 1;
            out.extend(digits.iter().take(whole).map(char_of));
            out.extend(std::iter::repeat_n('0', whole.saturating_sub(digits.len())));
            if digits.len() > whole {
                out.push('.');
                out.extend(digits[whole..].iter().map(char_of));
            }
        }
        Err(_) => {
            let zeros = exponent.unsigned_abs() as usize - 1;
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', zeros));
            out.extend(digits.iter().map(char_of));
        }
    }
    if out.contains('.') {
        let kept = out.trim_end_matches('0').trim_end_matches('.').len();
        out.truncate(kept);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let cases: &[(f64, &str)] = &[
            (1.5, "1.5"),
            (25.0, "25"),
            (0.3125, "0.3125"),
            (1234.5, "1235"),
            (12345.6, "12346"),
            (0.000012345, "0.00001235"),
            (1.0005, "1.001"),
            (999.95, "1000"),
            (9999.5, "10000"),
            (0.99996, "1"),
            (0.1, "0.1"),
            (100.0, "100"),
            (1e20, "100000000000000000000"),
            (123456789.0, "123456789"),
            (-6.54321, "-6.543"),
            (-0.0, "0"),
            (0.0, "0"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for &(v, want) in cases {
            assert_eq!(significant(v, HUMAN), want, "{v}");
        }
    }

    #[test]
    fn other_digit_counts() {
        assert_eq!(significant(6.54321, 1), "7");
        assert_eq!(significant(6.54321, 0), "7");
        assert_eq!(significant(0.0456, 1), "0.05");
        assert_eq!(significant(6.54321, 6), "6.54321");
        assert_eq!(significant(2.5, 10), "2.5");
        assert_eq!(significant(96.0, 1), "96");
        assert_eq!(significant(0.96, 1), "1");
    }

    #[test]
    fn shifting_moves_the_point_in_the_digits() {
        assert_eq!(significant_shifted(0.00012345, 2, HUMAN), "0.01235");
        assert_eq!(significant_shifted(1234.5, -3, HUMAN), "1.235");
        assert_eq!(significant_shifted(-999.96, -3, HUMAN), "-1");
        assert_eq!(significant_shifted(1.5, 9, HUMAN), "1500000000");
        assert_eq!(significant_shifted(0.0, 5, HUMAN), "0");
        assert_eq!(significant_shifted(f64::NAN, 2, HUMAN), "NaN");
    }

    #[test]
    fn extremes_written_out() {
        let tiny = significant(f64::MIN_POSITIVE / 4.0, HUMAN);
        assert!(
            tiny.starts_with("0.000") && tiny.ends_with("5563"),
            "{tiny}"
        );
        let huge = significant(f64::MAX, HUMAN);
        assert_eq!(huge.len(), 309);
        assert!(huge.starts_with("17976931348623157") && huge.ends_with('0'));
    }
}
