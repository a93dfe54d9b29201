//! The rules every figure follows, over classes of values.

use arum_units::digits::significant;
use arum_units::{duration, quantity, rate, size};
use proptest::prelude::*;

/// Finite values of every magnitude and sign.
fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
        (-1e15f64..1e15),
        (-1e3f64..1e3),
    ]
}

/// The number and the unit of a figure written "number unit".
fn split(figure: &str) -> (f64, &str) {
    let (number, unit) = figure.split_once(' ').expect("a space before the unit");
    (number.parse().expect("a number"), unit)
}

proptest! {
    #[test]
    fn significant_digits_read_back(v in finite()) {
        let text = significant(v, 4);
        let back: f64 = text.parse().unwrap();
        prop_assert!((back - v).abs() <= 5e-4 * v.abs(), "{} -> {}", v, text);
        prop_assert!(!text.contains('e'));
        prop_assert!(!(text.contains('.') && text.ends_with('0')), "{}", text);
        prop_assert!(!text.ends_with('.'));
        // Four significant digits, or the whole integer part when it is longer.
        let digits = text.trim_start_matches('-').trim_start_matches(['0', '.']);
        let whole = text.trim_start_matches('-').split('.').next().unwrap();
        let whole = if whole == "0" { 0 } else { whole.len() };
        prop_assert!(digits.chars().filter(char::is_ascii_digit).count() <= whole.max(4),
            "{}", text);
    }

    #[test]
    fn a_duration_shows_between_1_and_1000_of_its_unit(ns in finite()) {
        let figure = duration::format_ns(ns);
        let (shown, unit) = split(&figure);
        let a = shown.abs();
        prop_assert!(a < 1000.0 || unit == "s", "{} -> {}", ns, figure);
        prop_assert!(a >= 1.0 || unit == "ns", "{} -> {}", ns, figure);
        prop_assert_eq!(shown < 0.0, ns < 0.0, "{} -> {}", ns, figure);
    }

    #[test]
    fn a_size_shows_at_least_1_of_its_unit(bytes in finite()) {
        let figure = size::format(bytes);
        let (shown, unit) = split(&figure);
        prop_assert!(shown.abs() <= 1024.0 || unit == "TiB", "{} -> {}", bytes, figure);
        prop_assert!(shown.abs() >= 1.0 || unit == "B", "{} -> {}", bytes, figure);
    }

    #[test]
    fn a_scale_is_shared(reference in finite(), values in prop::collection::vec(finite(), 1..8)) {
        let scale = duration::scale_for(reference);
        let own = duration::format_ns(reference);
        prop_assert_eq!(own.rsplit(' ').next().unwrap(), scale.unit());
        for v in values {
            let figure = scale.format_ns(v);
            let (_, unit) = split(&figure);
            prop_assert_eq!(unit, scale.unit());
        }
    }

    #[test]
    fn rates_per_second(v in 0f64..1e16) {
        let bandwidth = rate::format_bytes_per_s(v);
        let (shown, unit) = split(&bandwidth);
        prop_assert!(shown < 1000.0 || unit == "TB/s", "{}", bandwidth);
        prop_assert!(shown >= 1.0 || unit == "B/s", "{}", bandwidth);
        let counts = rate::format_per_s(v);
        prop_assert!(counts.ends_with("/s") && !counts.contains(' '), "{}", counts);
    }

    #[test]
    fn counts_exactly(n in -999_999_999_999_999i64..=999_999_999_999_999) {
        prop_assert_eq!(quantity::format(n as f64), n.to_string());
    }

    #[test]
    fn fractions_of_a_count(x in finite().prop_filter("not whole", |x| x.fract() != 0.0)) {
        prop_assert_eq!(quantity::format(x), significant(x, 4));
    }
}
