// SPDX-License-Identifier: GPL-2.0
//! A simulated PMU behind the register back-end, for tests: no machine here has a PMU, and
//! QEMU's emulator ignores counter MSRs. It models the counter and control registers of one
//! family as the hardware behaves: enabled counters advance by `rate` events per microsecond
//! (per counted thread on NetBurst, where the CCCR's ESCR select and the ESCR's thread bits
//! decide), wrap at `width` bits, need the global enable where the family has one, lose their
//! contents when a CPU powers up again, and are claimed through an owner map of their own (the
//! simulation never claims the machine's real counters). Every other register faults.
//!
//! `/sys/kernel/debug/arum/sim` shows which counters run on each core, for the tests.

use kernel::fmt;
use kernel::prelude::*;
use kernel::sync::{Arc, SpinLock};

use crate::ffi::{self, Now};
use crate::msr::{self, Global, Layout};
use crate::wire;

/// General counters modelled: NetBurst's 18, the most any family has.
const SIM_GENERAL: usize = msr::NETBURST_COUNTERS as usize;
/// Fixed counters modelled: Intel's architectural four.
const SIM_FIXED: usize = msr::INTEL_MAX_FIXED as usize;
const SIM_SLOTS: usize = SIM_GENERAL + SIM_FIXED;
const SIM_ESCRS: usize = wire::NETBURST_ESCRS.len();

const EVTSEL_EN: u64 = 1 << 22;
const CCCR_ENABLE: u64 = 1 << 12;
const ESCR_T0: u64 = 0b1100;
const ESCR_T1: u64 = 0b0011;
/// What perf's NMI watchdog leaves in an Intel PMU: fixed counter 1 (cycles) counting OS and
/// user with its overflow interrupt, and its global enable.
const WATCHDOG_FIXED_CTRL: u64 = 0xB << 4;
const WATCHDOG_GLOBAL: u64 = 1 << 33;

/// The registers of one core.
#[derive(Clone, Copy)]
struct SimCore {
    ctl: [u64; SIM_GENERAL],
    escr: [u64; SIM_ESCRS],
    fixed_ctrl: u64,
    global: u64,
    /// Per counter: value when its rate last changed, since when, and its rate multiplier
    /// (0: stopped; NetBurst: the number of threads counted).
    base: [u64; SIM_SLOTS],
    since: [Option<Now>; SIM_SLOTS],
    mult: [u64; SIM_SLOTS],
}

/// How the simulated PMU is built (module parameters).
#[derive(Clone, Copy)]
pub(crate) struct SimConfig {
    pub(crate) layout: Layout,
    pub(crate) rate_per_us: u64,
    /// CPUs 2k and 2k+1 are the two threads of core k and share its registers.
    pub(crate) ht: bool,
    /// Another owner (perf with the NMI watchdog) holds every counter, and fixed counter 1
    /// runs.
    pub(crate) busy: bool,
    /// A register whose accesses fault, or 0.
    pub(crate) fail_msr: u32,
    /// The global enable's value at power-up.
    pub(crate) global_at_power_on: u64,
    /// Each event-select write takes this long (a slow CPU, to show CPUs start in parallel).
    pub(crate) delay_ms: u32,
}

#[pin_data]
pub(crate) struct SimPmu {
    cfg: SimConfig,
    #[pin]
    cores: SpinLock<KVec<SimCore>>,
    /// Claimed general counters, bit per counter.
    #[pin]
    claimed: SpinLock<u64>,
}

impl SimPmu {
    pub(crate) fn new(cfg: SimConfig, ncpus: u32) -> Result<Arc<SimPmu>> {
        let ncores = if cfg.ht { ncpus.div_ceil(2) } else { ncpus };
        let mut cores = KVec::with_capacity(ncores as usize, GFP_KERNEL)?;
        for _ in 0..ncores {
            cores.push(Self::power_on_state(&cfg), GFP_KERNEL)?;
        }
        let claimed = if cfg.busy {
            (1u64 << cfg.layout.general) - 1
        } else {
            0
        };
        Arc::pin_init(
            pin_init!(SimPmu {
                cfg,
                cores <- kernel::new_spinlock!(cores, "arum_sim"),
                claimed <- kernel::new_spinlock!(claimed, "arum_sim_claims"),
            }),
            GFP_KERNEL,
        )
    }

    fn power_on_state(cfg: &SimConfig) -> SimCore {
        let mut c = SimCore {
            ctl: [0; SIM_GENERAL],
            escr: [0; SIM_ESCRS],
            fixed_ctrl: 0,
            global: cfg.global_at_power_on,
            base: [0; SIM_SLOTS],
            since: [None; SIM_SLOTS],
            mult: [0; SIM_SLOTS],
        };
        if cfg.busy && cfg.layout.fixed > 1 {
            c.fixed_ctrl = WATCHDOG_FIXED_CTRL;
            c.global |= WATCHDOG_GLOBAL;
        }
        c
    }

