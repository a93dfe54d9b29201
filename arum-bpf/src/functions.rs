//! The launched tree's calls of chosen functions, counted and timed in the kernel
//! (`bpf/functions.bpf.c`): a uprobe session on each function, one uprobe_multi link per file
//! (one registration and one unregistration each, however many functions), entry and return
//! paired in the program. Per function the calls, the timed calls, inclusive and exclusive
//! totals, maxima and histograms; per function and thread the calls and times.
//!
//! While the program runs, a function can be counted only (no return probe) or taken out of
//! its file's link (no probe at all): the file is re-linked without it, the new link attached
//! before the old one is detached, and a generation in the cookies tells the program which of
//! the two counts (see the program's header).

use std::collections::BTreeMap;
use std::path::PathBuf;

use libbpf_rs::{Link, MapCore, MapFlags};

use crate::load::{Loaded, Unavailable, TREE_HELD, TREE_RUNNING};
use crate::percpu::{entries, sum_fields, u32_at, u64_at};

static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/functions.bpf.o"));

/// The most functions one run probes (`MAX_FUNCS` in the program).
pub const MAX_FUNCTIONS: usize = 4096;
/// Nested timed calls per thread (`MAX_DEPTH`): deeper ones are counted, not timed.
pub const MAX_DEPTH: usize = 32;

/// Where a function is: its file and the file offset of its first instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub path: PathBuf,
    pub offset: u64,
}

/// The probe time the program takes out of a function's durations, in nanoseconds: its own
/// hits' part inside its interval, the rest of its hits (inside its caller's), the hit of a
/// call counted only (all inside its caller's), and what more a process's first timed call
/// holds (the kernel makes the page its return probes go through during that call's hits).
/// The inside part moves with the coldness of each call's path: by `cold`'s slope times how
/// much longer or shorter the entry's run of the program took than its usual run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Corrections {
    pub inside_ns: u32,
    pub outside_ns: u32,
    pub entry_ns: u32,
    pub first_ns: u32,
    pub cold: Coldness,
}

/// How the inside part follows the entry's run: `inside + slope × (min(run, max) − base)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coldness {
    pub run_base_ns: u32,
    pub run_max_ns: u32,
    /// In 1/1024ths; 0: the inside part does not move.
    pub slope_1024: u32,
}

/// One function's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionTotals {
    pub calls: u64,
    pub timed: u64,
    pub inclusive_ns: u64,
    pub exclusive_ns: u64,
    pub inclusive_max_ns: u64,
    pub exclusive_max_ns: u64,
    /// Frames left by a longjmp or an exception: their returns never came.
    pub unwound: u64,
    /// Calls nested deeper than the program's stack: counted, not timed.
    pub too_deep: u64,
    /// Calls entered and not returned from: their thread ended first, or they were still
    /// running when the maps were read.
    pub unfinished: u64,
    /// (bucket, calls) of the inclusive and the exclusive times (see [`crate::hist`]).
    pub inclusive_hist: Vec<(u32, u64)>,
    pub exclusive_hist: Vec<(u32, u64)>,
}

/// One thread's figures for one function.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadTotals {
    pub pid: u32,
    pub calls: u64,
    pub timed: u64,
    pub inclusive_ns: u64,
    pub exclusive_ns: u64,
}

/// Everything counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    /// By function index (the order of the sites given).
    pub functions: Vec<FunctionTotals>,
    /// (function index, tid) → figures.
    pub threads: BTreeMap<(u32, u32), ThreadTotals>,
    /// Calls left out: a thread's stack or a statistics map was full, a duration not binned.
    pub unrecorded: u64,
    pub unbinned: u64,
    /// Processes that left the tree at an exec that raised their privilege (not counted after).
    pub left_tree: u64,
}

/// (function, kind) → its histogram's (bucket, calls), sorted; kind 0 inclusive, 1 exclusive,
/// 3 entry runs.
type Histograms = BTreeMap<(u32, u16), Vec<(u32, u64)>>;

/// Every function's histograms at one moment ([`FunctionCounter::histograms_now`]).
pub struct HistogramsNow(Histograms);

impl HistogramsNow {
    /// Function `index`'s inclusive-time histogram: (bucket, calls).
    pub fn inclusive(&self, index: u32) -> &[(u32, u64)] {
        self.0.get(&(index, 0)).map_or(&[], Vec::as_slice)
    }

