// SPDX-License-Identifier: GPL-2.0
//! CPU hotplug and system suspend: the module's callbacks and the state they reach (the one
//! active session, the simulated PMU).
//!
//! The CPU callbacks run on the CPU concerned, in its hotplug thread, with the hotplug lock
//! held by whoever takes the CPU down or up: they take the active-session lock (`ffi`'s) and
//! then the session lock, in that order like every other path, and never drop the last reference to a session (which
//! would release perf counters, taking the hotplug lock again).

use kernel::prelude::*;
use kernel::sync::Arc;

use crate::backend::Failure;
use crate::ffi::{self, CpusReadGuard};
use crate::sim::SimPmu;

/// What a running session does for the file that owns it and for the callbacks.
pub(crate) trait Active: Send + Sync {
    /// Stops counting on every CPU for good and returns the response bytes.
    fn stop(&self) -> Result<KVVec<u8>, Failure>;
    /// `cpu` is going offline; this runs on it.
    fn cpu_offline(&self, cpu: u32);
    /// `cpu` is back; this runs on it.
    fn cpu_online(self: Arc<Self>, cpu: u32);
    /// The system is about to suspend.
    #[cfg_attr(not(CONFIG_PM_SLEEP), allow(dead_code))]
    fn suspend(&self);
    /// The system resumed.
    #[cfg_attr(not(CONFIG_PM_SLEEP), allow(dead_code))]
    fn resume(self: Arc<Self>);
}

/// Makes `session` the one the callbacks reach, if every CPU of `cpus` is online (checked
/// under the hotplug lock, so none can go before the session is reachable). Else the first
/// offline CPU.
pub(crate) fn publish(session: Arc<dyn Active>, cpus: &[u32]) -> Result<(), u32> {
    let _hotplug = CpusReadGuard::lock();
    if let Some(&cpu) = cpus.iter().find(|&&cpu| !ffi::cpu_online(cpu)) {
        return Err(cpu);
    }
    ffi::with_active(|active| *active = Some(session));
    Ok(())
}

/// Withdraws the session from the callbacks; the caller drops it outside every lock.
pub(crate) fn withdraw() -> Option<Arc<dyn Active>> {
    ffi::with_active(Option::take)
}

/// The simulated PMU, whose registers a CPU's return resets.
pub(crate) fn set_sim(sim: Option<Arc<SimPmu>>) {
    ffi::with_sim(|s| *s = sim);
}

pub(crate) fn sim() -> Option<Arc<SimPmu>> {
    ffi::with_sim(|s| s.clone())
}

/// A CPU came online (`ffi::Callbacks`); this runs on it.
pub(crate) fn cpu_online(cpu: u32) {
    crate::test_hooks::cpu_came_online();
    ffi::with_sim(|sim| {
        if let Some(sim) = sim {
            sim.power_on(cpu);
        }
    });
    ffi::with_active(|active| {
        if let Some(session) = active {
            session.clone().cpu_online(cpu);
        }
    });
}

/// A CPU is going offline; this runs on it.
pub(crate) fn cpu_offline(cpu: u32) {
    ffi::with_active(|active| {
        if let Some(session) = active {
            session.cpu_offline(cpu);
        }
    });
}

/// The system is about to sleep (`true`) or has resumed (`false`).
#[cfg_attr(not(CONFIG_PM_SLEEP), allow(dead_code))]
pub(crate) fn sleep(suspending: bool) {
    if suspending {
        ffi::with_active(|active| {
            if let Some(session) = active {
                session.suspend();
            }
        });
    } else {
        // A resumed machine's counters hold their power-on values.
        ffi::with_sim(|sim| {
            if let Some(sim) = sim {
                sim.power_on_all();
            }
        });
        ffi::with_active(|active| {
            if let Some(session) = active {
                session.clone().resume();
            }
        });
    }
}

/// The module's hotplug state and PM notifier, removed on drop (the simulated PMU with them).
pub(crate) struct Registration {
    _callbacks: ffi::Callbacks,
}

impl Registration {
    pub(crate) fn new() -> Result<Self> {
        Ok(Registration {
            _callbacks: ffi::Callbacks::register()?,
        })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        set_sim(None);
    }
}
