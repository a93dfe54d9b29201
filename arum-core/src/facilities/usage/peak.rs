//! Peak resident memory, thread and process counts of the launched tree.
//!
//! `ru_maxrss` of a child is the largest *single* process, and arum's memory, in which the child
//! runs until exec, counts towards it (exec keeps the old memory's high-water mark), so it is wrong
//! in both directions for a tree. Where the tree has a cgroup v2 group with the memory
//! controller, `memory.peak` is exact. Otherwise a sampler thread, once the program has run past
//! the launch grace, adds up the proportional set size (PSS, from smaps_rollup) of the tree's
//! processes, so pages shared between them (a compiler's text under `make -j`) count once; and
//! `ru_maxrss` counts when it exceeds the child's own high-water mark just before exec (measured,
//! not guessed), since then it is the program's own. The kernel walks every page of a process to
//! give its PSS (25 ms for 1 GiB here), so the sampler reads as little of it as it can: a tree of
//! one process needs no PSS at all (nothing is shared within it, and its VmHWM, from the cheap
//! status file, is its exact high-water mark), a larger tree gets the PSS of its largest
//! processes only (the resident size of the rest), the samples are spaced so that their cost
//! stays under 1% of the time between them (the sampler's budget, `periodic::BUDGET`), and
//! further apart while the tree's size holds.

use std::time::Duration;

use crate::facilities::usage::model::{PeakMemory, PeakMethod};
use crate::periodic::{Cadence, FirstTick, Sampler};
use crate::tree::Tree;

/// First sampling interval: short, because short programs matter too.
const FIRST_INTERVAL: Duration = Duration::from_millis(2);
/// Sampling slows down to this for long runs, to stay out of the program's way.
const MAX_INTERVAL: Duration = Duration::from_millis(50);
/// Processes of a tree whose PSS is read at a sample: the largest by resident size.
const PSS_LARGEST: usize = 4;
/// After this many samples in a row within 1% of the previous one, a tree whose PSS is read is
/// stable...
const STABLE_SAMPLES: u32 = 8;
/// ...and the samples come at most this often until it changes.
const STABLE_INTERVAL: Duration = Duration::from_millis(200);

/// What the child may still map between reporting its high-water mark and exec replacing its
/// memory: its code on the way to execve is faulted in from the binary, 64 KiB per fault (the
/// kernel's fault-around). The same code path each time: 0.8-0.9 MiB measured with a debug
/// build (`ARUM_TEST_BALLAST_MIB=300 arum --format json -- true`: rusage_maxrss_bytes less
/// launcher_rss_at_fork_bytes), less in release; the margin is twice that.
const EXEC_PATH_MARGIN: u64 = 2 * 1024 * 1024;

#[derive(Debug, Default, Clone, Copy)]
pub struct TreeStats {
    samples: u64,
    /// Largest sum over the tree's processes at one instant: PSS where smaps_rollup could be
    /// read for every process, else resident set size.
    sum: u64,
    /// Whether some sample of several processes fell back to resident set sizes.
    rss_only: bool,
    /// Whether some sample read a PSS (a tree of one process needs none).
    pss: bool,
    /// Whether the latest sample read a PSS (what the spacing of a stable tree saves).
    read_pss: bool,
    /// Largest VmHWM of any one process (its own exact peak, up to its last sample).
    hwm: u64,
    threads: u64,
    processes: u64,
    /// Samples in a row whose sum stayed within 1% of the one before, and that sum.
    stable: u32,
    last_sum: u64,
}

/// Starts sampling the tree (once the program has run past the launch grace). The first sample
/// is taken on the caller's thread, which is awake at the end of the grace anyway: on a busy
/// machine a new sampler thread may wait for a CPU longer than a short program runs, and
/// without a sample the peak is only bounded by ru_maxrss, which holds arum's copy.
pub fn start(tree: &Tree) -> Option<Sampler<TreeStats>> {
    let mut reader = tree.reader();
    let mut pids = Vec::with_capacity(64);
    Sampler::spawn(
        "arum-tree",
        (
            Cadence::Growing {
                first: FIRST_INTERVAL,
                max: MAX_INTERVAL,
            },
            FirstTick::Caller,
            false,
        ),
        TreeStats::default(),
        move |stats, _| {
            reader.read(&mut pids);
            sample(&pids, stats);
            // Only PSS reads are worth spacing out: a status read is cheap, and a wide gap after
            // a steady phase would miss a last growth that VmHWM reports only at a sample.
            if stats.stable >= STABLE_SAMPLES && stats.read_pss {
                STABLE_INTERVAL
            } else {
                Duration::ZERO
            }
        },
        |stats| stats,
    )
}

