//! Durations as a person reads them: count, total, mean, extremes and percentiles (hdrhistogram,
//! 3 significant digits, from 1 ns to an hour).

use hdrhistogram::Histogram;

#[derive(Debug, Clone)]
pub struct Durations {
    pub count: u64,
    pub total_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    histogram: Histogram<u64>,
}

impl Default for Durations {
    fn default() -> Self {
        Durations {
            count: 0,
            total_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            histogram: Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
                .expect("valid histogram bounds"),
        }
    }
}

impl Durations {
    pub fn record(&mut self, ns: u64) {
        self.count += 1;
        self.total_ns = self.total_ns.saturating_add(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.histogram.saturating_record(ns.max(1));
    }

    /// Durations counted elsewhere (in the kernel): `buckets` gives (lowest, highest value,
    /// count) ascending, each bucket's calls recorded at its middle; the count, total and maximum
    /// are the exact ones kept beside the buckets. The minimum is the lowest bucket's bottom.
    pub fn from_buckets(
        buckets: impl IntoIterator<Item = (u64, u64, u64)>,
        count: u64,
        total_ns: u64,
        max_ns: u64,
    ) -> Durations {
        let mut d = Durations {
            count,
            total_ns,
            max_ns,
            ..Durations::default()
        };
        for (low, high, n) in buckets {
            d.min_ns = d.min_ns.min(low);
            d.histogram
                .saturating_record_n((low + (high - low) / 2).max(1), n);
        }
        d.min_ns = d.min_ns.min(max_ns);
        d
    }

    /// Adds every duration of `other` (a category's calls from its members').
    pub fn add(&mut self, other: &Durations) {
        self.count += other.count;
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.histogram
            .add(&other.histogram)
            .expect("histograms of the same bounds");
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_ns as f64 / self.count as f64
        }
    }

    /// The value at quantile `q` (0..=1), never outside the smallest and largest recorded;
    /// 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        arum_stats::histogram_quantile(&self.histogram, q, self.min_ns, self.max_ns)
            .map_or(0, |v| v.round() as u64)
    }

    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min_ns
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_series() {
        let mut d = Durations::default();
        for v in 1..=1000u64 {
            d.record(v * 1000);
        }
        assert_eq!(d.count, 1000);
        assert_eq!(d.min(), 1000);
        assert_eq!(d.max_ns, 1_000_000);
        assert!((d.mean_ns() - 500_500.0).abs() < 1e-6);
        // Three significant digits.
        let p50 = d.quantile_ns(0.5) as f64;
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.002, "{p50}");
        let p99 = d.quantile_ns(0.99) as f64;
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.002, "{p99}");
    }

    #[test]
    fn durations_from_buckets_keep_the_exact_figures_and_place_quantiles_in_their_bucket() {
        let d = Durations::from_buckets([(100, 101, 50), (2000, 2031, 50)], 100, 105_000, 2031);
        assert_eq!(
            (d.count, d.total_ns, d.max_ns, d.min()),
            (100, 105_000, 2031, 100)
        );
        assert!((d.mean_ns() - 1050.0).abs() < 1e-9);
        let p99 = d.quantile_ns(0.99);
        assert!((2000..=2031).contains(&p99), "{p99}");
        let p25 = d.quantile_ns(0.25);
        assert!((100..=101).contains(&p25), "{p25}");
    }

    #[test]
    fn percentiles_stay_within_what_was_recorded() {
        // A bucket's top is above the largest value recorded in it: 1,000,001 ns lies in a
        // bucket 1,024 ns wide.
        let mut d = Durations::default();
        for _ in 0..10 {
            d.record(1_000_001);
        }
        d.record(5);
        for q in [0.5, 0.9, 0.99, 1.0] {
            let v = d.quantile_ns(q);
            assert!((5..=1_000_001).contains(&v), "q {q}: {v}");
        }
        assert_eq!(d.quantile_ns(0.0), 5);
    }
}
