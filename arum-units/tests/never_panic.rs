//! No text makes a parser panic, no `f64` makes a formatter panic, and every refusal is one
//! line.

use arum_units::{duration, percent, quantity, rate, size, UnitError};
use proptest::prelude::*;

fn one_line(result: Result<impl Sized, UnitError>) -> Result<(), TestCaseError> {
    if let Err(e) = result {
        prop_assert!(!e.message().is_empty());
        prop_assert!(!e.message().contains('\n'), "{:?}", e.message());
        prop_assert_eq!(e.to_string(), e.message());
    }
    Ok(())
}

fn parse_all(text: &str) -> Result<(), TestCaseError> {
    one_line(duration::parse(text))?;
    one_line(size::parse(text))?;
    one_line(percent::parse(text))?;
    one_line(percent::parse_level(text))
}

/// Strings a person might type for a value: digits, points, unit letters, spaces, signs.
const VALUE_LIKE: &str = "[0-9. +\\-%a-zA-Zµμ\\n]{0,24}";

proptest! {
    #[test]
    fn any_text(text in "\\PC*") {
        parse_all(&text)?;
    }

    #[test]
    fn value_like_text(text in VALUE_LIKE) {
        parse_all(&text)?;
    }

    #[test]
    fn long_digit_runs(digits in "[0-9]{1,80}", fraction in "[0-9]{0,80}",
                       unit in "(ns|us|µs|ms|s|m|min|h|B|K|KiB|M|G|T|TB|%|)") {
        parse_all(&format!("{digits}.{fraction}{unit}"))?;
        parse_all(&format!("{digits}{unit}"))?;
    }

    #[test]
    fn any_float_with_a_unit(v in any::<f64>(), unit in "(ns|us|ms|s|m|h|K|M|G|T|%|x|)") {
        parse_all(&format!("{v}{unit}"))?;
        parse_all(&format!("{v:e}{unit}"))?;
    }

    #[test]
    fn formatters_take_any_float(v in any::<f64>(), reference in any::<f64>()) {
        for figure in [
            duration::format_ns(v),
            duration::scale_for(reference).format_ns(v),
            size::format(v),
            rate::format_bytes_per_s(v),
            rate::format_per_s(v),
            percent::format_fraction(v),
            percent::format_percent(v),
            quantity::format(v),
        ] {
            prop_assert!(!figure.is_empty());
            prop_assert!(!figure.contains('e'), "{}", figure);
            prop_assert_eq!(figure == "-", !v.is_finite(), "{} for {}", figure, v);
        }
    }

    #[test]
    fn durations_of_any_length(secs in any::<u64>(), nanos in 0u32..1_000_000_000) {
        let text = duration::format(std::time::Duration::new(secs, nanos));
        prop_assert!(text.ends_with(" s") || text.ends_with(" ms") || text.ends_with(" µs")
            || text.ends_with(" ns"), "{}", text);
    }
}
