//! Percentages and confidence levels: read from options (`5%`, `0.5`, `90%`), written for
//! people (`89.6%`).

use crate::digits::{significant, significant_shifted, HUMAN};
use crate::number;
use crate::UnitError;

/// Reads a percentage above 0 and at most 100. The option's unit is percent, so a bare number
/// is a percentage (`2`, `0.5`); a `%` may follow, with spaces around (`5%`, ` 5 % `).
pub fn parse(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let parts = number::split(t).map_err(|p| p.explain(t, "2 or 0.5%"))?;
    if !matches!(parts.unit, "" | "%") {
        return Err(UnitError::new(format!(
            "unknown unit {:?} in {t:?}: \
             a percentage is a number, with % or without, e.g. 2 or 0.5%",
            parts.unit
        )));
    }
    let v = parts.number.to_f64();
    if v.is_finite() && v > 0.0 && v <= 100.0 {
        Ok(v)
    } else {
        Err(UnitError::new(format!(
            "{t:?} is not a percentage above 0 and at most 100: write e.g. 2 or 0.5%"
        )))
    }
}

/// Reads a confidence level as a fraction strictly between 0 and 1: `0.9`, or a percentage
/// with its sign (`90%`, `95 %`), or a bare percentage from 50 to below 100 (`99.9`): no level
/// is a fraction above 1, and nobody asks for less than 50%. A bare number from 1 to 50 is
/// refused rather than guessed at (`1.5` might mean 1.5% or 0.015): the error suggests both.
pub fn parse_level(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let parts = number::split(t).map_err(|p| p.explain(t, "0.9 or 90%"))?;
    let v = parts.number.to_f64();
    let level = match parts.unit {
        "%" => parts.number.to_f64_shifted(-2),
        "" if (50.0..100.0).contains(&v) => parts.number.to_f64_shifted(-2),
        "" if v > 1.0 && v < 50.0 => {
            let n = parts.number.text();
            return Err(UnitError::new(format!(
                "{t:?} is not a level between 0 and 1: write {n}% or {} for {n} percent",
                significant_shifted(v, -2, 17)
            )));
        }
        "" => v,
        unit => {
            return Err(UnitError::new(format!(
                "unknown unit {unit:?} in {t:?}: \
                 a level is a fraction or a percentage, e.g. 0.9 or 90%"
            )))
        }
    };
    if level > 0.0 && level < 1.0 {
        Ok(level)
    } else {
        Err(UnitError::new(format!(
            "{t:?} is not a level strictly between 0 and 1 (0% and 100%): write e.g. 0.9 or 90%"
        )))
    }
}

/// A fraction as a percentage for people: `0.896` → `89.6%`, `1.0` → `100%`,
/// `0.00012345` → `0.01235%` (four significant digits of the percentage); NaN and infinities
/// are `-`.
pub fn format_fraction(f: f64) -> String {
    if f.is_finite() {
        format!("{}%", significant_shifted(f, 2, HUMAN))
    } else {
        "-".into()
    }
}

/// A confidence level for people, as precise as it was given: `0.9` → `90%`, `0.975` →
/// `97.5%`, `0.999` → `99.9%` (never rounded up to `100%`).
pub fn format_level(level: f64) -> String {
    if level.is_finite() {
        format!("{}%", significant_shifted(level, 2, LEVEL_DIGITS))
    } else {
        "-".into()
    }
}

/// Digits of a level: enough for any level a person types (99.9999%), few enough that the
/// binary fraction's tail (0.975 · 100 = 97.50000000000001) is not shown.
const LEVEL_DIGITS: usize = 12;

/// A percentage for people, four significant digits then `%`: `89.6%`, `2%`; NaN and
/// infinities are `-`.
pub fn format_percent(p: f64) -> String {
    if p.is_finite() {
        format!("{}%", significant(p, HUMAN))
    } else {
        "-".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_with_or_without_the_sign() {
        assert_eq!(parse("2"), Ok(2.0));
        assert_eq!(parse("0.5"), Ok(0.5));
        assert_eq!(parse("5%"), Ok(5.0));
        assert_eq!(parse(" 5 % "), Ok(5.0));
        assert_eq!(parse("100"), Ok(100.0));
        assert_eq!(parse(".25%"), Ok(0.25));
        let err = |t: &str| parse(t).unwrap_err().message().to_owned();
        assert_eq!(
            err("0"),
            "\"0\" is not a percentage above 0 and at most 100: write e.g. 2 or 0.5%"
        );
        assert!(err("100.5").contains("above 0 and at most 100"));
        assert!(err(&"9".repeat(400)).contains("above 0 and at most 100"));
        assert!(err("-5").contains("is negative"));
        assert!(err("inf").contains("does not start with a number"));
        assert!(err("5 pc").contains("unknown unit \"pc\""));
        assert!(err("5%%").contains("unknown unit \"%%\""));
        assert!(err("").contains("no value given"));
    }

    #[test]
    fn levels_as_fractions_or_percentages() {
        assert_eq!(parse_level("0.9"), Ok(0.9));
        assert_eq!(parse_level("90%"), Ok(0.9));
        assert_eq!(parse_level("95 %"), Ok(0.95));
        assert_eq!(parse_level(" 99.9% "), Ok(0.999));
        assert_eq!(parse_level("90"), Ok(0.9));
        assert_eq!(parse_level("99.9"), Ok(0.999));
        assert_eq!(parse_level("50"), Ok(0.5));
        let err = |t: &str| parse_level(t).unwrap_err().message().to_owned();
        assert_eq!(
            err("1.5"),
            "\"1.5\" is not a level between 0 and 1: write 1.5% or 0.015 for 1.5 percent"
        );
        assert!(err("1").contains("strictly between 0 and 1"));
        assert!(err("0").contains("strictly between 0 and 1"));
        assert!(err("100%").contains("strictly between 0 and 1"));
        assert!(err("0%").contains("strictly between 0 and 1"));
        assert!(err("100").contains("strictly between 0 and 1"));
        assert!(err("0.9x").contains("unknown unit \"x\""));
        assert!(err("NaN").contains("does not start with a number"));
    }

    #[test]
    fn human_figures() {
        assert_eq!(format_fraction(0.896), "89.6%");
        assert_eq!(format_fraction(1.0), "100%");
        assert_eq!(format_fraction(0.00012345), "0.01235%");
        assert_eq!(format_fraction(-0.05), "-5%");
        assert_eq!(format_fraction(f64::NAN), "-");
        assert_eq!(format_fraction(f64::INFINITY), "-");
        assert_eq!(format_level(0.9), "90%");
        assert_eq!(format_level(0.975), "97.5%");
        assert_eq!(format_level(0.999), "99.9%");
        assert_eq!(format_level(0.9999), "99.99%");
        assert_eq!(format_level(0.015), "1.5%");
        assert_eq!(format_percent(2.0), "2%");
        assert_eq!(format_percent(33.33333), "33.33%");
        assert_eq!(format_percent(1234.5), "1235%");
        assert_eq!(format_percent(f64::NEG_INFINITY), "-");
    }
}
