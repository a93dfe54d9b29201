//! Memory: latency by pointer chasing (and the cache levels its curve shows), bandwidth, and
//! the cost of page faults.

mod bandwidth;
pub mod caches;
mod faults;
mod latency;

use crate::context::{Context, Group, Sink};

pub const GROUP: Group = Group {
    name: "memory",
    title: "Memory",
    entries: &[
        latency::LATENCY,
        bandwidth::ENTRIES[0],
        bandwidth::ENTRIES[1],
        bandwidth::ENTRIES[2],
        bandwidth::ENTRIES[3],
        bandwidth::ENTRIES[4],
        bandwidth::ENTRIES[5],
        faults::MINOR,
        faults::MAJOR,
    ],
    run,
};

fn run(ctx: &mut Context, sink: &mut Sink) {
    let reported = caches::reported();
    latency::run(ctx, sink, &reported, memory_budget());
    bandwidth::run(ctx, sink, reported.last_level_bytes(), memory_budget());
    faults::run(ctx, sink);
}

/// The bandwidth buffer's size on this machine (the peers copy the same amount).
pub fn bandwidth_buffer_bytes(quick: bool) -> u64 {
    bandwidth::buffer_bytes(
        quick,
        caches::reported().last_level_bytes(),
        memory_budget(),
    )
}

/// Memory this process may use without crowding the machine: a quarter of what is available.
fn memory_budget() -> u64 {
    arum_camp::memory()
        .map(|m| m.available_bytes / 4)
        .unwrap_or(1 << 30)
}