    /// Function `index`'s entry runs, where [`FunctionCounter::record_runs`] asked: (bucket,
    /// calls).
    pub fn entry_runs(&self, index: u32) -> &[(u32, u64)] {
        self.0.get(&(index, 3)).map_or(&[], Vec::as_slice)
    }
}

/// The exclusive-time histogram: every call's inclusive bin, less the inclusive bins of the
/// calls that had probed children, plus those calls' exclusive bins (a leaf call is binned once,
/// its exclusive time being its inclusive one).
fn exclusive(all: &[(u32, u64)], parents: &[(u32, u64)], own: &[(u32, u64)]) -> Vec<(u32, u64)> {
    let mut bins: BTreeMap<u32, u64> = all.iter().copied().collect();
    for &(b, n) in parents {
        let left = bins.entry(b).or_default();
        *left = left.saturating_sub(n);
    }
    for &(b, n) in own {
        *bins.entry(b).or_default() += n;
    }
    bins.into_iter().filter(|&(_, n)| n > 0).collect()
}

/// A function's calls so far, read while the program runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    pub calls: u64,
    pub timed: u64,
    pub inclusive_ns: u64,
}

/// `struct control` of the program.
#[derive(Debug, Clone, Copy, Default)]
struct Control {
    counted_only: bool,
    generation: u32,
    corrections: Corrections,
    record_runs: bool,
}

impl Control {
    fn bytes(&self) -> [u8; 40] {
        let mut b = [0u8; 40];
        let c = &self.corrections;
        let words = [
            u32::from(self.counted_only),
            self.generation,
            c.inside_ns,
            c.outside_ns,
            c.entry_ns,
            c.first_ns,
            c.cold.run_base_ns,
            c.cold.run_max_ns,
            c.cold.slope_1024,
            u32::from(self.record_runs),
        ];
        for (chunk, w) in b.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        b
    }
}

/// One file's functions and the link that probes them.
struct FileLink {
    path: PathBuf,
    /// (function index, offset) still probed.
    functions: Vec<(u32, u64)>,
    link: Option<Link>,
}

/// The loaded, attached program.
pub struct FunctionCounter {
    loaded: Loaded,
    controls: Vec<Control>,
    files: Vec<FileLink>,
    /// The generation of the newest link (every link has its own).
    generation: u32,
}

impl FunctionCounter {
    /// Loads the program and probes every site (index = its place in `sites`), one link per
    /// file.
    pub fn start(sites: &[Site]) -> Result<FunctionCounter, Unavailable> {
        if sites.len() > MAX_FUNCTIONS {
            return Err(Unavailable(format!(
                "{} functions: the in-kernel engine probes at most {MAX_FUNCTIONS}",
                sites.len()
            )));
        }
        let mut loaded = Loaded::new(OBJECT, "function", &[])?;
        // The tree's programs (fork, exec) and the threads' exits; the session program goes on
        // each file below.
        loaded.attach_where(|name| name != "function_session")?;
        let mut by_file: BTreeMap<&PathBuf, Vec<(u32, u64)>> = BTreeMap::new();
        for (i, site) in sites.iter().enumerate() {
            by_file
                .entry(&site.path)
                .or_default()
                .push((i as u32, site.offset));
        }
        let mut counter = FunctionCounter {
            loaded,
            controls: vec![Control::default(); sites.len()],
            files: by_file
                .into_iter()
                .map(|(path, functions)| FileLink {
                    path: path.clone(),
                    functions,
                    link: None,
                })
                .collect(),
            generation: 0,
        };
        for f in 0..counter.files.len() {
            counter.link(f)?;
        }
        Ok(counter)
    }

    /// Links file `f`'s functions under a new generation, then drops its old link: from the
    /// switch on the new link counts, and no call is counted under both.
    fn link(&mut self, f: usize) -> Result<(), Unavailable> {
        self.generation += 1;
        let generation = self.generation;
        let file = &self.files[f];
        let new = if file.functions.is_empty() {
            None
        } else {
            let (offsets, cookies) = file
                .functions
                .iter()
                .map(|&(i, offset)| (offset as usize, u64::from(i) | u64::from(generation) << 32))
                .unzip();
            let path = file.path.clone();
            Some(
                self.loaded
                    .attach_sessions("function_session", &path, offsets, cookies)?,
            )
        };
        let indices: Vec<u32> = self.files[f].functions.iter().map(|&(i, _)| i).collect();
        for i in indices {
            self.controls[i as usize].generation = generation;
            self.write_control(i)?;
        }
        // Dropping the old link unregisters its probes (one grace period for the file).
        self.files[f].link = new;
        Ok(())
    }

