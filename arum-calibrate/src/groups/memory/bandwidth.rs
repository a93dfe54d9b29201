//! Memory bandwidth: sequential read, write and copy of a buffer larger than the last cache
//! level, by one CPU and by every CPU at once.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

use crate::model::Unit;
use crate::suite::{skipped, Context, Entry, Sink};
use crate::sys::cpu::{pin_thread, Pinned};
use crate::sys::memory::Mapping;

const READ: &str = "Sequential reads of 64-bit words with eight independent sums (vectorised), \
     over a buffer at least 4x the last cache level (2x with --quick), one pass per sample.";
const WRITE: &str = "memset (the C library's, as programs write memory) of a buffer at least 4x \
     the last cache level, one pass per sample.";
const COPY: &str = "memcpy of one half of the buffer into the other, bytes copied per second \
     (each byte is read and written), one pass per sample.";
const ALL: &str = " All CPUs: one pinned thread per CPU on its own part of the buffer, started \
     together; bytes of all threads over the time until the last finished.";

pub const ENTRIES: [Entry; 6] = [
    super::entry(
        "memory.bandwidth.read.1cpu",
        "read bandwidth, one CPU",
        READ,
        Unit::BytesPerS,
    ),
    super::entry(
        "memory.bandwidth.write.1cpu",
        "write bandwidth, one CPU",
        WRITE,
        Unit::BytesPerS,
    ),
    super::entry(
        "memory.bandwidth.memcpy.1cpu",
        "memcpy bandwidth, one CPU",
        COPY,
        Unit::BytesPerS,
    ),
    super::entry(
        "memory.bandwidth.read.all_cpus",
        "read bandwidth, all CPUs",
        ALL,
        Unit::BytesPerS,
    ),
    super::entry(
        "memory.bandwidth.write.all_cpus",
        "write bandwidth, all CPUs",
        ALL,
        Unit::BytesPerS,
    ),
    super::entry(
        "memory.bandwidth.memcpy.all_cpus",
        "memcpy bandwidth, all CPUs",
        ALL,
        Unit::BytesPerS,
    ),
];

#[derive(Clone, Copy)]
enum Kind {
    Read,
    Write,
    Copy,
}

/// One pass of `kind` over `buf`; returns the bytes it counts.
fn pass(kind: Kind, buf: &mut [u64], round: u64) -> u64 {
    match kind {
        Kind::Read => {
            black_box(sum(buf));
            buf.len() as u64 * 8
        }
        Kind::Write => {
            let bytes: &mut [u64] = buf;
            bytes.fill(round);
            bytes.len() as u64 * 8
        }
        Kind::Copy => {
            let (a, b) = buf.split_at_mut(buf.len() / 2);
            let n = a.len().min(b.len());
            b[..n].copy_from_slice(&a[..n]);
            n as u64 * 8
        }
    }
}

/// Sum of the words with eight independent accumulators, so the loop is bound by loads, not
/// by one dependency chain of additions.
#[inline(never)]
pub fn sum(words: &[u64]) -> u64 {
    let mut acc = [0u64; 8];
    let chunks = words.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for j in 0..8 {
            acc[j] = acc[j].wrapping_add(c[j]);
        }
    }
    acc.iter().chain(rest).fold(0u64, |a, &b| a.wrapping_add(b))
}

/// The buffer size: above the last cache level by `factor`, at least 64 MiB (32 MiB quick),
/// within the memory budget.
pub fn buffer_bytes(quick: bool, llc: Option<u64>, budget: u64) -> u64 {
    let (factor, floor) = if quick { (2, 32 << 20) } else { (4, 64 << 20) };
    let want = llc.map_or(floor, |l| (l * factor).max(floor));
    want.min(budget).max(1 << 20) & !((1 << 20) - 1)
}

