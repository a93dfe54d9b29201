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
    let mut threads = 0;
    // Every process's status (cheap): its resident size, high-water mark and threads.
    let mut sizes: Vec<(u64, procfs::process::Process)> = Vec::with_capacity(pids.len());
    for &pid in pids {
        let Ok(p) = procfs::process::Process::new(pid) else {
            continue;
        };
        let Ok(status) = p.status() else { continue };
        stats.hwm = stats.hwm.max(status.vmhwm.unwrap_or(0) * 1024);
        threads += status.threads;
        // A zombie has released its memory: nothing of it to add, and its partners' PSS no
        // longer divides by it.
        if !status.state.starts_with(['Z', 'X']) {
            sizes.push((status.vmrss.unwrap_or(0) * 1024, p));
        }
    }
    stats.read_pss = false;
    let (sum, rss_only) = add_up(&mut sizes, stats);
    stats.samples += 1;
    // 0: a sample torn by an exit (see add_up), or a tree with nothing resident.
    if sum > 0 {
        let steady = sum.abs_diff(stats.last_sum) * 100 <= stats.last_sum;
        stats.stable = if steady { stats.stable + 1 } else { 0 };
        stats.last_sum = sum;
        stats.sum = stats.sum.max(sum);
    }
    stats.rss_only |= rss_only;
    stats.threads = stats.threads.max(threads);
    stats.processes = stats.processes.max(pids.len() as u64);
}

/// The tree's memory at one sample, from its live processes' resident sizes (`sizes`, read
/// from their status), and whether it fell back to a resident size where a PSS was wanted; 0
/// for a sample torn by a process's exit.
fn add_up(sizes: &mut [(u64, procfs::process::Process)], stats: &mut TreeStats) -> (u64, bool) {
    if let [(rss, _)] = sizes {
        // Nothing shared within one process: its resident size and VmHWM say it all.
        return (*rss, false);
    }
    sizes.sort_by_key(|s| std::cmp::Reverse(s.0));
    let (mut sum, mut rss_only, mut torn) = (0, false, false);
    for (i, (rss, p)) in sizes.iter().enumerate() {
        let share = if i < PSS_LARGEST {
            share_of(*rss, p.smaps_rollup())
        } else {
            Share::Resident(*rss)
        };
        match share {
            Share::Proportional(pss) => {
                sum += pss;
                stats.pss = true;
                stats.read_pss = true;
            }
            Share::Resident(rss) => {
                sum += rss;
                rss_only |= rss > 0;
            }
            Share::Gone => torn = true,
        }
    }
    // A process's PSS divides each of its pages by the number of processes mapping it when
    // the kernel walks it. A process that exits while the others are read unmaps its pages in
    // between: read first, it counted half of each page it shared; its partners, read after,
    // count those pages in full. Such a sample adds a shared region up to one and a half
    // times, so it is left out. Exiting is for good, so a process not exiting once every read
    // is done was not exiting during them; checked for the processes whose PSS was read, the
    // largest (the others' resident sizes do not depend on their partners).
    torn |= sizes.iter().take(PSS_LARGEST).any(|(_, p)| exiting(p));
    if torn {
        (0, false)
    } else {
        (sum, rss_only)
    }
}

/// What one process of a sample adds to the tree's sum.
#[derive(Debug, PartialEq)]
enum Share {
    /// Its proportional set size.
    Proportional(u64),
    /// Its resident size: its PSS could not be read (not permitted, or not in the file).
    Resident(u64),
    /// It exited after its status was read: smaps_rollup says ESRCH once its memory is
    /// detached and ENOENT once it is reaped (procfs makes both NotFound). Its resident size,
    /// read a moment earlier, may be half torn down, and its partners' PSS no longer divides by
    /// it: the sample is not consistent.
    Gone,
}

fn share_of(rss: u64, rollup: procfs::ProcResult<procfs::process::SmapsRollup>) -> Share {
    match rollup {
        Ok(r) => pss_bytes(&r).map_or(Share::Resident(rss), Share::Proportional),
        Err(procfs::ProcError::NotFound(_)) => Share::Gone,
        Err(_) => Share::Resident(rss),
    }
}

/// Whether the process has begun to exit (the kernel's PF_EXITING, set before it releases its
/// memory), or is gone.
fn exiting(p: &procfs::process::Process) -> bool {
    /// From linux/sched.h.
    const PF_EXITING: u32 = 0x4;
    p.stat().map_or(true, |s| s.flags & PF_EXITING != 0)
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

#[cfg(test)]
mod tests {
    use super::*;

    use nix::sys::wait::{waitid, Id, WaitPidFlag};
    use nix::unistd::Pid;

    /// Starts a child that exits at once, and waits for its exit without reaping it: its memory
    /// is gone, its /proc entry not. `Child::wait` reaps it.
    fn zombie() -> (std::process::Child, i32) {
        let child = std::process::Command::new("true")
            .spawn()
            .expect("true runs");
        let pid = child.id() as i32;
        waitid(
            Id::Pid(Pid::from_raw(pid)),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT,
        )
        .expect("the child's exit is seen without reaping it");
        (child, pid)
    }

    #[test]
    fn a_process_that_exits_during_a_sample_is_gone_and_exiting() {
        let (mut child, pid) = zombie();
        let p = procfs::process::Process::new(pid).expect("a zombie is still in /proc");
        assert_eq!(share_of(1 << 20, p.smaps_rollup()), Share::Gone);
        assert!(exiting(&p));
        child.wait().unwrap();
        assert_eq!(share_of(1 << 20, p.smaps_rollup()), Share::Gone);
        assert!(exiting(&p));
    }

    #[test]
    fn a_live_process_shares_its_pss_and_an_unreadable_one_its_resident_size() {
        let me = procfs::process::Process::myself().unwrap();
        assert!(!exiting(&me));
        match share_of(1 << 40, me.smaps_rollup()) {
            Share::Proportional(pss) => assert!(pss > 0 && pss < 1 << 40, "{pss}"),
            other => panic!("{other:?} for this process"),
        }
        let denied = procfs::ProcError::PermissionDenied(None);
        assert_eq!(share_of(4096, Err(denied)), Share::Resident(4096));
        let garbled = procfs::ProcError::Incomplete(None);
        assert_eq!(share_of(4096, Err(garbled)), Share::Resident(4096));
    }

    #[test]
    fn a_sample_torn_by_an_exit_adds_nothing_and_one_without_adds_its_share() {
        let me = procfs::process::Process::myself().unwrap();
        let (mut child, pid) = zombie();
        let mut stats = TreeStats::default();
        // The zombie as a process whose status was read while it was still running.
        let dead = procfs::process::Process::new(pid).unwrap();
        let mut sizes = vec![(1 << 20, me), (1 << 20, dead)];
        assert_eq!(add_up(&mut sizes, &mut stats), (0, false));
        // A zombie found at the status read is left out: this process alone, its resident size.
        let mut stats = TreeStats::default();
        sample(&[std::process::id() as i32, pid], &mut stats);
        child.wait().unwrap();
        assert_eq!(stats.samples, 1);
        assert!(stats.sum > 0 && !stats.rss_only && !stats.pss, "{stats:?}");
        // Two live processes (this one twice): their PSS, each page counted once per entry.
        let mut stats = TreeStats::default();
        let me = std::process::id() as i32;
        sample(&[me, me], &mut stats);
        assert!(stats.pss && !stats.rss_only && stats.sum > 0, "{stats:?}");
    }
}