    /// Writes function `index`'s control, and how many functions are timed now.
    fn write_control(&self, index: u32) -> Result<(), Unavailable> {
        let failed =
            |e: libbpf_rs::Error| Unavailable(format!("setting a function's control: {e}"));
        self.loaded
            .map("control")?
            .update(
                &index.to_ne_bytes(),
                &self.controls[index as usize].bytes(),
                MapFlags::ANY,
            )
            .map_err(failed)?;
        let timed = self
            .controls
            .iter()
            .filter(|c| !c.counted_only && c.generation != 0)
            .count() as u32;
        self.loaded
            .map("timed_functions")?
            .update(&0u32.to_ne_bytes(), &timed.to_ne_bytes(), MapFlags::ANY)
            .map_err(failed)
    }

    /// Counts the calls of `pid` (held before its exec) and of every process it forks, from its
    /// exec on.
    pub fn follow(&self, pid: u32) -> Result<(), Unavailable> {
        self.loaded.follow(pid, TREE_HELD)
    }

    /// Counts the calls of `pid` from now on (arum's own, to calibrate).
    pub fn follow_running(&self, pid: u32) -> Result<(), Unavailable> {
        self.loaded.follow(pid, TREE_RUNNING)
    }

    pub fn unfollow(&self, pid: u32) -> Result<(), Unavailable> {
        self.loaded.unfollow(pid)
    }

    /// The probe time taken out of function `index`'s durations, and of its callers'.
    pub fn correct(&mut self, index: u32, corrections: Corrections) -> Result<(), Unavailable> {
        self.controls[index as usize].corrections = corrections;
        self.write_control(index)
    }

    /// From now on, each timed call of function `index` bins how long the program's entry run
    /// took ([`HistogramsNow::entry_runs`]): for arum's calibration functions.
    pub fn record_runs(&mut self, index: u32) -> Result<(), Unavailable> {
        self.controls[index as usize].record_runs = true;
        self.write_control(index)
    }

    /// From now on, function `index`'s calls are only counted (no return probe, no time), or
    /// timed again.
    pub fn count_only(&mut self, index: u32, only: bool) -> Result<(), Unavailable> {
        self.controls[index as usize].counted_only = only;
        self.write_control(index)
    }

    /// Stops counting function `index`'s calls without unprobing it: its hits still cost an
    /// entry each (for functions nothing will call again, such as the calibration's).
    pub fn ignore(&mut self, index: u32) -> Result<(), Unavailable> {
        self.controls[index as usize].generation = 0;
        self.write_control(index)
    }

    /// Unprobes function `index`: its file is re-linked without it (one unregistration, tens of
    /// milliseconds, on this thread). Its counts so far stay.
    pub fn remove(&mut self, index: u32) -> Result<(), Unavailable> {
        let Some(f) = self
            .files
            .iter()
            .position(|file| file.functions.iter().any(|&(i, _)| i == index))
        else {
            return Ok(());
        };
        self.ignore(index)?;
        self.files[f].functions.retain(|&(i, _)| i != index);
        self.link(f)
    }

    /// Detaches the program: one unregistration per file.
    pub fn stop(&mut self) {
        for file in &mut self.files {
            file.link = None;
        }
        self.loaded.detach();
    }

    /// Function `index`'s calls so far.
    pub fn progress(&self, index: u32) -> Result<Progress, Unavailable> {
        let f = self.function_fields(index)?;
        Ok(Progress {
            calls: f[0],
            timed: f[1],
            inclusive_ns: f[2],
        })
    }

    fn function_fields(&self, index: u32) -> Result<Vec<u64>, Unavailable> {
        let copies = self
            .loaded
            .map("funcs")?
            .lookup_percpu(&index.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| Unavailable(format!("reading the function statistics: {e}")))?
            .unwrap_or_default();
        // struct func_stats: 9 u64, the maxima at 4 and 5.
        Ok(sum_fields(&copies, 9, &[4, 5]))
    }

    /// Every function's histograms so far, in one walk of the map (it holds all functions'
    /// buckets: reading one function's is reading them all).
    pub fn histograms_now(&self) -> Result<HistogramsNow, Unavailable> {
        Ok(HistogramsNow(self.histograms()?))
    }

