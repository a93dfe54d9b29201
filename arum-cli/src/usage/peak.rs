//! Peak resident memory, thread and process counts of the launched tree.
//!
//! `ru_maxrss` of a child is the largest *single* process, and the forked child's pre-exec copy of
//! arum's memory counts towards it (exec keeps the old memory's high-water mark), so it is wrong
//! in both directions for a tree. Where the tree has a cgroup v2 group with the memory
//! controller, `memory.peak` is exact. Otherwise a sampler thread reads VmRSS/VmHWM of every
//! process of the tree at a short interval, once the program has run past the launch grace; and
//! `ru_maxrss` counts when it exceeds the held child's resident memory before exec (measured,
//! not guessed), since then it is the program's own.

use std::time::Duration;

use crate::periodic::{Cadence, FirstTick, Sampler};
use crate::report::model::{PeakMemory, PeakMethod};
use crate::tree::Tree;

/// First sampling interval: short, because short programs matter too.
const FIRST_INTERVAL: Duration = Duration::from_millis(2);
/// Sampling slows down to this for long runs, to stay out of the program's way.
const MAX_INTERVAL: Duration = Duration::from_millis(50);

/// Pages the held child may still touch between its high-water mark being read and its exec.
const EXEC_PATH_MARGIN: u64 = 256 * 1024;

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
    inherited_rss_bytes: u64,
) -> PeakMemory {
    let (peak_rss_bytes, method) = match exact {
        Some(peak) => (peak, PeakMethod::CgroupV2MemoryPeak),
        None => {
            // Above what the child held before exec, ru_maxrss is the program's own largest
            // process. Between arm() reading that mark and exec, the child still maps a few
            // pages on its exec path (16 seen here): a margin of four times that covers them.
            let trusted = if rusage_maxrss_bytes > inherited_rss_bytes + EXEC_PATH_MARGIN {
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
        launcher_rss_at_fork_bytes: inherited_rss_bytes,
    }
}

/// The high-water mark of process `pid`'s resident memory (VmHWM): for the held child, exactly
/// what exec will carry into its ru_maxrss.
pub fn hwm_bytes(pid: nix::unistd::Pid) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            let kb = s.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
            kb.trim().trim_end_matches(" kB").parse::<u64>().ok()
        })
        .map_or(0, |kb| kb * 1024)
}
