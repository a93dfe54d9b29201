//! The `/dev/arum` wire format: the one definition shared by the `arum` tool and the kernel
//! module. `wire.rs` uses `core` only, so the module compiles the same file (`#[path]`) without
//! this crate's manifest; this crate is how user space gets it.
#![no_std]
#![forbid(unsafe_code)]

mod wire;

pub use wire::*;

/// Where the module's device appears (a misc device named `arum`).
pub const DEVICE_PATH: &str = "/dev/arum";
// User space only (the module does not compile this file): 128-bit division is not available
// in the kernel.
impl CpuCounts {
    /// Counter `i` scaled for multiplexing: count × enabled / running, the estimate perf stat
    /// prints; `None` when the counter never ran.
    pub fn scaled(&self, i: usize) -> Option<u64> {
        let (count, enabled, running) = (
            *self.counts.get(i)?,
            self.time_enabled_ns[i],
            self.time_running_ns[i],
        );
        match running {
            0 => None,
            r if r >= enabled => Some(count),
            r => Some((u128::from(count) * u128::from(enabled) / u128::from(r)) as u64),
        }
    }
}
