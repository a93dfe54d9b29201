//! The overview: processes, the busiest probes, and system calls per interval of the session.

use std::collections::{HashMap, HashSet};

use crate::facilities::views::model::{OverviewView, ProbeLine, ProcessLine};
use crate::perf::records::event::ProbeEvent;

/// Intervals of the time line.
const INTERVALS: u64 = 20;
const BUSIEST: usize = 10;

/// `events` in time order.
pub fn build(
    events: &[ProbeEvent],
    probes: &[String],
    names: &HashMap<u32, String>,
) -> OverviewView {
    let (Some(first), Some(last)) = (
        events.first().map(|e| e.start),
        events.iter().map(|e| e.start + e.duration).max(),
    ) else {
        return OverviewView::default();
    };
    let duration_ns = last - first;
    let interval_ns = duration_ns.div_ceil(INTERVALS).max(1);
    let mut rate = vec![0u64; duration_ns.div_ceil(interval_ns).max(1) as usize];
    let mut per_probe = vec![(0u64, 0u64); probes.len()];
    let mut procs: HashMap<u32, (ProcessLine, HashSet<u32>)> = HashMap::new();
    for e in events {
        let at = e.start - first;
        let k = ((at / interval_ns) as usize).min(rate.len() - 1);
        if e.syscall {
            rate[k] += 1;
        }
        let p = &mut per_probe[e.probe as usize];
        p.0 += 1;
        p.1 += e.duration;
        let (line, threads) = procs.entry(e.pid).or_insert_with(|| {
            (
                ProcessLine {
                    pid: e.pid,
                    name: names.get(&e.pid).cloned().unwrap_or_default(),
                    first_ns: at,
                    ..ProcessLine::default()
                },
                HashSet::new(),
            )
        });
        line.events += 1;
        line.last_ns = at + e.duration;
        threads.insert(e.tid);
    }
    let mut processes: Vec<ProcessLine> = procs
        .into_values()
        .map(|(mut l, t)| {
            l.threads = t.len() as u64;
            l
        })
        .collect();
    processes.sort_by_key(|p| (p.first_ns, p.pid));
    let mut busiest: Vec<ProbeLine> = per_probe
        .iter()
        .enumerate()
        .filter(|(_, p)| p.0 > 0)
        .map(|(i, &(calls, total_ns))| ProbeLine {
            probe: probes[i].clone(),
            calls,
            total_ns,
        })
        .collect();
    busiest.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.probe.cmp(&b.probe)));
    busiest.truncate(BUSIEST);
    OverviewView {
        duration_ns,
        interval_ns,
        rate,
        processes,
        busiest,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::journal;
    use super::*;

    #[test]
    fn rate_processes_and_busiest_probes() {
        let j = journal(
            &["read", "write"],
            &[
                (0, 10, 10, 1000, 50, 0, 0),
                (1, 10, 11, 1100, 500, 0, 0),
                (0, 20, 20, 2900, 100, 0, 0),
            ],
        );
        let names = [(10, "srv".to_string())].into_iter().collect();
        let o = build(&j.events, &j.names, &names);
        assert_eq!(o.duration_ns, 2000);
        assert_eq!(o.interval_ns, 100);
        assert_eq!(o.rate.iter().sum::<u64>(), 3);
        assert_eq!((o.rate[0], o.rate[1], o.rate[19]), (1, 1, 1));
        assert_eq!(o.processes.len(), 2);
        assert_eq!(
            (o.processes[0].name.as_str(), o.processes[0].threads),
            ("srv", 2)
        );
        assert_eq!(o.busiest[0].probe, "write");
        assert_eq!((o.busiest[1].calls, o.busiest[1].total_ns), (2, 150));
    }
}