    /// The CPU's core powers up (it comes back online, or the system resumed): its registers
    /// hold their power-on values again, as on real hardware. With Hyper-Threading the core is
    /// shared, so only a lone thread's return resets it.
    pub(crate) fn power_on(&self, cpu: u32) {
        if self.cfg.ht {
            return;
        }
        let now = Now::now();
        let mut cores = self.cores.lock();
        if let Some(c) = cores.get_mut(cpu as usize) {
            *c = Self::power_on_state(&self.cfg);
            self.settle(c, now);
        }
    }

    /// Every core powers up (resume from a system suspend).
    #[cfg_attr(not(CONFIG_PM_SLEEP), allow(dead_code))]
    pub(crate) fn power_on_all(&self) {
        let now = Now::now();
        let mut cores = self.cores.lock();
        for c in cores.iter_mut() {
            *c = Self::power_on_state(&self.cfg);
            self.settle(c, now);
        }
    }

    pub(crate) fn layout(&self) -> Layout {
        self.cfg.layout
    }

    /// Events per microsecond each counter gains while enabled.
    pub(crate) fn rate_per_us(&self) -> u64 {
        self.cfg.rate_per_us
    }

    pub(crate) fn thread_of(&self, cpu: u32) -> (u32, u32) {
        if self.cfg.ht {
            (cpu / 2, cpu % 2)
        } else {
            (cpu, 0)
        }
    }

    fn mask(&self) -> u64 {
        match self.cfg.layout.width {
            w if w >= 64 => u64::MAX,
            w => (1u64 << w) - 1,
        }
    }

    /// The counter slot an MSR is: general 0.., fixed SIM_GENERAL + k.
    fn counter_slot(&self, msr: u32) -> Option<usize> {
        let l = &self.cfg.layout;
        if let Some(i) = (0..l.general).find(|&i| msr == l.ctr(i)) {
            return Some(i as usize);
        }
        (0..l.fixed)
            .find(|&k| msr == msr::IA32_FIXED_CTR0 + k)
            .map(|k| SIM_GENERAL + k as usize)
    }

    fn escr_slot(&self, msr: u32) -> Option<usize> {
        if self.cfg.layout.style != wire::STYLE_NETBURST {
            return None;
        }
        wire::NETBURST_ESCRS.iter().position(|e| e.msr == msr)
    }

    /// How fast counter `slot` counts now, in multiples of the rate.
    fn multiplier(&self, c: &SimCore, slot: usize) -> u64 {
        let l = &self.cfg.layout;
        let global = |bit: usize| l.global == Global::None || c.global & (1 << bit) != 0;
        if slot >= SIM_GENERAL {
            let k = slot - SIM_GENERAL;
            let on = k < l.fixed as usize && (c.fixed_ctrl >> (4 * k)) & 3 != 0 && global(32 + k);
            return u64::from(on);
        }
        if slot >= l.general as usize {
            return 0;
        }
        if l.style != wire::STYLE_NETBURST {
            return u64::from(c.ctl[slot] & EVTSEL_EN != 0 && global(slot));
        }
        let cccr = c.ctl[slot];
        if cccr & CCCR_ENABLE == 0 {
            return 0;
        }
        // The counter counts what the ESCR its CCCR selects feeds it, for the threads whose
        // bits that ESCR has.
        let select = ((cccr >> 13) & 7) as u32;
        let Some(e) = wire::NETBURST_ESCRS
            .iter()
            .position(|e| e.select == select && e.counters.contains(&(slot as u32)))
        else {
            return 0;
        };
        let escr = c.escr[e];
        u64::from(escr & ESCR_T0 != 0) + u64::from(escr & ESCR_T1 != 0)
    }

    fn value(&self, c: &SimCore, slot: usize, now: Now) -> u64 {
        let advanced = match c.since[slot] {
            // ns × rate / 1000 modulo 2^64, exactly: a long session at a high rate overflows
            // 64 bits, and the counter, narrower still, wraps anyway.
            Some(since) => {
                let ns = ffi::ns_between(since, now);
                let per_us = self.cfg.rate_per_us.wrapping_mul(c.mult[slot]);
                (ns / 1000)
                    .wrapping_mul(per_us)
                    .wrapping_add((ns % 1000).wrapping_mul(per_us) / 1000)
            }
            None => 0,
        };
        c.base[slot].wrapping_add(advanced) & self.mask()
    }

