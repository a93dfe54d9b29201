//! The table view: elapsed time per process and probe, in µs and TSC cycles.

use std::collections::{BTreeMap, HashMap};

use crate::facilities::views::model::TableRow;
use crate::perf::records::event::ProbeEvent;

pub fn build(
    events: &[ProbeEvent],
    probes: &[String],
    names: &HashMap<u32, String>,
    tsc_hz: Option<f64>,
) -> Vec<TableRow> {
    let mut sums: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    for e in events {
        let s = sums.entry((e.pid, e.probe)).or_default();
        s.0 += 1;
        s.1 += e.duration;
    }
    let mut rows: Vec<TableRow> = sums
        .into_iter()
        .map(|((pid, probe), (calls, ns))| TableRow {
            pid,
            process: names.get(&pid).cloned().unwrap_or_default(),
            probe: probes[probe as usize].clone(),
            calls,
            elapsed_us: ns as f64 / 1e3,
            elapsed_cycles: tsc_hz.map(|hz| (ns as f64 * hz / 1e9).round() as u64),
        })
        .collect();
    rows.sort_by(|a, b| {
        a.pid
            .cmp(&b.pid)
            .then(b.elapsed_us.total_cmp(&a.elapsed_us))
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::super::testing::journal;
    use super::*;

    #[test]
    fn elapsed_per_process_and_probe_in_us_and_cycles() {
        let j = journal(
            &["read", "write"],
            &[
                (0, 1, 1, 0, 1500, 0, 0),
                (0, 1, 1, 10, 500, 0, 0),
                (1, 1, 1, 20, 4000, 0, 0),
                (0, 2, 2, 30, 1000, 0, 0),
            ],
        );
        let rows = build(&j.events, &j.names, &HashMap::new(), Some(2e9));
        let r: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.pid,
                    r.probe.as_str(),
                    r.calls,
                    r.elapsed_us,
                    r.elapsed_cycles,
                )
            })
            .collect();
        assert_eq!(
            r,
            [
                (1, "write", 1, 4.0, Some(8000)),
                (1, "read", 2, 2.0, Some(4000)),
                (2, "read", 1, 1.0, Some(2000))
            ]
        );
    }
}
