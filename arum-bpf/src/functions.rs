//! The launched tree's calls of chosen functions, counted and timed in the kernel
//! (`bpf/functions.bpf.c`): a uprobe session on each function, one uprobe_multi link per file
//! (one registration and one unregistration each, however many functions), entry and return
//! paired in the program. Per function the calls, the timed calls, inclusive and exclusive
//! totals, maxima and histograms; per function and thread the calls and times.

use std::collections::BTreeMap;
use std::path::PathBuf;

use libbpf_rs::{MapCore, MapFlags};

use crate::load::{Loaded, Unavailable, TREE_HELD};
use crate::percpu::{entries, sum_fields, u32_at, u64_at};

static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/functions.bpf.o"));

/// The most functions one run probes (`MAX_FUNCS` in the program).
pub const MAX_FUNCTIONS: usize = 4096;

/// Where a function is: its file and the file offset of its first instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub path: PathBuf,
    pub offset: u64,
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
}

/// The loaded, attached program.
pub struct FunctionCounter {
    loaded: Loaded,
    functions: usize,
}

impl FunctionCounter {
    /// Loads the program and probes every site (index = its cookie), one link per file.
    pub fn start(sites: &[Site]) -> Result<FunctionCounter, Unavailable> {
        if sites.len() > MAX_FUNCTIONS {
            return Err(Unavailable(format!(
                "{} functions: the in-kernel engine probes at most {MAX_FUNCTIONS}",
                sites.len()
            )));
        }
        let mut loaded = Loaded::new(OBJECT, "function", &[])?;
        // The tree's programs (fork, exec); the session program goes on each file below.
        loaded.attach_where(|name| name.starts_with("tree_"))?;
        let mut by_file: BTreeMap<&PathBuf, (Vec<usize>, Vec<u64>)> = BTreeMap::new();
        for (i, site) in sites.iter().enumerate() {
            let (offsets, cookies) = by_file.entry(&site.path).or_default();
            offsets.push(site.offset as usize);
            cookies.push(i as u64);
        }
        for (path, (offsets, cookies)) in by_file {
            loaded.attach_sessions("function_session", path, offsets, cookies)?;
        }
        Ok(FunctionCounter {
            loaded,
            functions: sites.len(),
        })
    }

    /// Counts the calls of `pid` (held before its exec) and of every process it forks, from its
    /// exec on.
    pub fn follow(&self, pid: u32) -> Result<(), Unavailable> {
        self.loaded.follow(pid, TREE_HELD)
    }

    /// From now on, function `index`'s calls are only counted (no return probe, no time), or
    /// timed again.
    pub fn count_only(&self, index: u32, only: bool) -> Result<(), Unavailable> {
        self.loaded
            .map("modes")?
            .update(
                &index.to_ne_bytes(),
                &u32::from(only).to_ne_bytes(),
                MapFlags::ANY,
            )
            .map_err(|e| Unavailable(format!("setting a function's mode: {e}")))
    }

    /// Detaches the program: one unregistration per file.
    pub fn stop(&mut self) {
        self.loaded.detach();
    }

    /// Reads the maps (after [`stop`](Self::stop)).
    pub fn totals(&self) -> Result<Totals, Unavailable> {
        let read = |e: String| Unavailable(e);
        let funcs = self.loaded.map("funcs")?;
        let mut functions = Vec::with_capacity(self.functions);
        for i in 0..self.functions as u32 {
            let copies = funcs
                .lookup_percpu(&i.to_ne_bytes(), MapFlags::ANY)
                .map_err(|e| Unavailable(format!("reading the function statistics: {e}")))?
                .unwrap_or_default();
            let f = sum_fields(&copies, 8, &[4, 5]);
            functions.push(FunctionTotals {
                calls: f[0],
                timed: f[1],
                inclusive_ns: f[2],
                exclusive_ns: f[3],
                inclusive_max_ns: f[4],
                exclusive_max_ns: f[5],
                unwound: f[6],
                too_deep: f[7],
                ..FunctionTotals::default()
            });
        }
        for (key, copies) in entries(&self.loaded.map("hist")?).map_err(read)? {
            // struct hist_key { u32 func; u16 kind; u16 pad; u32 bucket; }
            let (func, kind, bucket) = (
                u32_at(&key, 0) as usize,
                u16::from_ne_bytes([key[4], key[5]]),
                u32_at(&key, 2),
            );
            let n = sum_fields(&copies, 1, &[])[0];
            if let Some(f) = functions.get_mut(func) {
                let h = if kind == 0 {
                    &mut f.inclusive_hist
                } else {
                    &mut f.exclusive_hist
                };
                h.push((bucket, n));
            }
        }
        for f in &mut functions {
            f.inclusive_hist.sort_unstable();
            f.exclusive_hist.sort_unstable();
        }
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
            functions,
            threads,
            unrecorded: drops[0] + drops[2],
            unbinned: drops[1],
        })
    }
}
