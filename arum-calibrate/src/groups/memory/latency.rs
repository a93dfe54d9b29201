//! Memory latency by pointer chasing: the buffer's 64-byte lines form one random cycle, each
//! line holding the index of the next, so every load depends on the one before and no
//! prefetcher can guess the next address. The latency per load against the buffer size is a
//! curve whose steps are the cache levels.

use nix::sys::mman::MmapAdvise;

use crate::clock::unpreempted;
use crate::context::{skipped, Context, Entry, Sink, Taken};
use crate::groups::memory::caches;
use crate::model::findings::Reported;
use crate::model::Unit;
use crate::sys::memory::Mapping;

pub const LATENCY: Entry = Entry::new(
    "memory.latency",
    "load latency by buffer size",
    "Pointer chasing through a buffer whose 64-byte lines form one random cycle (Sattolo's \
     shuffle), so each load depends on the previous and defeats prefetching; ns per load, for \
     sizes from 1 KiB up on a log scale, swept 3 times (2 with --quick) and merged, in \
     transparent huge pages where the kernel allows so that TLB misses do not blur the levels.",
    Unit::Ns,
);

const LINE: usize = 64;
const WORDS_PER_LINE: usize = LINE / 8;
const HUGE: usize = 2 << 20;

/// Buffer sizes of the curve: powers of two from 1 KiB (`--quick`: to 64 MiB), and in the full
/// suite also the 1.5x points between them, up to 512 MiB; never beyond `budget` bytes.
pub fn sizes(quick: bool, budget: u64) -> Vec<u64> {
    let top = if quick { 26 } else { 29 };
    let mut v = Vec::new();
    for k in 10..=top {
        let s = 1u64 << k;
        if s > budget {
            break;
        }
        v.push(s);
        if !quick && k < top && k >= 11 && s + s / 2 <= budget {
            v.push(s + s / 2);
        }
    }
    v
}

pub fn label(size: u64) -> String {
    if size % (1 << 20) == 0 {
        format!("{}MiB", size >> 20)
    } else {
        format!("{}KiB", size >> 10)
    }
}

/// Writes a single random cycle over `lines` lines into `words` (the index of the next line's
/// first word at each line's first word).
pub fn build_cycle(words: &mut [u64], lines: usize, rng: &mut fastrand::Rng) {
    for x in 0..lines {
        words[x * WORDS_PER_LINE] = x as u64;
    }
    // Sattolo's algorithm: swapping each position only with an earlier one yields a
    // permutation that is one cycle through every line.
    for i in (1..lines).rev() {
        let j = rng.usize(0..i);
        words.swap(i * WORDS_PER_LINE, j * WORDS_PER_LINE);
    }
    for x in 0..lines {
        words[x * WORDS_PER_LINE] *= WORDS_PER_LINE as u64;
    }
}

/// Follows the cycle for `steps` loads from word `start`; returns where it ended, where the
/// next sample goes on, so that successive samples walk the whole cycle (a buffer larger than
/// one sample's loads must not shrink to the part the first sample touched).
#[inline(never)]
pub fn chase(words: &[u64], start: usize, steps: usize) -> usize {
    let mut i = start;
    for _ in 0..steps / 4 {
        i = words[i] as usize;
        i = words[i] as usize;
        i = words[i] as usize;
        i = words[i] as usize;
    }
    i
}

