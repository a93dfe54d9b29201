//! The in-kernel engine of `--syscalls` (arum-bpf): every call of the tree counted and timed in
//! BPF maps, read once after the reap. Nothing passes through a buffer that can fill, so the
//! counts are complete at any rate; where a map was full, the report says how many calls that
//! left out. Its cost per call is measured like the perf path's (getppid on arum's own thread).

use std::collections::BTreeMap;

use arum_bpf::syscalls::{Config, SyscallCounter, Totals};
use arum_bpf::{hist, Unavailable};
use syscalls::Sysno;

use super::collect::CallStats;
use super::cost::{getppid_ns, Cost};
use super::select::{self, Selection};
use crate::perf::records::stats::Durations;

/// What the maps held, per call number.
pub struct Counted {
    pub stats: BTreeMap<u64, CallStats>,
    pub unfinished: BTreeMap<String, u64>,
    pub orphans: u64,
    /// Calls not counted (a full map) and calls counted without their duration binned.
    pub uncounted: u64,
    pub unbinned: u64,
    /// Processes that left the tree at a privilege-raising exec.
    pub left_tree: u64,
}

/// The loaded engine, following nothing yet.
pub struct Kernel {
    counter: SyscallCounter,
}

fn nr(s: Sysno) -> u32 {
    s.id() as u32
}

impl Kernel {
    /// Loads and attaches the programs for `selection`; `uretprobes`: arum probes function
    /// returns, whose trampoline call (`uretprobe`) is arum's, not the program's.
    pub fn start(selection: &Selection, uretprobes: bool) -> Result<Kernel, Unavailable> {
        let no_return = ["exit", "exit_group", "rt_sigreturn", "uretprobe"]
            .into_iter()
            .filter(|n| select::no_return(n))
            .filter_map(|n| n.parse::<Sysno>().ok())
            .map(nr)
            .collect();
        let config = Config {
            wanted: selection
                .numbers
                .as_ref()
                .map(|n| n.iter().map(|&nr| nr as u32).collect()),
            no_return,
            ignored: uretprobes
                .then(|| "uretprobe".parse::<Sysno>().ok().map(nr))
                .flatten(),
        };
        Ok(Kernel {
            counter: SyscallCounter::start(&config)?,
        })
    }

    /// What counting adds to a call, measured on arum's own thread before the run; the maps
    /// are emptied afterwards.
    pub fn calibrate(&self) -> Result<Cost, Unavailable> {
        let bare = getppid_ns();
        self.counter.follow_running(std::process::id())?;
        let traced = getppid_ns();
        self.counter.unfollow(std::process::id())?;
        let totals = self.counter.totals()?;
        self.counter.clear()?;
        let getppid = nr(Sysno::getppid);
        let buckets = totals
            .histograms
            .get(&getppid)
            .ok_or_else(|| Unavailable("no calibration call was counted".into()))?;
        let median = arum_stats::quantile_of_buckets(hist::values(buckets), 0.5).unwrap_or(bare);
        Ok(Cost {
            pair_ns: (traced - bare).max(0.0),
            inside_ns: (median - bare).max(0.0),
        })
    }

    /// Counts `pid` (held before its exec) and what it forks, from its exec on.
    pub fn follow(&self, pid: u32) -> Result<(), Unavailable> {
        self.counter.follow(pid)
    }

    /// Detaches the programs and reads the maps; `inside_ns` is taken out of every duration
    /// (what counting adds between a call's entry and its exit).
    pub fn finish(mut self, inside_ns: u64) -> Result<Counted, Unavailable> {
        self.counter.stop();
        Ok(counted(self.counter.totals()?, inside_ns))
    }
}

/// The maps' totals per call number, over the tree's processes.
fn counted(t: Totals, inside_ns: u64) -> Counted {
    let mut stats: BTreeMap<u64, CallStats> = BTreeMap::new();
    let mut sums: BTreeMap<u32, (u64, u64, u64, u64)> = BTreeMap::new();
    for (&(_, nr), c) in &t.calls {
        let st = stats.entry(u64::from(nr)).or_default();
        st.bytes += c.positive_returns;
        st.untimed += c.untimed;
        let s = sums.entry(nr).or_default();
        s.0 += c.calls - c.untimed;
        s.1 += c.total_ns;
        s.2 = s.2.max(c.max_ns);
        s.3 += c.errors;
    }
    for (&nr, &(timed, total, max, _)) in &sums {
        let buckets = t.histograms.get(&nr).into_iter().flatten().map(|&(b, n)| {
            let (low, high) = hist::bounds(b);
            (
                low.saturating_sub(inside_ns),
                high.saturating_sub(inside_ns),
                n,
            )
        });
        let total = total.saturating_sub(inside_ns * timed);
        let st = stats.entry(u64::from(nr)).or_default();
        st.durations =
            Durations::from_buckets(buckets, timed, total, max.saturating_sub(inside_ns));
    }
    for (&(nr, errno), &n) in &t.errnos {
        *stats
            .entry(u64::from(nr))
            .or_default()
            .errors
            .entry(errno as i32)
            .or_default() += n;
    }
    Counted {
        stats,
        unfinished: t
            .unfinished
            .iter()
            .map(|(&nr, &n)| (select::name(u64::from(nr)), n))
            .collect(),
        orphans: t.drops.orphan_exits,
        uncounted: t.drops.uncounted,
        unbinned: t.drops.unbinned,
        left_tree: t.left_tree,
    }
}
