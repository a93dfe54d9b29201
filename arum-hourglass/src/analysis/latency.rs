//! Dispatch latency (the paper's §5.3 and Table 1): how late the latency-test thread woke after
//! the time it asked for, as a distribution and as counts of samples later than 1, 5, 10 and
//! 50 ms.

use serde::{Deserialize, Serialize};

use super::stats::Summary;
use crate::trace::Record;

/// The paper's Table 1 thresholds.
pub const TABLE1_MS: [u64; 4] = [1, 5, 10, 50];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaterThan {
    pub ms: u64,
    pub samples: usize,
}

/// Samples whose lateness is below `upper_ns` (and at or above the previous bucket's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    pub upper_ns: u64,
    pub samples: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub thread: usize,
    pub lateness: Option<Summary>,
    pub later_than: Vec<LaterThan>,
    /// Power-of-two buckets from 1 µs.
    pub histogram: Vec<Bucket>,
}

pub fn analyse(records: &[Record], thread: usize) -> Latency {
    let late: Vec<u64> = records
        .iter()
        .filter_map(|r| match r {
            Record::Wake(w) if w.thread as usize == thread => Some(w.lateness_ns),
            _ => None,
        })
        .collect();
    let mut histogram: Vec<Bucket> = Vec::new();
    for &l in &late {
        let upper = (l + 1).next_power_of_two().max(1024);
        match histogram.iter_mut().find(|b| b.upper_ns == upper) {
            Some(b) => b.samples += 1,
            None => histogram.push(Bucket {
                upper_ns: upper,
                samples: 1,
            }),
        }
    }
    histogram.sort_by_key(|b| b.upper_ns);
    Latency {
        thread,
        lateness: Summary::of(&late.iter().map(|&l| l as f64).collect::<Vec<_>>()),
        later_than: TABLE1_MS
            .iter()
            .map(|&ms| LaterThan {
                ms,
                samples: late.iter().filter(|&&l| l > ms * 1_000_000).count(),
            })
            .collect(),
        histogram,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Wake;

    #[test]
    fn table_1_counts_and_buckets() {
        let recs: Vec<Record> = [500u64, 20_000, 2_000_000, 6_000_000, 60_000_000]
            .iter()
            .map(|&l| {
                Record::Wake(Wake {
                    thread: 0,
                    cpu: 0,
                    at: 0,
                    lateness_ns: l,
                })
            })
            .collect();
        let l = analyse(&recs, 0);
        let counts: Vec<usize> = l.later_than.iter().map(|c| c.samples).collect();
        assert_eq!(counts, vec![3, 2, 1, 1]);
        assert_eq!(l.lateness.unwrap().median_ns, 2_000_000.0);
        assert_eq!(l.histogram[0].upper_ns, 1024);
        assert_eq!(l.histogram[1].upper_ns, 32768);
        assert_eq!(l.histogram.iter().map(|b| b.samples).sum::<usize>(), 5);
    }
}
