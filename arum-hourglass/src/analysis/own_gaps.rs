//! Gaps within one thread's execution: the thread resumed on the same CPU with no other
//! Hourglass thread in between, so something outside Hourglass took the CPU. The paper infers
//! that gaps in a never-blocking, highest-priority thread are interrupts and kernel work
//! (bottom halves); here each gap is also checked against the thread's own context-switch count:
//! unchanged means no task ran (interrupts, softirqs, the hypervisor), changed means another
//! task did.

use serde::{Deserialize, Serialize};

use super::stats::Summary;
use super::tick::{self, Tick};
use super::timeline::Timeline;
use crate::clock::Timebase;
use crate::trace::End;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnGaps {
    pub thread: usize,
    /// Gaps with no context switch: interrupts, kernel work, the hypervisor.
    pub interrupts: Option<Summary>,
    pub interrupts_per_second: f64,
    /// Share of the thread's active window lost to them.
    pub interrupt_share: f64,
    /// Gaps during which another task (outside Hourglass) ran.
    pub other_tasks: Option<Summary>,
    /// Periodic sources among all the gaps that ended this thread's intervals, the most
    /// populated first.
    pub ticks: Vec<Tick>,
    /// The lattice at the kernel's tick period, when the kernel's HZ is known and the gaps hold
    /// to it beyond chance once the other sources are set aside.
    pub at_kernel_hz: Option<Tick>,
}

/// Per thread that records intervals. `windows_ns[i]`: thread i's active window.
pub fn analyse(
    t: &Timeline,
    tb: &Timebase,
    windows_ns: &[f64],
    kernel_hz: Option<u32>,
) -> Vec<OwnGaps> {
    let mut irq: Vec<Vec<f64>> = vec![Vec::new(); t.by_thread.len()];
    let mut tasks: Vec<Vec<f64>> = vec![Vec::new(); t.by_thread.len()];
    for g in t.cpu_gaps().filter(|g| g.is_own()) {
        let th = g.before.thread as usize;
        match g.before.ended {
            End::Gap { switched: false } => irq[th].push(tb.ns(g.ticks())),
            End::Gap { switched: true } => tasks[th].push(tb.ns(g.ticks())),
            _ => {}
        }
    }
    (0..t.by_thread.len())
        .filter(|&th| !t.by_thread[th].is_empty())
        .map(|th| {
            let window = windows_ns.get(th).copied().unwrap_or(0.0).max(1.0);
            let interrupts = Summary::of(&irq[th]);
            let gaps: Vec<tick::Gap> = t.by_thread[th]
                .windows(2)
                .filter(|w| matches!(w[0].ended, End::Gap { .. }))
                .map(|w| tick::Gap {
                    at_ns: tb.since_ns(w[0].end),
                    len_ns: tb.ns(w[1].start.saturating_sub(w[0].end)),
                })
                .collect();
            let sources = tick::infer(
                &gaps,
                tb.ns(t.received(th)),
                kernel_hz.map(|hz| 1e9 / hz as f64),
            );
            OwnGaps {
                thread: th,
                interrupts_per_second: irq[th].len() as f64 / (window / 1e9),
                interrupt_share: interrupts.map_or(0.0, |s| s.total_ns / window),
                interrupts,
                other_tasks: Summary::of(&tasks[th]),
                ticks: sources.found,
                at_kernel_hz: sources.at_hint,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::timeline::tests::iv;
    use super::*;

    #[test]
    fn interrupts_and_other_tasks_are_told_apart() {
        let tb = super::super::timeline::tests::ns_timebase();
        let recs = [
            iv(0, 0, 0, 1000, End::Gap { switched: false }),
            iv(0, 0, 1005, 2000, End::Gap { switched: true }),
            iv(0, 0, 2500, 3000, End::Gap { switched: false }),
            iv(0, 0, 3007, 4000, End::Finish),
        ];
        let t = Timeline::new(&recs, 1);
        let g = &analyse(&t, &tb, &[4000.0], Some(250))[0];
        let irq = g.interrupts.unwrap();
        assert_eq!((irq.count, irq.min_ns, irq.max_ns), (2, 5.0, 7.0));
        assert_eq!(g.other_tasks.unwrap().total_ns, 500.0);
        assert!((g.interrupt_share - 12.0 / 4000.0).abs() < 1e-12);
        assert!(g.ticks.is_empty() && g.at_kernel_hz.is_none());
    }
}
