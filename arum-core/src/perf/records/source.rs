//! A set of ring buffers (one per CPU) read together. Each buffer is in time order, but a thread
//! that moves between CPUs writes its records into several, so samples are released in time order
//! only up to a watermark: a record not seen yet was being written after the drain began, so it
//! is later than the drain's start minus the time a write can take (the writer is the probed thread
//! itself, in the kernel with preemption off). Records of one thread are therefore released in
//! their order, which is all pairing needs.

use std::collections::HashMap;
use std::time::Duration;

use super::parse::{parse, Layout, Record, Sample};
use super::ring::Ring;

/// How far behind the drain's start samples are held back: far longer than a record takes to
/// write (microseconds), with room for a virtual CPU the host pauses for a moment.
pub const HOLD_BACK: Duration = Duration::from_millis(1);

pub struct RecordSource {
    rings: Vec<Ring>,
    layout: Layout,
    scratch: Vec<u8>,
    pending: Vec<Sample>,
    /// Bytes read so far (for the report's reader statistics).
    pub bytes: u64,
}

impl RecordSource {
    /// `layout`: what the samples carry (a `bool`: the stack pointer).
    pub fn new(rings: Vec<Ring>, layout: impl Into<Layout>) -> RecordSource {
        RecordSource {
            rings,
            layout: layout.into(),
            scratch: Vec::with_capacity(1 << 16),
            pending: Vec::new(),
            bytes: 0,
        }
    }

    /// Reads every buffer; records other than samples (lost notices, task names, forks and
    /// exits) go to `notice` at once, samples wait for [`Self::release`]. Returns the number of
    /// bytes read.
    pub fn drain(&mut self, mut notice: impl FnMut(Record)) -> u64 {
        let before = self.bytes;
        for ring in &mut self.rings {
            self.scratch.clear();
            self.bytes += ring.drain(&mut self.scratch) as u64;
            let pending = &mut self.pending;
            parse(&self.scratch, self.layout, |r| match r {
                Record::Sample(s) => pending.push(s),
                other => notice(other),
            });
        }
        self.bytes - before
    }

    /// One reader round: drains every buffer, counting lost records into `lost` and noting the
    /// names processes take (exec) in `names`, then moves into `out`, in time order, the samples
    /// older than `watermark` (every sample with `None`). Returns the number of bytes read.
    pub fn drain_ordered(
        &mut self,
        lost: &mut u64,
        names: &mut HashMap<u32, String>,
        watermark: Option<u64>,
        out: &mut Vec<Sample>,
    ) -> u64 {
        let read = self.drain(|n| match n {
            Record::Lost { count } => *lost += count,
            Record::Comm { pid, tid, name } if pid == tid => {
                names.insert(pid, name);
            }
            _ => {}
        });
        self.release(watermark, |s| out.push(s));
        read
    }

    /// Hands out, in time order, the samples older than `watermark` (every sample with `None`).
    pub fn release(&mut self, watermark: Option<u64>, mut f: impl FnMut(Sample)) {
        release_ordered(&mut self.pending, watermark, &mut f);
    }

    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

/// Sorts `pending` by time (stable: records of equal time keep their buffer order) and hands
/// out those older than `watermark`, keeping the rest.
fn release_ordered(pending: &mut Vec<Sample>, watermark: Option<u64>, f: &mut impl FnMut(Sample)) {
    pending.sort_by_key(|s| s.time);
    let cut = match watermark {
        Some(w) => pending.partition_point(|s| s.time < w),
        None => pending.len(),
    };
    for s in pending.drain(..cut) {
        f(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(tid: u32, time: u64) -> Sample {
        Sample {
            id: 1,
            pid: 1,
            tid,
            time,
            cpu: 0,
            sp: 0,
            raw: [0; 2],
        }
    }

    #[test]
    fn samples_from_several_buffers_come_out_in_time_order_up_to_the_watermark() {
        // Buffer of CPU 0 then CPU 1, as drained: each in order, interleaved in time.
        let mut pending = vec![s(1, 10), s(1, 40), s(2, 20), s(2, 50), s(1, 30)];
        let mut out = Vec::new();
        release_ordered(&mut pending, Some(45), &mut |x| out.push(x.time));
        assert_eq!(out, [10, 20, 30, 40]);
        assert_eq!(pending, [s(2, 50)]);
        // A later drain brings an older record of another CPU: still before 50.
        pending.push(s(1, 48));
        release_ordered(&mut pending, None, &mut |x| out.push(x.time));
        assert_eq!(out, [10, 20, 30, 40, 48, 50]);
    }
}
