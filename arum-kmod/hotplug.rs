// SPDX-License-Identifier: GPL-2.0
//! CPU hotplug and system suspend: the module's callbacks and the state they reach (the one
//! active session, the simulated PMU).
//!
//! The CPU callbacks run on the CPU concerned, in its hotplug thread, with the hotplug lock
//! held by whoever takes the CPU down or up: they take `ACTIVE` and then the session lock, in
//! that order like every other path, and never drop the last reference to a session (which
//! would release perf counters, taking the hotplug lock again).

use core::ffi::{c_int, c_uint};

use kernel::bindings;
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

kernel::global_lock! {
    // SAFETY: initialised in `Registration::new`, before the callbacks are registered.
    unsafe(uninit) static ACTIVE: Mutex<Option<Arc<dyn Active>>> = None;
}

kernel::global_lock! {
    // SAFETY: initialised in `Registration::new`, before the callbacks are registered.
    unsafe(uninit) static SIM: Mutex<Option<Arc<SimPmu>>> = None;
}

/// Makes `session` the one the callbacks reach, if every CPU of `cpus` is online (checked
/// under the hotplug lock, so none can go before the session is reachable). Else the first
/// offline CPU.
pub(crate) fn publish(session: Arc<dyn Active>, cpus: &[u32]) -> Result<(), u32> {
    let _hotplug = CpusReadGuard::lock();
    if let Some(&cpu) = cpus.iter().find(|&&cpu| !ffi::cpu_online(cpu)) {
        return Err(cpu);
    }
    *ACTIVE.lock() = Some(session);
    Ok(())
}

/// Withdraws the session from the callbacks; the caller drops it outside every lock.
pub(crate) fn withdraw() -> Option<Arc<dyn Active>> {
    ACTIVE.lock().take()
}

/// The simulated PMU, whose registers a CPU's return resets.
pub(crate) fn set_sim(sim: Option<Arc<SimPmu>>) {
    *SIM.lock() = sim;
}

pub(crate) fn sim() -> Option<Arc<SimPmu>> {
    SIM.lock().clone()
}

unsafe extern "C" fn cpu_online(cpu: c_uint) -> c_int {
    if let Some(sim) = &*SIM.lock() {
        sim.power_on(cpu);
    }
    let active = ACTIVE.lock();
    if let Some(session) = &*active {
        session.clone().cpu_online(cpu);
    }
    0
}

unsafe extern "C" fn cpu_offline(cpu: c_uint) -> c_int {
    if let Some(session) = &*ACTIVE.lock() {
        session.cpu_offline(cpu);
    }
    0
}

#[cfg(CONFIG_PM_SLEEP)]
unsafe extern "C" fn pm_event(
    _nb: *mut bindings::notifier_block,
    action: kernel::ffi::c_ulong,
    _data: *mut core::ffi::c_void,
) -> c_int {
    match action as u32 {
        bindings::PM_SUSPEND_PREPARE | bindings::PM_HIBERNATION_PREPARE => {
            if let Some(session) = &*ACTIVE.lock() {
                session.suspend();
            }
        }
        bindings::PM_POST_SUSPEND | bindings::PM_POST_HIBERNATION | bindings::PM_POST_RESTORE => {
            // A resumed machine's counters hold their power-on values.
            if let Some(sim) = &*SIM.lock() {
                sim.power_on_all();
            }
            if let Some(session) = &*ACTIVE.lock() {
                session.clone().resume();
            }
        }
        _ => {}
    }
    bindings::NOTIFY_OK as c_int
}

/// The module's hotplug state and PM notifier, removed on drop.
pub(crate) struct Registration {
    state: c_int,
    #[cfg(CONFIG_PM_SLEEP)]
    pm: Pin<KBox<kernel::types::Opaque<bindings::notifier_block>>>,
}

// SAFETY: the notifier block is only touched by the PM core (under its own lock) and by Drop.
unsafe impl Send for Registration {}
// SAFETY: as above; `&Registration` gives no access.
unsafe impl Sync for Registration {}

impl Registration {
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: called once from module init, before any callback or file can use them.
        unsafe {
            ACTIVE.init();
            SIM.init();
        }
        // SAFETY: the name is static; the callbacks have the right signature and stay valid
        // until `__cpuhp_remove_state` in Drop; `false`: not invoked for the CPUs already up.
        let state = unsafe {
            bindings::__cpuhp_setup_state(
                bindings::cpuhp_state_CPUHP_AP_ONLINE_DYN,
                c"arum:online".as_char_ptr(),
                false,
                Some(cpu_online),
                Some(cpu_offline),
                false,
            )
        };
        kernel::error::to_result(state)?;
        #[cfg(CONFIG_PM_SLEEP)]
        let pm = {
            let nb = KBox::pin(
                kernel::types::Opaque::new(bindings::notifier_block {
                    notifier_call: Some(pm_event),
                    ..Default::default()
                }),
                GFP_KERNEL,
            );
            let nb = match nb {
                Ok(nb) => nb,
                Err(e) => {
                    // SAFETY: the state was set up above.
                    unsafe { bindings::__cpuhp_remove_state(state as _, false) };
                    return Err(e.into());
                }
            };
            // SAFETY: the block is pinned on the heap and unregistered in Drop before it is
            // freed.
            if let Err(e) =
                kernel::error::to_result(unsafe { bindings::register_pm_notifier(nb.get()) })
            {
                // SAFETY: as above.
                unsafe { bindings::__cpuhp_remove_state(state as _, false) };
                return Err(e);
            }
            nb
        };
        Ok(Registration {
            state,
            #[cfg(CONFIG_PM_SLEEP)]
            pm,
        })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        #[cfg(CONFIG_PM_SLEEP)]
        // SAFETY: registered in `new`.
        unsafe {
            bindings::unregister_pm_notifier(self.pm.get())
        };
        // SAFETY: set up in `new`; afterwards no callback runs.
        unsafe { bindings::__cpuhp_remove_state(self.state as _, false) };
        set_sim(None);
    }
}
