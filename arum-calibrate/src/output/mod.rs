//! Renderings of a calibration: text (tables, sparkline histograms, full histograms on request),
//! JSON (`arum.calibration/1`) and SVG plots. None of them knows how a figure was measured.

pub mod json;
pub mod svg;
pub mod text;

use crate::model::Unit;

/// Nanoseconds with a unit that keeps 3-4 significant digits.
pub fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.1} ns")
    } else if a < 1e6 {
        format!("{:.2} us", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// Bytes per second in GB/s or MB/s (10^9, 10^6).
pub fn fmt_rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} GB/s", bps / 1e9)
    } else {
        format!("{:.1} MB/s", bps / 1e6)
    }
}

/// A value of `unit`, scaled as `reference` would be (so a row shares one scale).
pub fn fmt_as(unit: Unit, v: f64, reference: f64) -> String {
    match unit {
        Unit::Ns => {
            let (div, name) = ns_scale(reference);
            format!("{:.*} {name}", precision(v / div), v / div)
        }
        Unit::BytesPerS => {
            if reference >= 1e9 {
                format!("{:.2} GB/s", v / 1e9)
            } else {
                format!("{:.1} MB/s", v / 1e6)
            }
        }
    }
}

pub fn ns_scale(reference: f64) -> (f64, &'static str) {
    let a = reference.abs();
    if a < 1e3 {
        (1.0, "ns")
    } else if a < 1e6 {
        (1e3, "us")
    } else if a < 1e9 {
        (1e6, "ms")
    } else {
        (1e9, "s")
    }
}

fn precision(v: f64) -> usize {
    let a = v.abs();
    if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else {
        3
    }
}

/// Sizes in KiB/MiB/GiB.
pub fn fmt_bytes(b: u64) -> String {
    if b >= 1 << 30 && b % (1 << 30) == 0 {
        format!("{} GiB", b >> 30)
    } else if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{} MiB", b >> 20)
    } else {
        format!("{} KiB", b >> 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_keep_their_digits_and_a_row_shares_a_scale() {
        assert_eq!(fmt_ns(12.34), "12.3 ns");
        assert_eq!(fmt_ns(123_456.0), "123.46 us");
        assert_eq!(fmt_rate(12.3e9), "12.30 GB/s");
        assert_eq!(fmt_as(Unit::Ns, 950.0, 1500.0), "0.950 us");
        assert_eq!(fmt_bytes(32 << 20), "32 MiB");
        assert_eq!(fmt_bytes(48 << 10), "48 KiB");
    }
}