/// Measures the latency curve within `budget` bytes of memory and finds the cache levels in it.
pub fn run(ctx: &mut Context, sink: &mut Sink, reported: &Reported, budget: u64) {
    if !ctx.wants(&LATENCY) {
        return;
    }
    let sizes = sizes(ctx.quick(), budget);
    let largest = *sizes.last().unwrap_or(&(1 << 20)) as usize;
    let mut map = match Mapping::anonymous(largest + HUGE) {
        Ok(m) => m,
        Err(e) => {
            sink.measurements
                .push(skipped(&LATENCY, None, format!("mmap: {e}")));
            ctx.finished(&LATENCY);
            return;
        }
    };
    let huge = map.advise(MmapAdvise::MADV_HUGEPAGE).is_ok() && thp_mode() != "never";
    // Start at a 2 MiB boundary so that huge pages can back the buffer from its first byte.
    let words_all = map.words_mut();
    let skip = (HUGE - (words_all.as_ptr() as usize % HUGE)) % HUGE / 8;
    let words = &mut words_all[skip..skip + largest / 8];
    words.fill(0); // fault every page in now, not during a measurement

    // The sizes are swept several times and each size's samples merged: what the rest of the
    // machine does to a shared cache drifts over seconds, and a single sweep would write that
    // drift into the curve as a step. The spread of a size's per-sweep medians says how much
    // the machine moved it.
    let passes = if ctx.quick() { 2 } else { 3 };
    let swept = sweep(ctx, words, &sizes, passes);
    let points = record(ctx, sink, &sizes, swept);
    drop(map);
    let detected = caches::detect(&points, reported.data_levels().len().max(1));
    sink.findings.caches = Some(caches::findings(
        reported,
        detected,
        largest as u64,
        huge,
        thp_mode(),
    ));
    ctx.finished(&LATENCY);
}

/// What the sweeps took of each size: the samples merged with each sweep's median, how many
/// preempted samples were taken again, or why the size could not be measured.
struct Swept {
    taken: Vec<Option<(Taken, Vec<f64>)>>,
    retaken: Vec<usize>,
    failed: Vec<Option<String>>,
}

/// Sweeps every size `passes` times through `words`, a new cycle for each size and sweep.
fn sweep(ctx: &mut Context, words: &mut [u64], sizes: &[u64], passes: usize) -> Swept {
    let clock = ctx.clock.clone();
    let mut rng = fastrand::Rng::with_seed(0x5eed_1a7e);
    let mut taken: Vec<Option<(Taken, Vec<f64>)>> = (0..sizes.len()).map(|_| None).collect();
    let mut retaken = vec![0usize; sizes.len()];
    let mut failed: Vec<Option<String>> = vec![None; sizes.len()];
    for pass in 0..passes {
        for (i, &size) in sizes.iter().enumerate() {
            if failed[i].is_some() {
                continue;
            }
            let lines = size as usize / LINE;
            build_cycle(words, lines, &mut rng);
            // Up to 2^16 loads per sample: 20 ms at the latency of memory in a VM, short
            // enough to run between other processes' turns; a preempted sample is taken again.
            let steps = lines.clamp(1 << 14, 1 << 16);
            let l = ctx.limits((passes - pass) * sizes.len() - i);
            let buf: &[u64] = words;
            let name = format!("{}.{} (sweep {})", LATENCY.name, label(size), pass + 1);
            let mut at = 0;
            let r = ctx.take(&name, &l, |s| {
                let (ns, p) = unpreempted(3, || {
                    let t0 = arum_tsc::begin();
                    at = std::hint::black_box(chase(buf, at, steps));
                    let t1 = arum_tsc::end();
                    clock.elapsed_ns(t0, t1) / steps as f64
                });
                retaken[i] += p;
                s.push(ns);
                Ok::<_, String>(())
            });
            match r {
                Ok(t) => merge(&mut taken[i], t),
                Err(e) => failed[i] = Some(e),
            }
        }
    }
    Swept {
        taken,
        retaken,
        failed,
    }
}

