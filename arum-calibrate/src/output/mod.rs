//! Renderings of a calibration: text (tables, sparkline histograms, full histograms on request),
//! JSON (`arum.calibration/1`) and SVG plots. None of them knows how a figure was measured, and
//! every figure is written by `arum_units`.

pub mod destinations;
pub mod json;
pub mod svg;
pub mod text;

use arum_units::{duration, rate};

use crate::model::Unit;

/// A figure of `unit` on its own: a time in the unit that suits it, a rate in B/s to TB/s.
pub fn figure(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Ns => duration::format_ns(v),
        Unit::BytesPerS => rate::format_bytes_per_s(v),
    }
}

/// How the figures of one measurement are written: times share the scale of a reference (the
/// median), so a row compares digit by digit; rates are each written in their own unit.
#[derive(Debug, Clone, Copy)]
pub enum Figures {
    Time(duration::Scale),
    Rate,
}

impl Figures {
    pub fn like(unit: Unit, reference: f64) -> Figures {
        match unit {
            Unit::Ns => Figures::Time(duration::scale_for(reference)),
            Unit::BytesPerS => Figures::Rate,
        }
    }

    pub fn format(&self, v: f64) -> String {
        match self {
            Figures::Time(scale) => scale.format_ns(v),
            Figures::Rate => rate::format_bytes_per_s(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_of_times_shares_the_median_s_scale() {
        let f = Figures::like(Unit::Ns, 1500.0);
        assert_eq!(f.format(950.0), "0.95 µs");
        assert_eq!(f.format(1500.0), "1.5 µs");
        assert_eq!(
            Figures::like(Unit::BytesPerS, 1e9).format(12.3e9),
            "12.3 GB/s"
        );
        assert_eq!(figure(Unit::Ns, 123_456.0), "123.5 µs");
        assert_eq!(figure(Unit::BytesPerS, 512e6), "512 MB/s");
    }
}
