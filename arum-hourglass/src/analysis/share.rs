//! The CPU each thread received (the sum of its intervals) against its active window, next to
//! the kernel's own accounting of the thread, and, where threads compete for one CPU under
//! SCHED_OTHER, the share their weights entitle them to (the paper's §3.1 fairness remarks).

use serde::{Deserialize, Serialize};

use super::timeline::Timeline;
use crate::clock::Timebase;
use crate::experiment::Experiment;
use crate::priority;
use crate::threads::ThreadOutcome;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub thread: usize,
    pub intervals: usize,
    pub received_ns: f64,
    pub window_ns: f64,
    /// received / window.
    pub share: f64,
    /// CLOCK_THREAD_CPUTIME_ID over the same window: received plus the time inside gaps the
    /// kernel charged to the thread (system calls, and parts of interrupts).
    pub kernel_cpu_ns: f64,
    pub migrations: usize,
    /// received over what all the Hourglass threads sharing its single CPU received: the
    /// figure to set against `expected_share` when other tasks also ran there.
    pub share_among_peers: Option<f64>,
    /// The share by weight among never-blocking SCHED_OTHER threads pinned to the same single
    /// CPU over the same window; `None` when that comparison does not apply.
    pub expected_share: Option<f64>,
}

pub fn analyse(
    exp: &Experiment,
    t: &Timeline,
    tb: &Timebase,
    outcomes: &[ThreadOutcome],
) -> Vec<Share> {
    exp.threads
        .iter()
        .enumerate()
        .filter(|(_, s)| s.workload.traces_intervals())
        .map(|(i, spec)| {
            let (start, finish) = spec.window(exp.duration);
            let window_ns = (finish - start).as_nanos() as f64;
            let received_ns = tb.ns(t.received(i));
            Share {
                thread: i,
                intervals: t.by_thread.get(i).map_or(0, Vec::len),
                received_ns,
                window_ns,
                share: received_ns / window_ns.max(1.0),
                kernel_cpu_ns: outcomes
                    .iter()
                    .find(|o| o.index == i)
                    .map_or(0.0, |o| o.cpu_time_ns as f64),
                migrations: t.migrations(i),
                share_among_peers: peers(exp, i).map(|p| {
                    let all: f64 = p.iter().map(|&j| tb.ns(t.received(j))).sum();
                    received_ns / all.max(1.0)
                }),
                expected_share: expected(exp, i),
            }
        })
        .collect()
}

/// The threads pinned to the same single CPU as thread `i` (itself included), if it is pinned
/// to one and has company there.
fn peers(exp: &Experiment, i: usize) -> Option<Vec<usize>> {
    let cpu = match exp.threads[i].affinity.as_deref() {
        Some([c]) => *c,
        _ => return None,
    };
    let p: Vec<usize> = (0..exp.threads.len())
        .filter(|&j| exp.threads[j].affinity.as_deref() == Some(&[cpu][..]))
        .collect();
    (p.len() >= 2).then_some(p)
}

/// Weight share of thread `i` among the Hourglass threads competing with it, if there are
/// such and they all are never-blocking SCHED_OTHER/SCHED_IDLE threads pinned to the same
/// single CPU with the same window.
fn expected(exp: &Experiment, i: usize) -> Option<f64> {
    let me = &exp.threads[i];
    let cpu = match me.affinity.as_deref() {
        Some([c]) => *c,
        _ => return None,
    };
    let window = me.window(exp.duration);
    let peers: Vec<_> = exp
        .threads
        .iter()
        .filter(|t| t.affinity.as_deref().is_some_and(|a| a.contains(&cpu)))
        .collect();
    let comparable = peers.iter().all(|t| {
        t.affinity.as_deref() == Some(&[cpu][..])
            && t.window(exp.duration) == window
            && !t.workload.blocks()
            && priority::weight(t.priority).is_some()
    });
    if !comparable || peers.len() < 2 {
        return None;
    }
    let total: f64 = peers
        .iter()
        .filter_map(|t| priority::weight(t.priority))
        .sum();
    Some(priority::weight(me.priority)? / total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{GapChoice, Priority, ThreadSpec, Workload};
    use std::time::Duration;

    fn exp(threads: Vec<ThreadSpec>) -> Experiment {
        Experiment {
            duration: Duration::from_secs(1),
            threads,
            records: 10,
            gap: GapChoice::Auto { factor: 10.0 },
            deep_idle: false,
        }
    }

    #[test]
    fn weights_apply_only_to_comparable_threads() {
        let on1 = |p| ThreadSpec {
            priority: p,
            affinity: Some(vec![1]),
            ..Default::default()
        };
        let e = exp(vec![
            on1(Priority::NORMAL),
            on1(Priority::NORMAL),
            on1(Priority::LOW),
        ]);
        let a = expected(&e, 0).unwrap();
        assert!((a - 1024.0 / (2048.0 + 1024.0 / 1.25f64.powi(10))).abs() < 1e-9);
        // A real-time peer: no weight comparison.
        let e = exp(vec![on1(Priority::NORMAL), on1(Priority::RTLOW)]);
        assert_eq!(expected(&e, 0), None);
        // A blocking peer: neither.
        let mut p = on1(Priority::NORMAL);
        p.workload = Workload::CpuYield {
            amount: Duration::from_millis(1),
        };
        assert_eq!(expected(&exp(vec![on1(Priority::NORMAL), p]), 0), None);
        // Not pinned, or alone: none.
        assert_eq!(expected(&exp(vec![ThreadSpec::default()]), 0), None);
        assert_eq!(expected(&exp(vec![on1(Priority::NORMAL)]), 0), None);
    }
}
