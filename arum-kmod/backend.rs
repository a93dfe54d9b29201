// SPDX-License-Identifier: GPL-2.0
//! What a way of counting must provide (perf's in-kernel counters, or the counter registers
//! programmed directly), and the refusal every step may return.

use kernel::prelude::*;

use crate::wire;

/// Why a request was refused or a step failed: the errno the failing call gave (kept, not
/// replaced), which check or step (`wire::ERR_*`), and where.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Failure {
    pub(crate) err: Error,
    pub(crate) code: u32,
    pub(crate) cpu: u32,
    pub(crate) counter: u32,
}

impl Failure {
    pub(crate) fn new(err: Error, code: u32) -> Self {
        Failure {
            err,
            code,
            cpu: wire::NO_CPU,
            counter: wire::NO_COUNTER,
        }
    }

    pub(crate) fn nomem() -> Self {
        Failure::new(ENOMEM, wire::ERR_NO_MEMORY)
    }

    pub(crate) fn on_cpu(self, cpu: u32) -> Self {
        Failure { cpu, ..self }
    }

    pub(crate) fn counter(self, counter: usize) -> Self {
        Failure {
            counter: counter as u32,
            ..self
        }
    }
}

impl From<kernel::alloc::AllocError> for Failure {
    fn from(_: kernel::alloc::AllocError) -> Self {
        Failure::nomem()
    }
}

/// One counter's state since it was armed: a 64-bit count and how long it was enabled and
/// actually counting.
#[derive(Clone, Copy, Default)]
pub(crate) struct Reading {
    pub(crate) value: u64,
    pub(crate) enabled_ns: u64,
    pub(crate) running_ns: u64,
}

impl Reading {
    pub(crate) fn add(&mut self, other: &Reading) {
        // Counts wrap as the counters do; times would take 584 years to.
        self.value = self.value.wrapping_add(other.value);
        self.enabled_ns = self.enabled_ns.wrapping_add(other.enabled_ns);
        self.running_ns = self.running_ns.wrapping_add(other.running_ns);
    }
}

/// A way of counting. The session calls `prepare` for every CPU without holding its lock (it
/// may sleep and take the CPU hotplug lock), then `arm`, `read` and `disarm` on the CPU itself,
/// from a work item or that CPU's hotplug callback, under the session lock. Dropping a `Cpu`
/// releases what `prepare` allocated; the session never does that under its lock either.
pub(crate) trait Backend: Send + Sync + 'static {
    /// What the back-end keeps for one CPU.
    type Cpu: Send;

    /// Allocates the CPU's counters, not counting yet. Runs on `cpu`.
    fn prepare(&self, cpu: u32) -> Result<Self::Cpu, Failure>;

    /// Pairs CPUs that share their counters (NetBurst Hyper-Threading): `sibling`'s events are
    /// then counted by `owner`. Returns whether they share.
    fn share(&self, _owner: &mut Self::Cpu, _sibling: &mut Self::Cpu) -> bool {
        false
    }

    /// Whether `counter` does not exist on the CPU `st` was prepared for (perf: the other core
    /// type of a hybrid part). A counter absent on every requested CPU refuses the request.
    fn absent(&self, _st: &Self::Cpu, _counter: usize) -> bool {
        false
    }

    /// Starts counting, from the counters' current values. Runs on `cpu`.
    fn arm(&self, cpu: u32, st: &mut Self::Cpu) -> Result<(), Failure>;

    /// Counts since `arm`, one per counter. Runs on `cpu`.
    fn read(&self, cpu: u32, st: &mut Self::Cpu, out: &mut [Reading]);

    /// Stops counting and puts back what was there; the final counts go to `out`. Runs on
    /// `cpu`, also from its hotplug callback when it goes offline.
    fn disarm(&self, cpu: u32, st: &mut Self::Cpu, out: &mut [Reading]);

    /// Whether `arm` may run in a CPU-online hotplug callback. perf's counters cannot be
    /// created there (creation takes the hotplug lock): they are re-created from a work item.
    fn arms_in_hotplug(&self) -> bool;

    /// Whether the counters keep counting correctly across a system suspend by themselves.
    #[cfg_attr(not(CONFIG_PM_SLEEP), allow(dead_code))]
    fn survives_suspend(&self) -> bool;

    /// Counter width in bits (64 when the counts are 64-bit already).
    fn width(&self) -> u32;

    /// The shortest time in which a counter can wrap around.
    fn wrap_ns(&self) -> u64 {
        u64::MAX
    }

    /// `wire::CPU_*` flags the back-end's own arrangement implies for this CPU.
    fn cpu_flags(&self, _st: &Self::Cpu) -> u32 {
        0
    }
}
