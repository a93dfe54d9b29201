//! The trace's intervals ordered two ways: per CPU (who ran after whom there) and per thread.
//! Consecutive intervals on one CPU are either the same thread resuming (the gap was taken by
//! something outside Hourglass) or a different thread (a context switch happened in the gap).

use std::collections::BTreeMap;

use crate::trace::{End, Interval, Record};

pub struct Timeline {
    pub by_cpu: BTreeMap<u16, Vec<Interval>>,
    pub by_thread: Vec<Vec<Interval>>,
}

/// A gap between two consecutive intervals on one CPU, in ticks.
#[derive(Debug, Clone, Copy)]
pub struct CpuGap {
    pub before: Interval,
    pub after: Interval,
}

impl CpuGap {
    pub fn ticks(&self) -> u64 {
        self.after.start.saturating_sub(self.before.end)
    }

    /// The same thread resumed: nothing else of Hourglass ran in the gap.
    pub fn is_own(&self) -> bool {
        self.before.thread == self.after.thread
    }
}

impl Timeline {
    pub fn new(records: &[Record], threads: usize) -> Timeline {
        let mut by_cpu: BTreeMap<u16, Vec<Interval>> = BTreeMap::new();
        let mut by_thread = vec![Vec::new(); threads];
        for r in records {
            if let Record::Interval(i) = r {
                by_cpu.entry(i.cpu).or_default().push(*i);
                if let Some(t) = by_thread.get_mut(i.thread as usize) {
                    t.push(*i);
                }
            }
        }
        for v in by_cpu.values_mut().chain(by_thread.iter_mut()) {
            v.sort_by_key(|i| i.start);
        }
        Timeline { by_cpu, by_thread }
    }

    /// Every gap between consecutive intervals on each CPU, where the first interval ended
    /// because the thread lost the CPU or gave it up (not at its finish).
    pub fn cpu_gaps(&self) -> impl Iterator<Item = CpuGap> + '_ {
        self.by_cpu.values().flat_map(|v| {
            v.windows(2)
                .filter(|w| w[0].ended != End::Finish && w[1].start >= w[0].end)
                .map(|w| CpuGap {
                    before: w[0],
                    after: w[1],
                })
        })
    }

    /// Ticks a thread ran, summed over its intervals.
    pub fn received(&self, thread: usize) -> u64 {
        self.by_thread
            .get(thread)
            .map_or(0, |v| v.iter().map(|i| i.end - i.start).sum())
    }

    /// Times a thread's consecutive intervals were on different CPUs.
    pub fn migrations(&self, thread: usize) -> usize {
        self.by_thread
            .get(thread)
            .map_or(0, |v| v.windows(2).filter(|w| w[0].cpu != w[1].cpu).count())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::clock::Timebase;

    /// A time base whose ticks are nanoseconds.
    pub fn ns_timebase() -> Timebase {
        Timebase {
            tsc0: 0,
            mono0_ns: 0,
            hz: 1e9,
        }
    }

    pub fn iv(thread: u16, cpu: u16, start: u64, end: u64, ended: End) -> Record {
        Record::Interval(Interval {
            thread,
            cpu,
            start,
            end,
            ended,
        })
    }

    #[test]
    fn gaps_are_paired_per_cpu() {
        let g = End::Gap { switched: true };
        let recs = [
            iv(0, 1, 0, 100, g),
            iv(1, 1, 105, 200, g),
            iv(0, 1, 210, 300, End::Finish),
            iv(1, 0, 400, 500, End::Finish),
        ];
        let t = Timeline::new(&recs, 2);
        let gaps: Vec<(u16, u16, u64)> = t
            .cpu_gaps()
            .map(|g| (g.before.thread, g.after.thread, g.ticks()))
            .collect();
        assert_eq!(gaps, vec![(0, 1, 5), (1, 0, 10)]);
        assert_eq!(t.received(0), 190);
        assert_eq!(t.migrations(1), 1);
    }
}
