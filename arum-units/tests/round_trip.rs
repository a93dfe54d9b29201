//! What the formatters write, the parsers read back, within the rounding to four significant
//! digits (a relative error of at most 5e-4).

use std::time::Duration;

use arum_units::{duration, percent, size};
use proptest::prelude::*;

/// The largest error of rounding to four significant digits, relative to the value.
const ROUNDING: f64 = 5e-4;

fn close(read: f64, wrote: f64) -> bool {
    (read - wrote).abs() <= ROUNDING * wrote.abs()
}

/// Values spread evenly over orders of magnitude (a uniform draw would be almost all large).
fn log_uniform(lowest: f64, highest: f64) -> impl Strategy<Value = f64> {
    (lowest.ln()..=highest.ln()).prop_map(f64::exp)
}

proptest! {
    #[test]
    fn durations_from_1ns_to_1e6s(ns in log_uniform(1.0, 1e15)) {
        let d = Duration::from_nanos(ns.round() as u64);
        let text = duration::format(d);
        let back = duration::parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(close(back.as_nanos() as f64, d.as_nanos() as f64),
            "{:?} -> {} -> {:?}", d, text, back);
    }

    #[test]
    fn durations_in_a_shared_scale(
        ns in log_uniform(1.0, 1e15),
        reference in log_uniform(1.0, 1e15),
    ) {
        let n = ns.round();
        let text = duration::scale_for(reference).format_ns(n);
        let back = duration::parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // Four significant digits in any unit, then parse's rounding to the nanosecond.
        prop_assert!((back.as_nanos() as f64 - n).abs() <= ROUNDING * n + 0.5,
            "{} -> {} -> {:?}", n, text, back);
    }

    #[test]
    fn sizes_from_a_byte_to_an_exbibyte(bytes in log_uniform(1.0, (1u64 << 60) as f64)) {
        let b = bytes.round();
        let text = size::format(b);
        let back = size::parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // Then parse rounds to the byte: 1472 B is 1.4375 KiB, shown as 1.438 KiB, 1472.5 B,
        // read as 1473.
        prop_assert!((back as f64 - b).abs() <= ROUNDING * b + 0.5,
            "{} -> {} -> {}", b, text, back);
    }

    #[test]
    fn whole_sizes_below_a_kibibyte_exactly(bytes in 0u64..1024) {
        prop_assert_eq!(size::parse(&size::format(bytes as f64)), Ok(bytes));
    }

    #[test]
    fn percentages(p in log_uniform(1e-6, 100.0)) {
        let text = percent::format_percent(p);
        let back = percent::parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(close(back, p), "{} -> {} -> {}", p, text, back);
    }

    #[test]
    fn levels(f in 0.001f64..0.999) {
        let text = percent::format_fraction(f);
        let back = percent::parse_level(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(close(back, f), "{} -> {} -> {}", f, text, back);
    }
}