    /// Re-evaluates every counter's rate after a control register changed.
    fn settle(&self, c: &mut SimCore, now: Now) {
        for slot in 0..SIM_SLOTS {
            let m = self.multiplier(c, slot);
            if m != c.mult[slot] || c.since[slot].is_none() {
                c.base[slot] = self.value(c, slot, now);
                c.since[slot] = Some(now);
                c.mult[slot] = m;
            }
        }
    }

    fn core_of(&self, cpu: u32) -> usize {
        self.thread_of(cpu).0 as usize
    }

    pub(crate) fn read(&self, cpu: u32, msr: u32) -> Result<u64> {
        self.read_timed(cpu, msr).map(|(v, _)| v)
    }

    /// A register's value and the instant it had it (for a counter, the instant its value was
    /// computed for, as hardware's is the instant of the `rdmsr`).
    pub(crate) fn read_timed(&self, cpu: u32, msr: u32) -> Result<(u64, Now)> {
        if msr == self.cfg.fail_msr {
            return Err(EIO);
        }
        let cores = self.cores.lock();
        let now = Now::now();
        let c = cores.get(self.core_of(cpu)).ok_or(ENXIO)?;
        let l = &self.cfg.layout;
        if let Some(slot) = self.counter_slot(msr) {
            return Ok((self.value(c, slot, now), now));
        }
        if let Some(i) = (0..l.general).find(|&i| msr == l.ctl(i)) {
            return Ok((c.ctl[i as usize], now));
        }
        if let Some(e) = self.escr_slot(msr) {
            return Ok((c.escr[e], now));
        }
        match msr {
            msr::IA32_FIXED_CTR_CTRL if l.fixed > 0 => Ok((c.fixed_ctrl, now)),
            _ if Some(msr) == l.global_msr() => Ok((c.global, now)),
            _ => Err(EIO),
        }
    }

    pub(crate) fn write(&self, cpu: u32, msr: u32, value: u64) -> Result {
        if msr == self.cfg.fail_msr {
            return Err(EIO);
        }
        let l = self.cfg.layout;
        if self.cfg.delay_ms > 0 && (0..l.general).any(|i| msr == l.ctl(i)) {
            // Register writes run in process context.
            ffi::sleep_ms(self.cfg.delay_ms);
        }
        let mut cores = self.cores.lock();
        let now = Now::now();
        let core = self.core_of(cpu);
        let c = cores.get_mut(core).ok_or(ENXIO)?;
        if let Some(slot) = self.counter_slot(msr) {
            if value & !self.mask() != 0 {
                return Err(EIO);
            }
            c.base[slot] = value;
            c.since[slot] = Some(now);
            return Ok(());
        }
        if let Some(i) = (0..l.general).find(|&i| msr == l.ctl(i)) {
            c.ctl[i as usize] = value;
        } else if let Some(e) = self.escr_slot(msr) {
            c.escr[e] = value;
        } else if msr == msr::IA32_FIXED_CTR_CTRL && l.fixed > 0 {
            c.fixed_ctrl = value;
        } else if Some(msr) == l.global_msr() {
            c.global = value;
        } else {
            return Err(EIO);
        }
        self.settle(c, now);
        Ok(())
    }

    /// The debugfs view: per core, which counters run (bit per general counter, fixed k at
    /// bit 32 + k), the global enable and the fixed-counter control; then the claims.
    pub(crate) fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cores = self.cores.lock();
        for (i, c) in cores.iter().enumerate() {
            let mut running = 0u64;
            for slot in 0..SIM_SLOTS {
                if self.multiplier(c, slot) > 0 {
                    let bit = if slot >= SIM_GENERAL {
                        32 + slot - SIM_GENERAL
                    } else {
                        slot
                    };
                    running |= 1 << bit;
                }
            }
            writeln!(
                f,
                "core {i} running {running:#x} global {:#x} fixed_ctrl {:#x}",
                c.global, c.fixed_ctrl
            )?;
        }
        drop(cores);
        writeln!(f, "claimed {:#x}", *self.claimed.lock())
    }
}

/// A claim on a simulated counter, released on drop.
pub(crate) struct SimClaim {
    pmu: Arc<SimPmu>,
    bit: u64,
}

impl SimClaim {
    pub(crate) fn new(pmu: &Arc<SimPmu>, ctr: u32) -> Option<SimClaim> {
        let slot = pmu.counter_slot(ctr)?;
        let bit = 1u64 << slot;
        let mut claimed = pmu.claimed.lock();
        if *claimed & bit != 0 {
            return None;
        }
        *claimed |= bit;
        Some(SimClaim {
            pmu: pmu.clone(),
            bit,
        })
    }
}

impl Drop for SimClaim {
    fn drop(&mut self) {
        *self.pmu.claimed.lock() &= !self.bit;
    }
}
