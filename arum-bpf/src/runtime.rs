//! Each thread's CPU time from the scheduler's switches (`bpf/runtime.bpf.c`): the exact time
//! getrusage adds up, however short the thread lived.

use std::collections::BTreeMap;

use libbpf_rs::{MapCore, MapFlags};

use crate::load::{Loaded, Unavailable, TREE_HELD};
use crate::percpu::{u32_at, u64_at};

static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/runtime.bpf.o"));

/// One thread's time on a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runtime {
    pub tgid: u32,
    pub ns: u64,
}

/// The loaded, attached program.
pub struct RuntimeCounter {
    loaded: Loaded,
}

impl RuntimeCounter {
    pub fn start() -> Result<RuntimeCounter, Unavailable> {
        let mut loaded = Loaded::new(OBJECT, "run-time", &[])?;
        loaded.attach()?;
        Ok(RuntimeCounter { loaded })
    }

    /// Counts `pid` (held before its exec) and every process it forks.
    pub fn follow(&self, pid: u32) -> Result<(), Unavailable> {
        self.loaded.follow(pid, TREE_HELD)
    }

    /// Detaches the program.
    pub fn stop(&mut self) {
        self.loaded.detach();
    }

    /// tid → its time on a CPU as of its last switch (after its exit, its whole time). Also the
    /// threads not recorded for want of room in the map.
    pub fn runtimes(&self) -> Result<(BTreeMap<u32, Runtime>, u64), Unavailable> {
        let map = self.loaded.map("runtimes")?;
        let mut out = BTreeMap::new();
        for tid in map.keys() {
            // struct runtime { u32 tgid; u32 pad; u64 ns; }
            if let Ok(Some(v)) = map.lookup(&tid, MapFlags::ANY) {
                out.insert(
                    u32_at(&tid, 0),
                    Runtime {
                        tgid: u32_at(&v, 0),
                        ns: u64_at(&v, 1),
                    },
                );
            }
        }
        Ok((out, self.loaded.drops()?[0]))
    }
}
