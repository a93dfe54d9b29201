//! The clients section of the report (`arum suite`).

use serde::{Deserialize, Serialize};

use crate::fields::Better::{Higher, Lower};
use crate::fields::{identity, measured, Field, Unit};

/// The fields of [`ClientsReport`] (see `crate::fields`).
pub const FIELDS: &[Field] = &[
    identity("copies_reporting"),
    measured("requests", Unit::Count, Higher),
    measured("failed", Unit::Count, Lower),
    measured("per_second", Unit::PerSecond, Higher),
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientsReport {
    /// Lines of counts read: one per client copy that ended normally (a copy killed before it
    /// could write its line is missing).
    pub copies_reporting: u64,
    /// Requests the copies completed (the client command's runs that succeeded).
    pub requests: u64,
    /// Requests that failed (a copy stops at its first failure).
    pub failed: u64,
    /// Completed requests per second of the run's wall time.
    pub per_second: f64,
    /// Lines that were not `REQUESTS FAILED`, if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

impl ClientsReport {
    /// The counts the copies appended (`REQUESTS FAILED` per line), over `wall_ns`.
    pub fn from_counts(text: &str, wall_ns: u64) -> ClientsReport {
        let mut r = ClientsReport::default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let mut words = line.split_whitespace().map(str::parse::<u64>);
            match (words.next(), words.next(), words.next()) {
                (Some(Ok(requests)), Some(Ok(failed)), None) => {
                    r.copies_reporting += 1;
                    r.requests += requests;
                    r.failed += failed;
                }
                _ => r.unreadable.push(line.to_string()),
            }
        }
        r.per_second = if wall_ns > 0 {
            r.requests as f64 * 1e9 / wall_ns as f64
        } else {
            0.0
        };
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_over_the_copies_and_bad_lines_are_kept() {
        let r = ClientsReport::from_counts("120 0\n80 1\n\nnonsense\n", 2_000_000_000);
        assert_eq!((r.copies_reporting, r.requests, r.failed), (2, 200, 1));
        assert!((r.per_second - 100.0).abs() < 1e-9);
        assert_eq!(r.unreadable, ["nonsense"]);
        assert_eq!(ClientsReport::from_counts("", 0).per_second, 0.0);
    }
}
