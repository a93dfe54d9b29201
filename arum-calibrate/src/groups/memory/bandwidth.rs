//! Memory bandwidth: sequential read, write and copy of a buffer larger than the last cache
//! level, by one CPU and by every CPU at once.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;

use crate::clock::unpreempted;
use crate::model::Unit;
use crate::suite::{skipped, Context, Entry, Sink};
use crate::sys::cpu::{pin_thread, thread_preemptions, Pinned};
use crate::sys::memory::Mapping;

const READ: &str = "Sequential reads of 64-bit words with eight independent sums (vectorised), \
     8 MiB per sample in a cyclic sweep of a buffer at least 4x the last cache level (2x with \
     --quick); a sample during which the thread was preempted is taken again.";
const WRITE: &str = "memset (the C library's, as programs write memory), 8 MiB per sample in a \
     cyclic sweep of a buffer at least 4x the last cache level.";
const COPY: &str = "memcpy of 8 MiB of one half of the buffer into the other half per sample, \
     bytes copied per second (each byte is read and written).";
const ALL: &str = "As for one CPU, with one pinned thread per CPU on its own part of the \
     buffer, started together; bytes of all threads over the time until the last finished.";

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

/// Bytes a sample moves: a part of the buffer, short enough (a millisecond or two) to run
/// between two of another process's turns, while the buffer as a whole, swept cyclically,
/// keeps every part out of the caches by the time it comes round again.
const CHUNK_WORDS: usize = (8 << 20) / 8;

/// Sample `i` of `kind` over `buf`: the i-th part of a cyclic sweep; returns the bytes counted.
fn sample(kind: Kind, buf: &mut [u64], i: usize) -> u64 {
    let w = CHUNK_WORDS.min(buf.len() / 2).max(1);
    match kind {
        Kind::Read => {
            let k = i % (buf.len() / w);
            black_box(sum(&buf[k * w..(k + 1) * w]));
            w as u64 * 8
        }
        Kind::Write => {
            let k = i % (buf.len() / w);
            buf[k * w..(k + 1) * w].fill(i as u64);
            w as u64 * 8
        }
        Kind::Copy => {
            // The i-th part of the first half into the same part of the second.
            let (a, b) = buf.split_at_mut(buf.len() / 2);
            let k = i % (a.len().min(b.len()) / w).max(1);
            b[k * w..(k + 1) * w].copy_from_slice(&a[k * w..(k + 1) * w]);
            w as u64 * 8
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
            let (mut i, mut preempted) = (0, 0);
            let mut m = ctx.measure(entry, None, 1, &l, |s| {
                let (rate, p) = unpreempted(3, || {
                    i += 1;
                    let t0 = arum_tsc::begin();
                    let n = sample(kind, words, i);
                    let t1 = arum_tsc::end();
                    n as f64 / clock.elapsed_ns(t0, t1) * 1e9
                });
                preempted += p;
                s.push(rate);
                Ok::<_, String>(())
            });
            m.details
                .insert("preempted_samples_retaken".into(), preempted as f64);
            m
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
    let moved = AtomicU64::new(0);
    let clock = ctx.clock.clone();
    // Set by a worker that was preempted during the sample.
    let preempted = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for (cpu, chunk) in cpus.iter().zip(words.chunks_mut(per)) {
            let moved = &moved;
            let (start, done, stop, preempted) = (&start, &done, &stop, &preempted);
            scope.spawn(move || {
                let _ = pin_thread(*cpu);
                let mut i = 0;
                loop {
                    start.wait();
                    if stop.load(Ordering::Acquire) {
                        break;
                    }
                    i += 1;
                    let before = thread_preemptions();
                    moved.fetch_add(sample(kind, chunk, i), Ordering::Relaxed);
                    if thread_preemptions() != before {
                        preempted.store(true, Ordering::Relaxed);
                    }
                    done.wait();
                }
            });
        }
        let mut retaken = 0;
        let mut m = ctx.measure(entry, None, 1, limits, |s| {
            // As `unpreempted`, for all the workers: up to three tries.
            let mut rate = 0.0;
            for attempt in 0..3 {
                preempted.store(false, Ordering::Relaxed);
                moved.store(0, Ordering::Relaxed);
                let t0 = arum_tsc::begin();
                start.wait();
                done.wait();
                let t1 = arum_tsc::end();
                rate = moved.load(Ordering::Relaxed) as f64 / clock.elapsed_ns(t0, t1) * 1e9;
                if !preempted.load(Ordering::Relaxed) || attempt == 2 {
                    break;
                }
                retaken += 1;
            }
            s.push(rate);
            Ok::<_, String>(())
        });
        stop.store(true, Ordering::Release);
        start.wait();
        m.details
            .insert("preempted_samples_retaken".into(), retaken as f64);
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
    fn a_copy_sample_copies_a_part_of_the_first_half_into_the_second() {
        let mut v: Vec<u64> = (0..16).collect();
        assert_eq!(sample(Kind::Copy, &mut v, 1), 64);
        assert_eq!(&v[8..], &(0..8).collect::<Vec<u64>>()[..]);
        // A large buffer is swept part by part, cyclically.
        let mut big = vec![0u64; 4 * CHUNK_WORDS];
        assert_eq!(sample(Kind::Write, &mut big, 1), CHUNK_WORDS as u64 * 8);
        assert!(big[CHUNK_WORDS] == 1 && big[0] == 0 && big[2 * CHUNK_WORDS] == 0);
        sample(Kind::Write, &mut big, 5);
        assert_eq!(big[CHUNK_WORDS], 5);
    }
}
