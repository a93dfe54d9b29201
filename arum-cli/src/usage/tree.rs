//! Peak resident memory, thread and process counts of the launched tree.
//!
//! `ru_maxrss` of a child is the largest *single* process, and the forked child's pre-exec copy of
//! arum's memory counts towards it, so it is wrong in both directions for a tree. Where the
//! machine allows, the tree gets a cgroup v2 group of its own and `memory.peak` is exact.
//! Otherwise a sampler thread reads VmRSS/VmHWM of every process of the tree at a short interval;
//! `ru_maxrss` is trusted only when it exceeds what the child could have inherited from arum.

use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use nix::unistd::Pid;

use super::cgroup::TreeCgroup;
use crate::report::model::{PeakMemory, PeakMethod};

/// First sampling interval: short, because short programs matter too.
const FIRST_INTERVAL: Duration = Duration::from_millis(2);
/// Sampling slows down to this for long runs, to stay out of the program's way.
const MAX_INTERVAL: Duration = Duration::from_millis(50);

/// Watches the tree from release to reaping.
pub struct TreeWatch {
    root: Pid,
    cgroup: Option<Arc<TreeCgroup>>,
    launcher_rss_bytes: u64,
    stop: Arc<AtomicBool>,
    sampler: Option<JoinHandle<TreeStats>>,
}

#[derive(Debug, Default, Clone, Copy)]
struct TreeStats {
    samples: u64,
    /// Largest sum of VmRSS over the tree's processes at one instant.
    rss_sum: u64,
    /// Largest VmHWM of any one process (its own exact peak, up to its last sample).
    hwm: u64,
    threads: u64,
    processes: u64,
}

impl TreeWatch {
    /// Call before fork: makes the tree's cgroup, into which the child can be born.
    pub fn prepare() -> Self {
        TreeWatch {
            root: Pid::from_raw(0),
            cgroup: TreeCgroup::create().map(Arc::new),
            launcher_rss_bytes: own_rss_bytes(),
            stop: Arc::new(AtomicBool::new(false)),
            sampler: None,
        }
    }

    /// The tree's `cgroup.procs`, when it has a cgroup of its own.
    pub fn procs_file(&self) -> Option<std::path::PathBuf> {
        self.cgroup.as_deref().map(TreeCgroup::procs_file)
    }

    /// The cgroup to fork the child into, if there is one.
    pub fn cgroup_fd(&self) -> Option<BorrowedFd<'_>> {
        self.cgroup.as_deref().map(TreeCgroup::fd)
    }

    /// Call between fork and release. `born_in_cgroup` says whether the child started in the
    /// tree's cgroup; if not, it is moved there, or the cgroup is given up for /proc walking.
    pub fn attach(&mut self, root: Pid, born_in_cgroup: bool) {
        self.root = root;
        if !born_in_cgroup && !self.cgroup.as_ref().is_some_and(|c| c.adopt(root)) {
            self.cgroup = None;
        }
    }

    /// Call right after release: starts the sampler thread.
    pub fn start(&mut self) {
        let (root, cgroup, stop) = (self.root, self.cgroup.clone(), self.stop.clone());
        self.sampler = std::thread::Builder::new()
            .name("arum-tree".into())
            .spawn(move || sample_until(root, cgroup.as_deref(), &stop))
            .ok();
    }

    fn stop_sampler(&mut self) -> TreeStats {
        self.stop.store(true, Ordering::SeqCst);
        match self.sampler.take() {
            Some(handle) => {
                handle.thread().unpark();
                handle.join().unwrap_or_default()
            }
            None => TreeStats::default(),
        }
    }

    /// Call after reaping, with the rusage `ru_maxrss` of the program.
    pub fn finish(mut self, rusage_maxrss_bytes: u64) -> PeakMemory {
        let stats = self.stop_sampler();
        let exact = self.cgroup.as_ref().and_then(|c| c.memory_peak());
        let (peak_rss_bytes, method) = match exact {
            Some(peak) => (peak, PeakMethod::CgroupV2MemoryPeak),
            None => {
                // The pre-exec copy of arum is at most arum's RSS at fork; above that, ru_maxrss
                // is the program's own largest process.
                let trusted = if rusage_maxrss_bytes > self.launcher_rss_bytes {
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
            launcher_rss_at_fork_bytes: self.launcher_rss_bytes,
        }
    }
}

impl Drop for TreeWatch {
    /// On every path, also failures: the sampler ends before the cgroup is removed.
    fn drop(&mut self) {
        self.stop_sampler();
    }
}

fn sample_until(root: Pid, cgroup: Option<&TreeCgroup>, stop: &AtomicBool) -> TreeStats {
    let mut stats = TreeStats::default();
    let mut interval = FIRST_INTERVAL;
    let mut pids = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        tree_pids(root, cgroup, &mut pids);
        let (mut rss, mut threads) = (0, 0);
        for &pid in &pids {
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
        std::thread::park_timeout(interval);
        interval = (interval * 5 / 4).min(MAX_INTERVAL);
    }
    stats
}

/// The tree's pids: from its cgroup, or else by walking parent links in /proc.
fn tree_pids(root: Pid, cgroup: Option<&TreeCgroup>, out: &mut Vec<i32>) {
    out.clear();
    if let Some(cg) = cgroup {
        if let Ok(text) = std::fs::read_to_string(cg.procs_file()) {
            out.extend(text.lines().filter_map(|l| l.parse::<i32>().ok()));
            return;
        }
    }
    let Ok(all) = procfs::process::all_processes() else {
        out.push(root.as_raw());
        return;
    };
    let links: Vec<(i32, i32)> = all
        .filter_map(|p| p.ok()?.stat().ok())
        .map(|s| (s.pid, s.ppid))
        .collect();
    out.push(root.as_raw());
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        out.extend(
            links
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
}

fn own_rss_bytes() -> u64 {
    procfs::process::Process::myself()
        .and_then(|p| p.statm())
        .map(|m| m.resident * procfs::page_size())
        .unwrap_or(0)
}