/// A measurement of each size from its sweeps; returns the curve: each measured size with its
/// median latency.
fn record(ctx: &mut Context, sink: &mut Sink, sizes: &[u64], mut swept: Swept) -> Vec<(u64, f64)> {
    let mut points = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        let lines = size as usize / LINE;
        let steps = lines.clamp(1 << 14, 1 << 16) as u64;
        let suffix = label(size);
        let mut m = match (swept.taken[i].take(), swept.failed[i].take()) {
            (_, Some(e)) => skipped(&LATENCY, Some(&suffix), e),
            (None, None) => skipped(&LATENCY, Some(&suffix), "not measured"),
            (Some((t, medians)), None) => {
                let mut m = ctx.record(&LATENCY, Some(&suffix), steps, t);
                let (lo, hi) = medians
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
                m.details.insert("sweeps".into(), medians.len() as f64);
                m.details.insert("sweep_median_low_ns".into(), lo);
                m.details.insert("sweep_median_high_ns".into(), hi);
                m
            }
        };
        m.details
            .insert("preempted_samples_retaken".into(), swept.retaken[i] as f64);
        m.details.insert("size_bytes".into(), size as f64);
        if let Some(s) = &m.summary {
            points.push((size, s.median));
        }
        sink.measurements.push(m);
    }
    points
}

/// Adds one sweep's samples of a size to what the earlier sweeps took, keeping each sweep's
/// median.
fn merge(acc: &mut Option<(Taken, Vec<f64>)>, t: Taken) {
    if t.outcome.samples.is_empty() {
        return;
    }
    let median = crate::stats::Summary::of(&t.outcome.samples).median;
    match acc {
        None => *acc = Some((t, vec![median])),
        Some((a, medians)) => {
            a.outcome.samples.extend(t.outcome.samples);
            a.outcome.elapsed += t.outcome.elapsed;
            // Converged only if every sweep did.
            if t.outcome.stop != crate::stats::repeat::Stop::Converged {
                a.outcome.stop = t.outcome.stop;
            }
            a.other_load = match (a.other_load, t.other_load) {
                (Some(x), Some(y)) => Some(x.max(y)),
                (x, y) => x.or(y),
            };
            medians.push(median);
        }
    }
}

/// The kernel's transparent-huge-page mode (`always`, `madvise` or `never`).
pub fn thp_mode() -> String {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .ok()
        .and_then(|s| {
            let a = s.find('[')?;
            let b = s[a..].find(']')?;
            Some(s[a + 1..a + b].to_string())
        })
        .unwrap_or_else(|| "unavailable".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chase_visits_every_line_once_per_cycle() {
        let lines = 1000;
        let mut words = vec![0u64; lines * WORDS_PER_LINE];
        build_cycle(&mut words, lines, &mut fastrand::Rng::with_seed(7));
        let mut seen = vec![false; lines];
        let mut i = 0usize;
        for _ in 0..lines {
            assert!(
                !seen[i / WORDS_PER_LINE],
                "line {} visited twice",
                i / WORDS_PER_LINE
            );
            seen[i / WORDS_PER_LINE] = true;
            i = words[i] as usize;
        }
        assert_eq!(i, 0, "the cycle closes after exactly `lines` steps");
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn successive_chases_walk_the_whole_cycle() {
        let lines = 4096;
        let mut words = vec![0u64; lines * WORDS_PER_LINE];
        build_cycle(&mut words, lines, &mut fastrand::Rng::with_seed(9));
        let mut seen = std::collections::HashSet::new();
        let mut at = 0;
        for _ in 0..lines / 256 {
            at = chase(&words, at, 256);
            seen.insert(at);
        }
        // Each 256-load sample ended somewhere new: none restarted from line 0.
        assert_eq!(seen.len(), lines / 256);
        assert_eq!(at, 0, "after a whole cycle the walk is back at its start");
    }

    #[test]
    fn sizes_are_a_log_scale_within_the_budget() {
        let q = sizes(true, u64::MAX);
        assert_eq!((q[0], *q.last().unwrap(), q.len()), (1024, 64 << 20, 17));
        let full = sizes(false, u64::MAX);
        assert_eq!(*full.last().unwrap(), 512 << 20);
        assert!(full.windows(2).all(|w| w[1] > w[0] && w[1] <= 2 * w[0]));
        assert!(sizes(false, 10 << 20).iter().all(|&s| s <= 10 << 20));
        assert_eq!(label(3 << 10), "3KiB");
        assert_eq!(label(384 << 20), "384MiB");
    }
}