pub fn run(ctx: &mut Context, sink: &mut Sink, llc: Option<u64>) {
    let wanted: Vec<(usize, &Entry)> = ENTRIES
        .iter()
        .enumerate()
        .filter(|(_, e)| ctx.wants(e))
        .collect();
    if wanted.is_empty() {
        return;
    }
    let bytes = buffer_bytes(ctx.quick(), llc, super::memory_budget()) as usize;
    let cpus = ctx.cpus.clone();
    let mut map = match Mapping::anonymous(bytes) {
        Ok(m) => m,
        Err(e) => {
            for (_, e2) in wanted {
                sink.measurements
                    .push(skipped(e2, None, format!("mmap of {bytes} bytes: {e}")));
                ctx.finished(e2);
            }
            return;
        }
    };
    let words = map.words_mut();
    words.fill(1); // fault the pages in before measuring
    for (i, entry) in wanted {
        let kind = [Kind::Read, Kind::Write, Kind::Copy][i % 3];
        let all = i >= 3;
        let l = ctx.limits(1);
        let mut m = if all {
            all_cpus(ctx, entry, kind, words, &cpus, &l)
        } else {
            let _pin = Pinned::to(&cpus[..1]);
            let clock = ctx.clock.clone();
            let mut round = 0;
            ctx.measure(entry, None, 1, &l, |s| {
                round += 1;
                let t0 = arum_tsc::begin();
                let n = pass(kind, words, round);
                let t1 = arum_tsc::end();
                s.push(n as f64 / clock.elapsed_ns(t0, t1) * 1e9);
                Ok::<_, String>(())
            })
        };
        m.details.insert("buffer_bytes".into(), bytes as f64);
        if let Some(llc) = llc {
            m.details
                .insert("last_level_cache_bytes".into(), llc as f64);
        }
        if all {
            m.details.insert("threads".into(), cpus.len() as f64);
        }
        sink.measurements.push(m);
        ctx.finished(entry);
    }
}

/// One pinned worker per CPU, each on its own slice; a sample is the bytes of all of them over
/// the time from the common start to the last one's end (timed by this thread around two
/// barriers).
fn all_cpus(
    ctx: &mut Context,
    entry: &Entry,
    kind: Kind,
    words: &mut [u64],
    cpus: &[usize],
    limits: &crate::stats::repeat::Limits,
) -> crate::model::Measurement {
    let n = cpus.len();
    let per = words.len() / n / 8 * 8;
    let start = Barrier::new(n + 1);
    let done = Barrier::new(n + 1);
    let stop = AtomicBool::new(false);
    let clock = ctx.clock.clone();
    let total = (0..n)
        .map(|_| match kind {
            Kind::Copy => (per / 2) as u64 * 8,
            _ => per as u64 * 8,
        })
        .sum::<u64>();
    std::thread::scope(|scope| {
        for (cpu, chunk) in cpus.iter().zip(words.chunks_mut(per)) {
            let (start, done, stop) = (&start, &done, &stop);
            scope.spawn(move || {
                let _ = pin_thread(*cpu);
                let mut round = 0;
                loop {
                    start.wait();
                    if stop.load(Ordering::Acquire) {
                        break;
                    }
                    round += 1;
                    pass(kind, chunk, round);
                    done.wait();
                }
            });
        }
        let m = ctx.measure(entry, None, 1, limits, |s| {
            let t0 = arum_tsc::begin();
            start.wait();
            done.wait();
            let t1 = arum_tsc::end();
            s.push(total as f64 / clock.elapsed_ns(t0, t1) * 1e9);
            Ok::<_, String>(())
        });
        stop.store(true, Ordering::Release);
        start.wait();
        m
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_read_kernel_sums_every_word() {
        let v: Vec<u64> = (1..=1003).collect();
        assert_eq!(sum(&v), 1003 * 1004 / 2);
    }

    #[test]
    fn the_buffer_exceeds_the_last_level_within_the_budget() {
        assert_eq!(buffer_bytes(false, Some(32 << 20), u64::MAX), 128 << 20);
        assert_eq!(buffer_bytes(true, Some(32 << 20), u64::MAX), 64 << 20);
        assert_eq!(buffer_bytes(false, Some(1 << 20), u64::MAX), 64 << 20);
        assert_eq!(buffer_bytes(false, None, 48 << 20), 48 << 20);
    }

    #[test]
    fn a_copy_pass_copies_the_first_half_into_the_second() {
        let mut v: Vec<u64> = (0..16).collect();
        assert_eq!(pass(Kind::Copy, &mut v, 1), 64);
        assert_eq!(&v[8..], &(0..8).collect::<Vec<u64>>()[..]);
    }
}
