//! The reader of the syscall records: drains the ring buffers, pairs each sys_exit with its
//! thread's sys_enter, and keeps per call number the statistics (count, durations, errno, bytes)
//! and every paired call in the run's journal (for the views).

use std::collections::{BTreeMap, HashMap};

use crate::perf::records::event::{Journal, ProbeEvent};
use crate::perf::records::pairing::{Costs, Paired, Pairing};
use crate::perf::records::parse::Sample;
use crate::perf::records::ring::Ring;
use crate::perf::records::source::{RecordSource, HOLD_BACK};
use crate::perf::records::stats::Durations;

use super::select;
use super::tracepoints::LAYOUT;

/// One call number's figures.
#[derive(Debug, Clone, Default)]
pub struct CallStats {
    pub durations: Durations,
    /// errno → calls that failed with it.
    pub errors: BTreeMap<i32, u64>,
    /// Sum of the non-negative return values of byte-counting calls.
    pub bytes: u64,
    /// Calls counted without a duration (not in `durations`).
    pub untimed: u64,
}

pub struct Collector {
    source: RecordSource,
    /// Record id → entry (true) or exit.
    ids: HashMap<u64, bool>,
    pairing: Pairing<u64>,
    /// Per thread, the first argument of its open call.
    args: HashMap<u32, u64>,
    /// Call number → its journal probe, whether it counts bytes, whether it never returns.
    probes: HashMap<u64, (u32, bool, bool)>,
    batch: Vec<Sample>,
    pub stats: BTreeMap<u64, CallStats>,
    pub journal: Journal,
    /// pid → its name (from exec).
    pub names: HashMap<u32, String>,
    pub records: u64,
    pub lost: u64,
    /// Exits without a recorded entry (the exec that started the program, lost records).
    pub orphans: u64,
    /// Entries without an exit at the end, per call (calls cut by the end of the run).
    pub unfinished: BTreeMap<String, u64>,
}

/// A return value in -4095..=-1 is an errno (the kernel's convention for every call).
pub fn errno_of(ret: i64) -> Option<i32> {
    (-4095..0).contains(&ret).then_some((-ret) as i32)
}

impl Collector {
    /// `inside_ns`: what tracing adds to a call's measured interval, taken out of each.
    pub fn new(rings: Vec<Ring>, ids: &[(u64, bool)], inside_ns: u64) -> Collector {
        Collector {
            source: RecordSource::new(rings, LAYOUT),
            ids: ids.iter().copied().collect(),
            pairing: Pairing::new(
                Costs {
                    inside: inside_ns,
                    pair: 0,
                },
                0,
            ),
            args: HashMap::new(),
            probes: HashMap::new(),
            batch: Vec::new(),
            stats: BTreeMap::new(),
            journal: Journal::default(),
            names: HashMap::new(),
            records: 0,
            lost: 0,
            orphans: 0,
            unfinished: BTreeMap::new(),
        }
    }

    /// Reads what the buffers hold; `last`: the program has ended, everything is in.
    pub fn tick(&mut self, last: bool) {
        let now = arum_tsc::monotonic_ns();
        let watermark = (!last).then(|| now.saturating_sub(HOLD_BACK.as_nanos() as u64));
        let mut batch = std::mem::take(&mut self.batch);
        self.source
            .drain_ordered(&mut self.lost, &mut self.names, watermark, &mut batch);
        for s in batch.drain(..) {
            self.on_sample(s);
        }
        self.batch = batch;
        if last {
            for (nr, _, _) in self.pairing.open_frames() {
                *self.unfinished.entry(select::name(nr)).or_default() += 1;
            }
        }
    }

    fn on_sample(&mut self, s: Sample) {
        let Some(&enter) = self.ids.get(&s.id) else {
            return;
        };
        self.records += 1;
        let nr = s.raw[0];
        let (probe, bytes, no_return) = self.probe(nr);
        if no_return {
            // Its exit never comes (exit_group), or comes without meaning (rt_sigreturn's carries
            // the interrupted call's state).
            if enter {
                self.stats.entry(nr).or_default().durations.record(0);
            }
            return;
        }
        if enter {
            self.args.insert(s.tid, s.raw[1]);
            self.pairing.enter(s.tid, nr, s.time, 0);
            return;
        }
        let ret = s.raw[1] as i64;
        let mut call = None;
        let mut orphan = false;
        self.pairing.leave(s.tid, nr, s.time, 0, &mut |p| match p {
            Paired::Call {
                start, inclusive, ..
            } => call = Some((start, inclusive)),
            Paired::Orphan { .. } => orphan = true,
            Paired::Unwound { .. } => {}
        });
        if orphan {
            self.orphans += 1;
        }
        let Some((start, duration)) = call else {
            return;
        };
        let st = self.stats.entry(nr).or_default();
        st.durations.record(duration);
        match errno_of(ret) {
            Some(e) => *st.errors.entry(e).or_default() += 1,
            None if ret > 0 && bytes => st.bytes += ret as u64,
            None => {}
        }
        self.journal.push(ProbeEvent {
            probe,
            pid: s.pid,
            tid: s.tid,
            start,
            duration,
            arg: self.args.remove(&s.tid).unwrap_or(0),
            ret,
            syscall: true,
        });
    }
}

impl Collector {
    fn probe(&mut self, nr: u64) -> (u32, bool, bool) {
        if let Some(&p) = self.probes.get(&nr) {
            return p;
        }
        let name = select::name(nr);
        let p = (
            self.journal.probe(&name),
            select::counts_bytes(&name),
            select::no_return(&name),
        );
        self.probes.insert(nr, p);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errnos_are_the_kernels_negative_range() {
        assert_eq!(errno_of(-2), Some(2));
        assert_eq!(errno_of(-4095), Some(4095));
        assert_eq!(errno_of(-4096), None);
        assert_eq!(errno_of(0), None);
        assert_eq!(errno_of(4096), None);
    }
}
