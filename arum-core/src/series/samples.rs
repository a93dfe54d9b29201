//! The values of every metric over a set of runs: what statistics, comparisons and merges read.

use std::collections::HashMap;

use crate::report::metrics;
use crate::report::model::Report;

/// Every metric's values over some runs, metrics in the order they first appear.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    names: Vec<String>,
    /// Per metric: (run number, value), in run order.
    values: HashMap<String, Vec<(u64, f64)>>,
    runs: usize,
}

impl Samples {
    /// The metrics of `reports`, each numbered (the run index, or a rank).
    pub fn of<'a>(reports: impl IntoIterator<Item = (u64, &'a Report)>) -> Samples {
        let mut s = Samples::default();
        for (number, report) in reports {
            s.add(number, report);
        }
        s
    }

    pub fn add(&mut self, number: u64, report: &Report) {
        self.runs += 1;
        for m in metrics::of_report(report) {
            let entry = self.values.entry(m.name.clone()).or_insert_with(|| {
                self.names.push(m.name);
                Vec::new()
            });
            entry.push((number, m.value));
        }
    }

    /// How many runs were added.
    pub fn runs(&self) -> usize {
        self.runs
    }

    /// Metric names in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The values of `metric`, in run order (empty if no run had it).
    pub fn values(&self, metric: &str) -> Vec<f64> {
        self.numbered(metric).iter().map(|(_, v)| *v).collect()
    }

    /// The values of `metric` with their run numbers.
    pub fn numbered(&self, metric: &str) -> &[(u64, f64)] {
        self.values.get(metric).map_or(&[], Vec::as_slice)
    }
}
