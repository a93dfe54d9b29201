//! Equal-width histograms of samples. Timing samples have long right tails (an interrupt, a
//! preemption), so the bins span the minimum to the 99th percentile and what lies beyond is
//! counted apart instead of squeezing the body into one bin.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// Lower edge of the first bin.
    pub low: f64,
    /// Width of every bin.
    pub width: f64,
    pub counts: Vec<u64>,
    /// Samples above the last bin (beyond the 99th percentile).
    pub above: u64,
}

impl Histogram {
    /// Bins sorted samples into `bins` equal bins from the minimum to the 99th percentile.
    pub fn of_sorted(sorted: &[f64], bins: usize) -> Histogram {
        assert!(!sorted.is_empty() && bins > 0);
        let low = sorted[0];
        let mut high = arum_stats::quantile_sorted(sorted, 0.99).unwrap_or(low);
        if high <= low {
            // Everything (up to the percentile) is one value: one bin per distinct neighbour.
            high = sorted[sorted.len() - 1].max(low + low.abs().max(1.0) * 1e-9);
        }
        let width = (high - low) / bins as f64;
        let mut counts = vec![0u64; bins];
        let mut above = 0;
        for &x in sorted {
            if x > high {
                above += 1;
            } else {
                let i = (((x - low) / width) as usize).min(bins - 1);
                counts[i] += 1;
            }
        }
        Histogram {
            low,
            width,
            counts,
            above,
        }
    }

    pub fn high(&self) -> f64 {
        self.low + self.width * self.counts.len() as f64
    }

    /// Lower edge of bin `i`.
    pub fn edge(&self, i: usize) -> f64 {
        self.low + self.width * i as f64
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum::<u64>() + self.above
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_a_uniform_ramp_evenly_and_sets_the_tail_apart() {
        let mut v: Vec<f64> = (0..1000).map(f64::from).collect();
        v.push(1e6); // one far outlier
        let h = Histogram::of_sorted(&v, 10);
        assert_eq!(h.total(), 1001);
        assert_eq!(h.low, 0.0);
        assert!(h.above >= 1 && h.above <= 12, "{h:?}");
        let body: u64 = h.counts.iter().sum();
        for &c in &h.counts {
            assert!((c as f64 - body as f64 / 10.0).abs() <= 2.0, "{h:?}");
        }
    }

    #[test]
    fn a_constant_sample_lands_in_one_bin() {
        let h = Histogram::of_sorted(&[5.0; 20], 8);
        assert_eq!(h.total(), 20);
        assert_eq!(h.counts.iter().filter(|&&c| c > 0).count(), 1);
    }
}
