//! The launched tree's system calls counted in the kernel (`bpf/syscalls.bpf.c`): per process
//! and call the calls, errors, time and bytes, per call and errno the errors, per call the
//! histogram of durations. Lossless: the only limits are the maps' sizes, and what did not fit is
//! counted in [`Drops`].

use std::collections::BTreeMap;

use libbpf_rs::{MapCore, MapFlags};

use crate::load::{self, Loaded, Unavailable, TREE_HELD, TREE_RUNNING};
use crate::percpu::{entries, sum_fields, u32_at};

static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/syscalls.bpf.o"));

/// What to count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// The call numbers to count; None: every call.
    pub wanted: Option<Vec<u32>>,
    /// Calls that never return or return elsewhere (exit, exit_group, rt_sigreturn): counted at
    /// entry with no duration. At most four.
    pub no_return: Vec<u32>,
    /// A call left out: arum's own uretprobe trampoline, when it probes functions.
    pub ignored: Option<u32>,
}

impl Config {
    /// `struct syscalls_config` of the program, byte for byte.
    fn bytes(&self) -> Result<Vec<u8>, Unavailable> {
        if self.no_return.len() > 4 {
            return Err(Unavailable("more than four calls that never return".into()));
        }
        let mut out = Vec::with_capacity(48);
        for i in 0..4 {
            let nr = self.no_return.get(i).map_or(-1, |&n| i64::from(n));
            out.extend_from_slice(&nr.to_ne_bytes());
        }
        out.extend_from_slice(&self.ignored.map_or(-1, i64::from).to_ne_bytes());
        out.push(u8::from(self.wanted.is_none()));
        out.resize(48, 0);
        Ok(out)
    }
}

/// One process's figures for one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallTotals {
    pub calls: u64,
    pub errors: u64,
    /// Sum of the durations of the timed calls.
    pub total_ns: u64,
    pub max_ns: u64,
    /// Sum of the positive return values (bytes, for the calls that move bytes).
    pub positive_returns: u64,
    /// Calls counted without a duration (no room to keep their entry time).
    pub untimed: u64,
}

/// What the programs could not record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drops {
    /// Calls not counted: the statistics or errno map was full.
    pub uncounted: u64,
    /// Calls counted whose duration is missing from the histogram (it was full).
    pub unbinned: u64,
    /// Exits without an entry (calls entered before the counting started).
    pub orphan_exits: u64,
}

/// Everything counted, summed over CPUs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    /// (tgid, call number) → figures.
    pub calls: BTreeMap<(u32, u32), CallTotals>,
    /// (call number, errno) → calls that failed with it.
    pub errnos: BTreeMap<(u32, u32), u64>,
    /// call number → (histogram bucket, calls), buckets ascending (see [`crate::hist`]).
    pub histograms: BTreeMap<u32, Vec<(u32, u64)>>,
    /// call number → calls entered and not left when the counting stopped.
    pub unfinished: BTreeMap<u32, u64>,
    pub drops: Drops,
    /// Processes that left the tree at an exec that raised their privilege (not counted after).
    pub left_tree: u64,
}

/// The loaded, attached programs.
pub struct SyscallCounter {
    loaded: Loaded,
}

impl SyscallCounter {
    /// Loads and attaches the programs. Nothing is counted until [`follow`](Self::follow).
    pub fn start(config: &Config) -> Result<SyscallCounter, Unavailable> {
        let mut loaded = Loaded::new(OBJECT, "system-call", &config.bytes()?)?;
        if let Some(wanted) = &config.wanted {
            let map = loaded.map("wanted")?;
            for &nr in wanted {
                map.update(&nr.to_ne_bytes(), &[1], MapFlags::ANY)
                    .map_err(|e| load::refused(&e, "selecting the calls to count"))?;
            }
        }
        loaded.attach()?;
        Ok(SyscallCounter { loaded })
    }

    /// Counts the calls of `pid` (a child held before its exec) from its exec on, and of every
    /// process it forks.
    pub fn follow(&self, pid: u32) -> Result<(), Unavailable> {
        self.loaded.follow(pid, TREE_HELD)
    }

    /// Counts `pid`'s calls from now on (arum's own, to measure what counting costs).
    pub fn follow_running(&self, pid: u32) -> Result<(), Unavailable> {
        self.loaded.follow(pid, TREE_RUNNING)
    }

