// SPDX-License-Identifier: GPL-2.0
//! The perf back-end: one kernel perf counter per requested event on each CPU, created disabled
//! and then enabled on every CPU at once. It cooperates with perf, the NMI watchdog and
//! virtualisation, and multiplexes when there are more events than counters (the per-counter
//! enabled/running times say how much).

use kernel::prelude::*;

use crate::backend::{Backend, Failure, Reading};
use crate::ffi::{PerfConfig, PerfEvent};
use crate::wire;

pub(crate) struct PerfBackend {
    configs: KVec<PerfConfig>,
}

impl PerfBackend {
    /// The counters of a validated request (the allow-list and AnyThread were dealt with).
    pub(crate) fn new(req: &wire::Request) -> Result<Self, Failure> {
        let (user, kernel) = (
            req.flags & wire::FLAG_USER != 0,
            req.flags & wire::FLAG_KERNEL != 0,
        );
        let mut configs = KVec::with_capacity(req.active().len(), GFP_KERNEL)?;
        for c in req.active() {
            configs.push(
                PerfConfig {
                    type_: c.perf_type,
                    config: c.config,
                    config1: c.config1,
                    user,
                    kernel,
                },
                GFP_KERNEL,
            )?;
        }
        Ok(PerfBackend { configs })
    }
}

/// One CPU's counters, each with its reading when it was last armed: a perf counter's value
/// and times run from its creation, and a counter armed again (after a resume) must count from
/// there, as the session expects of every back-end. A counter the CPU's PMU does not have (the
/// other core type of a hybrid part) is absent here and reads 0 with no time.
pub(crate) struct CpuEvents {
    events: KVec<Option<PerfEvent>>,
    armed_at: KVec<Reading>,
}

impl Backend for PerfBackend {
    type Cpu = CpuEvents;

    fn prepare(&self, cpu: u32) -> Result<Self::Cpu, Failure> {
        let mut events = KVec::with_capacity(self.configs.len(), GFP_KERNEL)?;
        for (i, c) in self.configs.iter().enumerate() {
            let event = match PerfEvent::new(cpu, c) {
                // No such event on this CPU's PMU: the session decides once every CPU is
                // prepared (a counter absent everywhere refuses the request).
                Err(e) if e == ENOENT => None,
                _ if crate::test_hooks::perf_absent(cpu, i) => None,
                Ok(event) => Some(event),
                Err(e) => {
                    return Err(Failure::new(e, wire::ERR_PERF_CREATE)
                        .on_cpu(cpu)
                        .counter(i))
                }
            };
            events.push(event, GFP_KERNEL)?;
        }
        let armed_at = KVec::from_elem(Reading::default(), events.len(), GFP_KERNEL)?;
        Ok(CpuEvents { events, armed_at })
    }

    fn absent(&self, st: &Self::Cpu, counter: usize) -> bool {
        st.events.get(counter).is_some_and(Option::is_none)
    }

    fn arm(&self, _cpu: u32, st: &mut Self::Cpu) -> Result<(), Failure> {
        for (e, at) in st.events.iter().zip(st.armed_at.iter_mut()) {
            if let Some(e) = e {
                *at = lifetime(e);
                e.enable();
            }
        }
        Ok(())
    }

    fn read(&self, _cpu: u32, st: &mut Self::Cpu, out: &mut [Reading]) {
        for ((e, at), r) in st.events.iter().zip(st.armed_at.iter()).zip(out.iter_mut()) {
            *r = match e {
                Some(e) => {
                    let now = lifetime(e);
                    Reading {
                        value: now.value.wrapping_sub(at.value),
                        enabled_ns: now.enabled_ns.wrapping_sub(at.enabled_ns),
                        running_ns: now.running_ns.wrapping_sub(at.running_ns),
                    }
                }
                None => Reading::default(),
            };
        }
    }

    fn disarm(&self, cpu: u32, st: &mut Self::Cpu, out: &mut [Reading]) {
        st.events.iter().flatten().for_each(PerfEvent::disable);
        self.read(cpu, st, out);
    }

    fn arms_in_hotplug(&self) -> bool {
        false
    }

    fn survives_suspend(&self) -> bool {
        true
    }

    fn width(&self) -> u32 {
        64
    }

    fn cpu_flags(&self, st: &Self::Cpu) -> u32 {
        if st.events.iter().any(Option::is_none) {
            wire::CPU_COUNTER_ABSENT
        } else {
            0
        }
    }
}

/// The counter's value and times since its creation.
fn lifetime(e: &PerfEvent) -> Reading {
    let v = e.read();
    Reading {
        value: v.value,
        enabled_ns: v.enabled_ns,
        running_ns: v.running_ns,
    }
}