    fn histograms(&self) -> Result<Histograms, Unavailable> {
        let mut out = Histograms::new();
        for (key, copies) in entries(&self.loaded.map("hist")?).map_err(Unavailable)? {
            // struct hist_key { u32 func; u16 kind; u16 pad; u32 bucket; }
            let kind = u16::from_ne_bytes([key[4], key[5]]);
            out.entry((u32_at(&key, 0), kind))
                .or_default()
                .push((u32_at(&key, 2), sum_fields(&copies, 1, &[])[0]));
        }
        for h in out.values_mut() {
            h.sort_unstable();
        }
        Ok(out)
    }

    /// The processes whose threads have called a probed function so far.
    pub fn thread_pids(&self) -> Result<std::collections::BTreeSet<u32>, Unavailable> {
        let threads = self.loaded.map("threads")?;
        Ok(threads
            .keys()
            .filter_map(|k| threads.lookup(&k, MapFlags::ANY).ok().flatten())
            .map(|v| u32_at(&v, 0))
            .collect())
    }

    /// Reads the maps: the functions `0..functions` (after [`stop`](Self::stop) for final
    /// figures).
    pub fn totals(&self, functions: usize) -> Result<Totals, Unavailable> {
        let mut hists = self.histograms()?;
        let mut out = Vec::with_capacity(functions);
        for i in 0..functions as u32 {
            let f = self.function_fields(i)?;
            out.push(FunctionTotals {
                calls: f[0],
                timed: f[1],
                inclusive_ns: f[2],
                exclusive_ns: f[3],
                inclusive_max_ns: f[4],
                exclusive_max_ns: f[5],
                unwound: f[6],
                too_deep: f[7],
                unfinished: f[8],
                exclusive_hist: exclusive(
                    hists.get(&(i, 0)).map_or(&[], Vec::as_slice),
                    hists.get(&(i, 2)).map_or(&[], Vec::as_slice),
                    hists.get(&(i, 1)).map_or(&[], Vec::as_slice),
                ),
                inclusive_hist: hists.remove(&(i, 0)).unwrap_or_default(),
            });
        }
        self.count_unfinished(&mut out)?;
        let threads_map = self.loaded.map("threads")?;
        let mut threads = BTreeMap::new();
        for key in threads_map.keys() {
            if let Ok(Some(v)) = threads_map.lookup(&key, MapFlags::ANY) {
                // struct thread_stats { u32 pid; u32 pad; u64 calls, timed, inclusive, exclusive; }
                threads.insert(
                    (u32_at(&key, 0), u32_at(&key, 1)),
                    ThreadTotals {
                        pid: u32_at(&v, 0),
                        calls: u64_at(&v, 1),
                        timed: u64_at(&v, 2),
                        inclusive_ns: u64_at(&v, 3),
                        exclusive_ns: u64_at(&v, 4),
                    },
                );
            }
        }
        let drops = self.loaded.drops()?;
        Ok(Totals {
            functions: out,
            threads,
            unrecorded: drops[0] + drops[2],
            unbinned: drops[1],
            left_tree: self.loaded.left_tree()?,
        })
    }

    /// The frames still on the stacks of threads alive when the maps are read: calls whose
    /// return had not come.
    fn count_unfinished(&self, functions: &mut [FunctionTotals]) -> Result<(), Unavailable> {
        let stacks = self.loaded.map("stacks")?;
        for key in stacks.keys() {
            let Ok(Some(v)) = stacks.lookup(&key, MapFlags::ANY) else {
                continue;
            };
            // struct stack { u32 depth; u32 pad; struct frame { u64 start, children, probe;
            // u32 func, pad; } frames[MAX_DEPTH]; }: a frame is 4 u64 words from word 1.
            let depth = (u32_at(&v, 0) as usize).min(MAX_DEPTH);
            for d in 0..depth {
                let func = u32_at(&v, 2 + d * 8 + 6) as usize;
                if let Some(f) = functions.get_mut(func) {
                    f.unfinished += 1;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_bins_are_leaves_inclusive_plus_parents_own() {
        // Five calls: three leaves (bins 3, 3, 9), two parents with inclusive bins 9 and 12 and
        // exclusive bins 2 and 4.
        let all = [(3, 2), (9, 2), (12, 1)];
        let parents = [(9, 1), (12, 1)];
        let own = [(2, 1), (4, 1)];
        assert_eq!(
            exclusive(&all, &parents, &own),
            vec![(2, 1), (3, 2), (4, 1), (9, 1)]
        );
        // Leaves only: the inclusive histogram as it is.
        assert_eq!(exclusive(&all, &[], &[]), all.to_vec());
    }
}