    /// Stops counting `pid`'s calls.
    pub fn unfollow(&self, pid: u32) -> Result<(), Unavailable> {
        self.loaded.unfollow(pid)
    }

    /// Empties what was counted (after a calibration, before the run).
    pub fn clear(&self) -> Result<(), Unavailable> {
        for name in ["calls", "errnos", "hist", "pending"] {
            let map = self.loaded.map(name)?;
            let keys: Vec<Vec<u8>> = map.keys().collect();
            for key in keys {
                // A key gone meanwhile (a call's exit) is what we wanted.
                let _ = map.delete(&key);
            }
        }
        let drops = self.loaded.map("drops")?;
        let zero = vec![
            vec![0u8; 8];
            libbpf_rs::num_possible_cpus().map_err(|e| Unavailable(e.to_string()))?
        ];
        for k in 0u32..4 {
            drops
                .update_percpu(&k.to_ne_bytes(), &zero, MapFlags::ANY)
                .map_err(|e| load::refused(&e, "emptying the drop counters"))?;
        }
        Ok(())
    }

    /// Detaches the programs: nothing more is counted.
    pub fn stop(&mut self) {
        self.loaded.detach();
    }

    /// Reads the maps (after [`stop`](Self::stop), for a consistent picture).
    pub fn totals(&self) -> Result<Totals, Unavailable> {
        let read = |e: String| Unavailable(e);
        let mut totals = Totals::default();
        for (key, copies) in entries(&self.loaded.map("calls")?).map_err(read)? {
            let f = sum_fields(&copies, 6, &[3]);
            totals.calls.insert(
                (u32_at(&key, 0), u32_at(&key, 1)),
                CallTotals {
                    calls: f[0],
                    errors: f[1],
                    total_ns: f[2],
                    max_ns: f[3],
                    positive_returns: f[4],
                    untimed: f[5],
                },
            );
        }
        for (key, copies) in entries(&self.loaded.map("errnos")?).map_err(read)? {
            let n = sum_fields(&copies, 1, &[])[0];
            totals.errnos.insert((u32_at(&key, 0), u32_at(&key, 1)), n);
        }
        for (key, copies) in entries(&self.loaded.map("hist")?).map_err(read)? {
            let n = sum_fields(&copies, 1, &[])[0];
            totals
                .histograms
                .entry(u32_at(&key, 0))
                .or_default()
                .push((u32_at(&key, 1), n));
        }
        for buckets in totals.histograms.values_mut() {
            buckets.sort_unstable();
        }
        totals.unfinished = self.unfinished()?;
        let drops = self.loaded.drops()?;
        totals.drops = Drops {
            uncounted: drops[0],
            unbinned: drops[1],
            orphan_exits: drops[3],
        };
        totals.left_tree = self.loaded.left_tree()?;
        Ok(totals)
    }

    /// Calls still waiting for their exit, of processes of the tree.
    fn unfinished(&self) -> Result<BTreeMap<u32, u64>, Unavailable> {
        let pending = self.loaded.map("pending")?;
        let tree = self.loaded.map("tree")?;
        let mut out = BTreeMap::new();
        for tid in pending.keys() {
            let Ok(Some(p)) = pending.lookup(&tid, MapFlags::ANY) else {
                continue;
            };
            // struct pending { u64 start; u32 nr; u32 tgid; }
            let (nr, tgid) = (u32_at(&p, 2), u32_at(&p, 3));
            let running = tree
                .lookup(&tgid.to_ne_bytes(), MapFlags::ANY)
                .ok()
                .flatten()
                .is_some_and(|s| s.first() == Some(&TREE_RUNNING));
            if running {
                *out.entry(nr).or_default() += 1;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_is_the_c_structs_layout() {
        let c = Config {
            wanted: Some(vec![0]),
            no_return: vec![60, 231],
            ignored: Some(335),
        };
        let b = c.bytes().unwrap();
        assert_eq!(b.len(), 48);
        assert_eq!(i64::from_ne_bytes(b[0..8].try_into().unwrap()), 60);
        assert_eq!(i64::from_ne_bytes(b[8..16].try_into().unwrap()), 231);
        assert_eq!(i64::from_ne_bytes(b[16..24].try_into().unwrap()), -1);
        assert_eq!(i64::from_ne_bytes(b[32..40].try_into().unwrap()), 335);
        assert_eq!(b[40], 0, "a subset: not every call");
        assert_eq!(Config::default().bytes().unwrap()[40], 1);
    }
}
