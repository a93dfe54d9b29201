//! The one grammar of a value: a number, then a unit. The number is decimal digits with an
//! optional fraction (`10`, `1.5`, `.5`, `87.`), with no minus sign, exponent or words (`inf`,
//! `NaN`): what a person types for a duration, size or percentage, and nothing a float parser
//! would accept by accident. Spaces may stand around and between the number and the unit.

use crate::UnitError;

/// A value split into its number and its unit (empty when none was given).
pub(crate) struct Parts<'a> {
    pub number: Decimal<'a>,
    pub unit: &'a str,
}

/// The digits of a non-negative decimal number, as typed.
pub(crate) struct Decimal<'a> {
    text: &'a str,
    whole: &'a str,
    fraction: &'a str,
}

/// Why a text is not a number followed by a unit.
pub(crate) enum Problem {
    Empty,
    Negative,
    NoNumber,
    BadNumber,
}

/// Fraction digits beyond these change a value by less than 10^-24 of its unit: far below the
/// rounding to whole nanoseconds or bytes, and they keep every product within a `u128`.
const FRACTION_DIGITS: usize = 24;

/// Splits `text` into a number and a unit.
pub(crate) fn split(text: &str) -> Result<Parts<'_>, Problem> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Problem::Empty);
    }
    if t.starts_with('-') {
        return Err(Problem::Negative);
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(end);
    if number.is_empty() {
        return Err(Problem::NoNumber);
    }
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if fraction.contains('.') || (whole.is_empty() && fraction.is_empty()) {
        return Err(Problem::BadNumber);
    }
    Ok(Parts {
        number: Decimal {
            text: number,
            whole,
            fraction,
        },
        unit: unit.trim(),
    })
}

impl Problem {
    /// The one-line error for `text`, with `example` as the fix.
    pub(crate) fn explain(self, text: &str, example: &str) -> UnitError {
        let t = text.trim();
        UnitError::new(match self {
            Problem::Empty => format!("no value given: write e.g. {example}"),
            Problem::Negative => format!("{t:?} is negative: write e.g. {example}"),
            Problem::NoNumber => {
                format!("{t:?} does not start with a number: write e.g. {example}")
            }
            Problem::BadNumber => format!(
                "{t:?} does not start with a number such as 12 or 1.5: write e.g. {example}"
            ),
        })
    }
}

impl Decimal<'_> {
    /// The number as typed.
    pub(crate) fn text(&self) -> &str {
        self.text
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.text.bytes().all(|b| b == b'0' || b == b'.')
    }

    /// The nearest `f64` (infinite when the digits are too many).
    pub(crate) fn to_f64(&self) -> f64 {
        self.to_f64_shifted(0)
    }

    /// The nearest `f64` to the number times 10^`power`, rounded once (`99.9%` is the `f64`
    /// nearest 0.999, where `99.9 / 100.0` is `0.9990000000000001`).
    pub(crate) fn to_f64_shifted(&self, power: i32) -> f64 {
        let whole = if self.whole.is_empty() {
            "0"
        } else {
            self.whole
        };
        let fraction = if self.fraction.is_empty() {
            "0"
        } else {
            self.fraction
        };
        // Always the form `f64::from_str` reads; it cannot fail.
        format!("{whole}.{fraction}e{power}")
            .parse()
            .unwrap_or(f64::NAN)
    }

    /// The number times `multiple`, rounded to the nearest whole (halves up), exactly from the
    /// digits; `None` when it does not fit a `u128`.
    pub(crate) fn scaled(&self, multiple: u64) -> Option<u128> {
        let multiple = u128::from(multiple);
        let whole = digits_value(self.whole)?.checked_mul(multiple)?;
        let kept = &self.fraction[..self.fraction.len().min(FRACTION_DIGITS)];
        let denominator = 10u128.checked_pow(u32::try_from(kept.len()).ok()?)?;
        let product = digits_value(kept)?.checked_mul(multiple)?;
        let mut part = product / denominator;
        if (product % denominator).checked_mul(2)? >= denominator {
            part += 1;
        }
        whole.checked_add(part)
    }
}

/// The value of a run of ASCII digits; `None` on overflow.
fn digits_value(digits: &str) -> Option<u128> {
    digits.bytes().try_fold(0u128, |acc, b| {
        acc.checked_mul(10)?.checked_add(u128::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaled(text: &str, multiple: u64) -> Option<u128> {
        split(text).ok()?.number.scaled(multiple)
    }

    #[test]
    fn numbers_and_units() {
        let p = split(" 1.5 ms ").ok().unwrap();
        assert_eq!((p.number.text(), p.unit), ("1.5", "ms"));
        let p = split("+.5s").ok().unwrap();
        assert_eq!((p.number.text(), p.unit), (".5", "s"));
        let p = split("87.").ok().unwrap();
        assert_eq!((p.number.text(), p.unit), ("87.", ""));
        assert!(matches!(split(""), Err(Problem::Empty)));
        assert!(matches!(split("  "), Err(Problem::Empty)));
        assert!(matches!(split("-1s"), Err(Problem::Negative)));
        assert!(matches!(split("inf"), Err(Problem::NoNumber)));
        assert!(matches!(split("ms"), Err(Problem::NoNumber)));
        assert!(matches!(split("."), Err(Problem::BadNumber)));
        assert!(matches!(split("1.2.3s"), Err(Problem::BadNumber)));
    }

    #[test]
    fn exact_scaling_rounds_halves_up() {
        assert_eq!(scaled("0.1", 1_000_000_000), Some(100_000_000));
        assert_eq!(scaled("1.5", 1 << 40), Some(1_649_267_441_664));
        assert_eq!(scaled("2.5", 1), Some(3));
        assert_eq!(scaled("2.49", 1), Some(2));
        assert_eq!(scaled("0.0000000000000000000000000009", 1 << 40), Some(0));
        assert_eq!(scaled("18446744073709551615", 1), Some(u64::MAX.into()));
        assert_eq!(scaled(&"9".repeat(40), 1), None);
        assert_eq!(scaled(&"9".repeat(30), 3_600_000_000_000), None);
    }
}
