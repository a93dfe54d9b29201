//! Peak resident memory, thread and process counts of the launched tree.
//!
//! `ru_maxrss` of a child is the largest *single* process, and the forked child's pre-exec copy of
//! arum's memory counts towards it, so it is wrong in both directions for a tree. Where the tree
//! has a cgroup v2 group with the memory controller, `memory.peak` is exact. Otherwise a sampler
//! thread reads VmRSS/VmHWM of every process of the tree at a short interval; `ru_maxrss` is
//! trusted only when it exceeds what the child could have inherited from arum.

use std::time::Duration;

use crate::periodic::{Cadence, FirstTick, Sampler};
use crate::report::model::{PeakMemory, PeakMethod};
use crate::tree::Tree;

/// First sampling interval: short, because short programs matter too.
const FIRST_INTERVAL: Duration = Duration::from_millis(2);
/// Sampling slows down to this for long runs, to stay out of the program's way.
const MAX_INTERVAL: Duration = Duration::from_millis(50);

#[derive(Debug, Default, Clone, Copy)]
pub struct TreeStats {
    samples: u64,
    /// Largest sum of VmRSS over the tree's processes at one instant.
    rss_sum: u64,
    /// Largest VmHWM of any one process (its own exact peak, up to its last sample).
    hwm: u64,
    threads: u64,
    processes: u64,
}

/// Starts sampling the tree (right after release).
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
            FirstTick::Thread,
            false,
        ),
        TreeStats::default(),
        move |stats, _| {
            reader.read(&mut pids);
            sample(&pids, stats)
        },
        |stats| stats,
    )
}

fn sample(pids: &[i32], stats: &mut TreeStats) {
    let (mut rss, mut threads) = (0, 0);
    for &pid in pids {
        let Ok(status) = procfs::process::Process::new(pid).and_then(|p| p.status()) else {
            continue;
        };
        rss += status.vmrss.unwrap_or(0) * 1024;
        stats.hwm = stats.hwm.max(status.vmhwm.unwrap_or(0) * 1024);
        threads += status.threads;
    }
    stats.samples += 1;
    stats.rss_sum = stats.rss_sum.max(rss);
    stats.threads = stats.threads.max(threads);
    stats.processes = stats.processes.max(pids.len() as u64);
}

/// The tree's peak: `exact` (memory.peak) when there is one, else the samples and ru_maxrss.
pub fn peak_memory(
    stats: &TreeStats,
    exact: Option<u64>,
    rusage_maxrss_bytes: u64,
    launcher_rss_bytes: u64,
) -> PeakMemory {
    let (peak_rss_bytes, method) = match exact {
        Some(peak) => (peak, PeakMethod::CgroupV2MemoryPeak),
        None => {
            // The pre-exec copy of arum is at most arum's RSS at fork; above that, ru_maxrss is
            // the program's own largest process.
            let trusted = if rusage_maxrss_bytes > launcher_rss_bytes {
                rusage_maxrss_bytes
            } else {
                0
            };
            (
                stats.rss_sum.max(stats.hwm).max(trusted),
                PeakMethod::ProcfsSampling,
            )
        }
    };
    PeakMemory {
        peak_rss_bytes,
        method,
        samples: stats.samples,
        peak_threads: stats.threads,
        peak_processes: stats.processes,
        launcher_rss_at_fork_bytes: launcher_rss_bytes,
    }
}

/// arum's own resident memory.
pub fn own_rss_bytes() -> u64 {
    procfs::process::Process::myself()
        .and_then(|p| p.statm())
        .map(|m| m.resident * procfs::page_size())
        .unwrap_or(0)
}