fn sample(pids: &[i32], stats: &mut TreeStats) {
    let (mut threads, mut rss_only) = (0, false);
    // Every process's status (cheap): its resident size, high-water mark and threads.
    let mut sizes: Vec<(u64, procfs::process::Process)> = Vec::with_capacity(pids.len());
    for &pid in pids {
        let Ok(p) = procfs::process::Process::new(pid) else {
            continue;
        };
        let Ok(status) = p.status() else { continue };
        stats.hwm = stats.hwm.max(status.vmhwm.unwrap_or(0) * 1024);
        threads += status.threads;
        sizes.push((status.vmrss.unwrap_or(0) * 1024, p));
    }
    let mut sum: u64 = 0;
    stats.read_pss = false;
    if sizes.len() == 1 {
        // Nothing shared within one process: its resident size and VmHWM say it all.
        sum = sizes[0].0;
    } else {
        sizes.sort_by_key(|s| std::cmp::Reverse(s.0));
        for (i, (rss, p)) in sizes.iter().enumerate() {
            let pss = (i < PSS_LARGEST)
                .then(|| p.smaps_rollup().ok().and_then(|r| pss_bytes(&r)))
                .flatten();
            match pss {
                Some(pss) => {
                    sum += pss;
                    stats.pss = true;
                    stats.read_pss = true;
                }
                None => {
                    sum += rss;
                    rss_only |= *rss > 0;
                }
            }
        }
    }
    stats.samples += 1;
    let steady = sum.abs_diff(stats.last_sum) * 100 <= stats.last_sum;
    stats.stable = if steady { stats.stable + 1 } else { 0 };
    stats.last_sum = sum;
    stats.sum = stats.sum.max(sum);
    stats.rss_only |= rss_only;
    stats.threads = stats.threads.max(threads);
    stats.processes = stats.processes.max(pids.len() as u64);
}

fn pss_bytes(r: &procfs::process::SmapsRollup) -> Option<u64> {
    r.memory_map_rollup
        .iter()
        .find_map(|m| m.extension.map.get("Pss").copied())
}

/// The tree's peak: `exact` (memory.peak) when there is one, else the samples and ru_maxrss;
/// `stats` is none when sampling was turned off.
pub fn peak_memory(
    stats: Option<&TreeStats>,
    exact: Option<u64>,
    rusage_maxrss_bytes: u64,
    inherited_rss_bytes: u64,
) -> PeakMemory {
    let (peak_rss_bytes, method) = match (exact, stats) {
        (Some(peak), _) => (peak, PeakMethod::CgroupV2MemoryPeak),
        (None, None) => (rusage_maxrss_bytes, PeakMethod::Rusage),
        (None, Some(stats)) => {
            // Above what the child held before exec, ru_maxrss is the program's own largest
            // process (beyond the pages the child still touches on its way to exec).
            let trusted = if rusage_maxrss_bytes > inherited_rss_bytes + EXEC_PATH_MARGIN {
                rusage_maxrss_bytes
            } else {
                0
            };
            let sampled = stats.sum.max(stats.hwm).max(trusted);
            if sampled == 0 {
                // Ended before the first sample, and ru_maxrss may be arum's copy: all that is
                // known is that the program's peak was at most ru_maxrss.
                (rusage_maxrss_bytes, PeakMethod::RusageUpperBound)
            } else if stats.rss_only || !stats.pss {
                (sampled, PeakMethod::ProcfsSampling)
            } else {
                (sampled, PeakMethod::PssSampling)
            }
        }
    };
    let stats = stats.copied().unwrap_or_default();
    PeakMemory {
        peak_rss_bytes,
        method,
        includes_page_cache: method.includes_page_cache(),
        samples: stats.samples,
        // The program ran: one process with one thread at least, sampled or not.
        peak_threads: stats.threads.max(stats.processes).max(1),
        peak_processes: stats.processes.max(1),
        launcher_rss_at_fork_bytes: inherited_rss_bytes,
    }
}
