//! Memory bandwidth: sequential read, write and copy of a buffer larger than the last cache
//! level, by one CPU and by every CPU at once.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

use crate::clock::unpreempted;
use crate::context::{Context, Entry, Sink};
use crate::model::Unit;
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
     buffer, started together; bytes of all threads from the first start to the last end, a \
     sample taken again unless the threads ran together unpreempted.";

pub const ENTRIES: [Entry; 6] = [
    Entry::new(
        "memory.bandwidth.read.1cpu",
        "read bandwidth, one CPU",
        READ,
        Unit::BytesPerS,
    ),
    Entry::new(
        "memory.bandwidth.write.1cpu",
        "write bandwidth, one CPU",
        WRITE,
        Unit::BytesPerS,
    ),
    Entry::new(
        "memory.bandwidth.memcpy.1cpu",
        "memcpy bandwidth, one CPU",
        COPY,
        Unit::BytesPerS,
    ),
    Entry::new(
        "memory.bandwidth.read.all_cpus",
        "read bandwidth, all CPUs",
        ALL,
        Unit::BytesPerS,
    ),
    Entry::new(
        "memory.bandwidth.write.all_cpus",
        "write bandwidth, all CPUs",
        ALL,
        Unit::BytesPerS,
    ),
    Entry::new(
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

/// Measures the bandwidths with a buffer sized by the last-level cache `llc`, within `budget`
/// bytes of memory.
pub fn run(ctx: &mut Context, sink: &mut Sink, llc: Option<u64>, budget: u64) {
    let wanted: Vec<(usize, &Entry)> = ENTRIES
        .iter()
        .enumerate()
        .filter(|(_, e)| ctx.wants(e))
        .collect();
    if wanted.is_empty() {
        return;
    }
    let bytes = buffer_bytes(ctx.quick(), llc, budget) as usize;
    let cpus = ctx.cpus.clone();
    let mut map = match Mapping::anonymous(bytes) {
        Ok(m) => m,
        Err(e) => {
            let entries: Vec<&Entry> = wanted.iter().map(|(_, e)| *e).collect();
            ctx.skip(sink, &entries, &format!("mmap of {bytes} bytes: {e}"));
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

/// One pinned worker per CPU, each on its own slice of the buffer. Each worker records when its
/// part of a sample began and ended (CLOCK_MONOTONIC, the same on every CPU) and whether it was
/// preempted; a sample counts only when the workers ran together (their intervals overlap by
/// 80% of the whole) and none was preempted, else it is taken again (up to five times a
/// round; a round without one adds nothing). On a busy machine a worker may wait for its CPU after the start; the others then run alone and
/// the sum would not be the bandwidth of all CPUs at once.
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
    let runs: Vec<Mutex<Option<WorkerRun>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for ((cpu, chunk), slot) in cpus.iter().zip(words.chunks_mut(per)).zip(&runs) {
            let (start, done, stop) = (&start, &done, &stop);
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
                    let t0 = Instant::now();
                    let bytes = sample(kind, chunk, i);
                    let t1 = Instant::now();
                    let run = WorkerRun {
                        t0,
                        t1,
                        bytes,
                        preempted: thread_preemptions() != before,
                    };
                    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(run);
                    done.wait();
                }
            });
        }
        let mut retaken = 0;
        let mut m = ctx.measure(entry, None, 1, limits, |s| {
            for _ in 0..5 {
                start.wait();
                done.wait();
                let got: Vec<WorkerRun> = runs
                    .iter()
                    .filter_map(|r| r.lock().unwrap_or_else(|e| e.into_inner()).take())
                    .collect();
                match combine(&got) {
                    (rate, true) => {
                        s.push(rate);
                        break;
                    }
                    _ => retaken += 1,
                }
            }
            Ok::<_, String>(())
        });
        stop.store(true, Ordering::Release);
        start.wait();
        m.details
            .insert("preempted_samples_retaken".into(), retaken as f64);
        m
    })
}

/// One worker's part of a sample.
struct WorkerRun {
    t0: Instant,
    t1: Instant,
    bytes: u64,
    preempted: bool,
}

/// The workers' bytes over the span from the first start to the last end, and whether they
/// ran together undisturbed.
fn combine(runs: &[WorkerRun]) -> (f64, bool) {
    let (Some(first), Some(last)) = (
        runs.iter().map(|r| r.t0).min(),
        runs.iter().map(|r| r.t1).max(),
    ) else {
        return (0.0, false);
    };
    let latest_start = runs.iter().map(|r| r.t0).max().unwrap_or(first);
    let earliest_end = runs.iter().map(|r| r.t1).min().unwrap_or(last);
    let span = last.duration_since(first).as_secs_f64().max(1e-9);
    let common = earliest_end
        .saturating_duration_since(latest_start)
        .as_secs_f64();
    let bytes: u64 = runs.iter().map(|r| r.bytes).sum();
    let together = common >= 0.8 * span && !runs.iter().any(|r| r.preempted);
    (bytes as f64 / span, together)
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
    fn workers_that_did_not_run_together_do_not_make_a_sample() {
        let t = Instant::now();
        let ms = std::time::Duration::from_millis;
        let run = |a: u64, b: u64| WorkerRun {
            t0: t + ms(a),
            t1: t + ms(b),
            bytes: 1_000_000,
            preempted: false,
        };
        let (rate, together) = combine(&[run(0, 10), run(1, 10)]);
        assert!(together);
        assert!((rate - 2e6 / 0.010).abs() < 1.0);
        // The second worker got its CPU only when the first had finished.
        assert!(!combine(&[run(0, 10), run(9, 19)]).1);
        let mut p = run(0, 10);
        p.preempted = true;
        assert!(!combine(&[p, run(0, 10)]).1);
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
