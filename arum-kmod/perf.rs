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

impl Backend for PerfBackend {
    type Cpu = KVec<PerfEvent>;

    fn prepare(&self, cpu: u32) -> Result<Self::Cpu, Failure> {
        let mut events = KVec::with_capacity(self.configs.len(), GFP_KERNEL)?;
        for (i, c) in self.configs.iter().enumerate() {
            let event = PerfEvent::new(cpu, c).map_err(|e| {
                Failure::new(e, wire::ERR_PERF_CREATE)
                    .on_cpu(cpu)
                    .counter(i)
            })?;
            events.push(event, GFP_KERNEL)?;
        }
        Ok(events)
    }

    fn arm(&self, _cpu: u32, events: &mut Self::Cpu) -> Result<(), Failure> {
        events.iter().for_each(PerfEvent::enable);
        Ok(())
    }

    fn read(&self, _cpu: u32, events: &mut Self::Cpu, out: &mut [Reading]) {
        for (e, r) in events.iter().zip(out.iter_mut()) {
            let v = e.read();
            *r = Reading {
                value: v.value,
                enabled_ns: v.enabled_ns,
                running_ns: v.running_ns,
            };
        }
    }

    fn disarm(&self, cpu: u32, events: &mut Self::Cpu, out: &mut [Reading]) {
        events.iter().for_each(PerfEvent::disable);
        self.read(cpu, events, out);
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
}
