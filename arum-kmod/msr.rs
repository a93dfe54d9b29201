// SPDX-License-Identifier: GPL-2.0
//! The register back-end: the counter and control registers of one family programmed directly,
//! after claiming them from the kernel (refused when perf or the NMI watchdog holds them), never
//! reset (the value at arming is the baseline), folded modulo the counter width into 64-bit
//! totals, and put back as they were when counting stops on any path.
//!
//! Which registers may be touched is fixed here, per family, capped at the architectural
//! maxima: a CPUID that reports more counters than the architecture has cannot make the module
//! write other registers.

use kernel::prelude::*;
use kernel::sync::Arc;

use crate::backend::{Backend, Failure, Reading};
use crate::ffi::{self, NmiReservation, Now};
use crate::sim::{SimClaim, SimPmu};
use crate::wire;

pub(crate) const IA32_PMC0: u32 = 0xC1;
pub(crate) const IA32_PERFEVTSEL0: u32 = 0x186;
pub(crate) const IA32_FIXED_CTR0: u32 = 0x309;
pub(crate) const IA32_FIXED_CTR_CTRL: u32 = 0x38D;
pub(crate) const IA32_PERF_GLOBAL_CTRL: u32 = 0x38F;
pub(crate) const AMD_PERF_CTL0: u32 = 0xC001_0000;
pub(crate) const AMD_PERF_CTR0: u32 = 0xC001_0004;
pub(crate) const AMD_F15H_PERF_CTL0: u32 = 0xC001_0200;
pub(crate) const AMD_F15H_PERF_CTR0: u32 = 0xC001_0201;
/// PerfCntrGlobalCtl of AMD's PerfMonV2 (Zen 4 and later).
pub(crate) const AMD_PERF_CNTR_GLOBAL_CTL: u32 = 0xC000_0301;
pub(crate) const NETBURST_CTR0: u32 = 0x300;
pub(crate) const NETBURST_CCCR0: u32 = 0x360;

pub(crate) const INTEL_MAX_FIXED: u32 = wire::INTEL_MAX_FIXED;
pub(crate) const AMD_LEGACY_GENERAL: u32 = 4;
pub(crate) const AMD_MAX_GENERAL: u32 = 6;
pub(crate) const NETBURST_COUNTERS: u32 = 18;

const EVTSEL_USR: u64 = 1 << 16;
const EVTSEL_OS: u64 = 1 << 17;
const EVTSEL_EN: u64 = 1 << 22;
const FIXED_OS: u64 = 1;
const FIXED_USR: u64 = 2;
const ESCR_T0_OS: u64 = 1 << 3;
const ESCR_T0_USR: u64 = 1 << 2;
const ESCR_T1_OS: u64 = 1 << 1;
const ESCR_T1_USR: u64 = 1 << 0;
const CCCR_ENABLE: u64 = 1 << 12;
/// The most events a counter can gain per cycle on any supported CPU, for the wrap time.
const MAX_EVENTS_PER_CYCLE: u64 = 16;
/// CPUID leaf 7's EDX: a hybrid part; the TSX force-abort control.
const CPUID7_EDX_HYBRID: u32 = 1 << 15;
const CPUID7_EDX_TSX_FORCE_ABORT: u32 = 1 << 13;

/// The global enable register a family has, if any: Intel's from perfmon version 2, AMD's from
/// PerfMonV2. Without it set, the counters do not count.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Global {
    None,
    Intel,
    Amd,
}

/// Where a family keeps its counters.
#[derive(Clone, Copy)]
pub(crate) struct Layout {
    pub(crate) style: u32,
    pub(crate) general: u32,
    pub(crate) fixed: u32,
    pub(crate) width: u32,
    /// First event-select (AMD, Intel) or CCCR (NetBurst) MSR; stride between counters.
    pub(crate) ctl_base: u32,
    pub(crate) ctr_base: u32,
    pub(crate) stride: u32,
    pub(crate) global: Global,
    /// Intel's architectural performance-monitoring version (CPUID leaf 0xA); 0 elsewhere.
    pub(crate) perfmon_version: u32,
}

pub(crate) const AMD_K8: Layout = Layout {
    style: wire::STYLE_AMD,
    general: AMD_LEGACY_GENERAL,
    fixed: 0,
    width: 48,
    ctl_base: AMD_PERF_CTL0,
    ctr_base: AMD_PERF_CTR0,
    stride: 1,
    global: Global::None,
    perfmon_version: 0,
};
pub(crate) const AMD_ZEN: Layout = Layout {
    general: AMD_MAX_GENERAL,
    ctl_base: AMD_F15H_PERF_CTL0,
    ctr_base: AMD_F15H_PERF_CTR0,
    stride: 2,
    ..AMD_K8
};
pub(crate) const AMD_ZEN4: Layout = Layout {
    global: Global::Amd,
    ..AMD_ZEN
};
pub(crate) const NETBURST: Layout = Layout {
    style: wire::STYLE_NETBURST,
    general: NETBURST_COUNTERS,
    fixed: 0,
    width: 40,
    ctl_base: NETBURST_CCCR0,
    ctr_base: NETBURST_CTR0,
    stride: 1,
    global: Global::None,
    perfmon_version: 0,
};
pub(crate) const CORE2: Layout = Layout {
    style: wire::STYLE_INTEL,
    general: 2,
    fixed: 3,
    width: 40,
    ctl_base: IA32_PERFEVTSEL0,
    ctr_base: IA32_PMC0,
    stride: 1,
    global: Global::Intel,
    perfmon_version: 2,
};
/// A part with version 6 of Intel's architectural performance monitoring, whose counters perf
/// may address in the MSR range from 0x1900: the simulated PMU's case of an unprovable owner.
#[cfg_attr(not(arum_sim), allow(dead_code))]
pub(crate) const INTEL_V6: Layout = Layout {
    general: 8,
    fixed: 4,
    width: 48,
    perfmon_version: 6,
    ..CORE2
};

impl Layout {
    /// Whether claiming a counter in the kernel's counter allocator (`NmiReservation`) proves
    /// that nobody else uses it. perf, and the NMI watchdog through it, claim every counter at
    /// the addresses they use; the allocator tracks the legacy and AMD families' addresses only,
    /// and answers "yours" for any other. From version 6 of Intel's architectural performance
    /// monitoring perf may use the range from 0x1900, so a claim there proves nothing.
    pub(crate) fn owner_provable(&self) -> bool {
        self.style != wire::STYLE_INTEL || self.perfmon_version <= 5
    }

    pub(crate) fn ctl(&self, index: u32) -> u32 {
        self.ctl_base + index * self.stride
    }

    pub(crate) fn ctr(&self, index: u32) -> u32 {
        if index >= wire::FIXED_BASE {
            IA32_FIXED_CTR0 + index - wire::FIXED_BASE
        } else {
            self.ctr_base + index * self.stride
        }
    }

    pub(crate) fn global_msr(&self) -> Option<u32> {
        match self.global {
            Global::None => None,
            Global::Intel => Some(IA32_PERF_GLOBAL_CTRL),
            Global::Amd => Some(AMD_PERF_CNTR_GLOBAL_CTL),
        }
    }

    /// The global-enable bit of a counter: general i is bit i, Intel fixed k is bit 32 + k.
    pub(crate) fn global_bit(&self, index: u32) -> u64 {
        if index >= wire::FIXED_BASE {
            1 << (32 + index - wire::FIXED_BASE)
        } else {
            1 << index
        }
    }

    pub(crate) fn limits(&self) -> wire::Limits {
        wire::Limits {
            style: self.style,
            general_counters: self.general,
            fixed_counters: self.fixed,
            msr_allowed: true,
        }
    }

    /// The layout of the CPU this runs on, from CPUID, capped at the architectural maxima.
    pub(crate) fn detect() -> Option<Layout> {
        let (max, ebx, ecx, edx) = ffi::cpuid(0);
        let mut vendor = [0u8; 12];
        vendor[..4].copy_from_slice(&ebx.to_le_bytes());
        vendor[4..8].copy_from_slice(&edx.to_le_bytes());
        vendor[8..].copy_from_slice(&ecx.to_le_bytes());
        let sig = ffi::cpuid(1).0;
        let base = (sig >> 8) & 0xF;
        let family = base + if base == 0xF { (sig >> 20) & 0xFF } else { 0 };
        let max_ext = ffi::cpuid(0x8000_0000).0;
        match &vendor[..] {
            b"AuthenticAMD" if family >= 0x0F => {
                let ext = max_ext >= 0x8000_0001 && ffi::cpuid(0x8000_0001).2 & (1 << 23) != 0;
                if !(ext || family >= 0x17) {
                    return Some(AMD_K8);
                }
                let v2 = max_ext >= 0x8000_0022 && ffi::cpuid(0x8000_0022).0 & 1 != 0;
                if !v2 {
                    return Some(AMD_ZEN);
                }
                let general = (ffi::cpuid(0x8000_0022).1 & 0xF).min(AMD_MAX_GENERAL);
                Some(Layout {
                    general,
                    ..AMD_ZEN4
                })
            }
            b"GenuineIntel" if family == 0x0F => Some(NETBURST),
            b"GenuineIntel" if max >= 0xA => {
                let (a, _, _, d) = ffi::cpuid(0xA);
                let p = wire::IntelPerfmon::from_cpuid(a, d)?;
                let features = if max >= 7 { ffi::cpuid(7).3 } else { 0 };
                if features & CPUID7_EDX_HYBRID != 0 {
                    // Each core type has its own counters, and CPUID describes only the CPU
                    // this runs on: one layout cannot be programmed everywhere.
                    return None;
                }
                // With TSX force-abort, the microcode may take general counter 3 for itself
                // (perf then leaves it alone too): never used here.
                let general = if features & CPUID7_EDX_TSX_FORCE_ABORT != 0 {
                    p.general.min(3)
                } else {
                    p.general
                };
                Some(Layout {
                    general,
                    perfmon_version: p.version,
                    fixed: p.fixed,
                    width: p.width,
                    // Counters count only with their global enable from version 2 on.
                    global: if p.version >= 2 {
                        Global::Intel
                    } else {
                        Global::None
                    },
                    ..CORE2
                })
            }
            _ => None,
        }
    }
}

/// A claim on a counter and its control register, released on drop.
pub(crate) enum Claim {
    Kernel(#[allow(dead_code)] NmiReservation),
    Sim(#[allow(dead_code)] SimClaim),
}

/// Reading and writing the registers of a CPU, and claiming counters: the real MSRs, or the
/// simulated PMU.
pub(crate) enum Registers {
    Hw,
    Sim(Arc<SimPmu>),
}

impl Registers {
    fn read(&self, cpu: u32, msr: u32) -> Result<u64> {
        match self {
            Registers::Hw => ffi::rdmsr_on(cpu, msr),
            Registers::Sim(s) => s.read(cpu, msr),
        }
    }

    /// A register's value and when it was read.
    fn read_timed(&self, cpu: u32, msr: u32) -> Result<(u64, Now)> {
        match self {
            Registers::Hw => ffi::rdmsr_on(cpu, msr).map(|v| (v, Now::now())),
            Registers::Sim(s) => s.read_timed(cpu, msr),
        }
    }

    fn write(&self, cpu: u32, msr: u32, value: u64) -> Result {
        match self {
            Registers::Hw => ffi::wrmsr_on(cpu, msr, value),
            Registers::Sim(s) => s.write(cpu, msr, value),
        }
    }

    fn claim(&self, ctr: u32, sel: u32) -> Option<Claim> {
        match self {
            Registers::Hw => NmiReservation::claim(ctr, sel).map(Claim::Kernel),
            Registers::Sim(s) => SimClaim::new(s, ctr).map(Claim::Sim),
        }
    }

    /// (core, thread) of the CPU this runs on, which is `cpu`. Hyper-Threading pairs matter
    /// only to NetBurst, whose two threads share the counters.
    fn thread_of(&self, cpu: u32) -> (u32, u32) {
        match self {
            Registers::Sim(s) => s.thread_of(cpu),
            Registers::Hw => {
                let (_, ebx, _, edx) = ffi::cpuid(1);
                let apic = ebx >> 24;
                let ht = edx & (1 << 28) != 0 && (ebx >> 16) & 0xFF > 1;
                if ht {
                    (apic >> 1, apic & 1)
                } else {
                    (apic, 0)
                }
            }
        }
    }
}

/// One requested counter, resolved to registers.
#[derive(Clone, Copy)]
struct Counter {
    index: u32,
    ctr: u32,
    /// Event select (AMD, Intel general) or CCCR (NetBurst) value, without enable and mode.
    ctl_value: u64,
    /// NetBurst: the ESCR and its value without thread bits.
    escr_msr: u32,
    escr_value: u64,
}

impl Counter {
    fn fixed(&self) -> bool {
        self.index >= wire::FIXED_BASE
    }
}

pub(crate) struct MsrBackend {
    regs: Registers,
    layout: Layout,
    counters: KVec<Counter>,
    user: bool,
    kernel: bool,
    /// Highest rate any counter can gain, events per microsecond.
    max_rate_per_us: u64,
    _claims: KVec<Claim>,
}

/// What one CPU's counters were before arming, to put back.
#[derive(Clone, Copy, Default)]
struct Saved {
    ctl: u64,
    escr: u64,
}

/// One CPU's state.
pub(crate) struct MsrCpu {
    core: u32,
    thread: u32,
    /// Threads of the core this CPU counts (bit t); 0: its sibling counts them.
    threads: u32,
    /// Raw value at the last reading, and the 64-bit total since arming.
    last: [u64; wire::MAX_COUNTERS],
    total: [u64; wire::MAX_COUNTERS],
    saved: [Saved; wire::MAX_COUNTERS],
    saved_fixed_ctrl: Option<u64>,
    saved_global: Option<u64>,
    /// How many counters `arm` has programmed (all of them once it succeeded).
    programmed: usize,
    /// Per counter, when its baseline was read: its enabled time starts there (a CPU may be
    /// held up between counters, by a hypervisor or a contended lock).
    armed_at: [Option<Now>; wire::MAX_COUNTERS],
}

impl MsrBackend {
    /// Claims the requested counters; refuses if any is taken. With a fixed counter (which the
    /// kernel's owner maps do not cover) a general counter is claimed too: perf claims all of
    /// them or none, so success proves perf holds no counter, the NMI watchdog's fixed one
    /// included.
    pub(crate) fn new(
        req: &wire::Request,
        regs: Registers,
        layout: Layout,
        sim_rate_per_us: Option<u64>,
    ) -> Result<Self, Failure> {
        let mut counters = KVec::with_capacity(req.active().len(), GFP_KERNEL)?;
        let mut claims = KVec::with_capacity(req.active().len() + 1, GFP_KERNEL)?;
        let busy = |i: usize| Failure::new(EBUSY, wire::ERR_COUNTER_BUSY).counter(i);
        let mut fixed_user = None;
        for (i, r) in req.active().iter().enumerate() {
            let c = Counter {
                index: r.index,
                ctr: layout.ctr(r.index),
                ctl_value: r.config,
                escr_msr: r.escr_msr,
                escr_value: r.escr,
            };
            if c.fixed() {
                fixed_user.get_or_insert(i);
            } else {
                // The kernel's maps know a NetBurst counter's control by its ESCR.
                let sel = if layout.style == wire::STYLE_NETBURST {
                    r.escr_msr
                } else {
                    layout.ctl(r.index)
                };
                claims.push(regs.claim(c.ctr, sel).ok_or(busy(i))?, GFP_KERNEL)?;
            }
            counters.push(c, GFP_KERNEL)?;
        }
        if let Some(i) = fixed_user {
            if claims.is_empty() {
                let proof = regs.claim(layout.ctr(0), layout.ctl(0)).ok_or(busy(i))?;
                claims.push(proof, GFP_KERNEL)?;
            }
        }
        let max_rate_per_us = match sim_rate_per_us {
            // NetBurst counts each thread selected in the ESCR: a core's two threads double it.
            Some(rate) if layout.style == wire::STYLE_NETBURST => rate.max(1) * 2,
            Some(rate) => rate.max(1),
            None => (u64::from(ffi::cpu_khz()) / 1000).max(1) * MAX_EVENTS_PER_CYCLE,
        };
        Ok(MsrBackend {
            regs,
            layout,
            counters,
            user: req.flags & wire::FLAG_USER != 0,
            kernel: req.flags & wire::FLAG_KERNEL != 0,
            max_rate_per_us,
            _claims: claims,
        })
    }

    fn mask(&self) -> u64 {
        if self.layout.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.layout.width) - 1
        }
    }

    /// The ESCR thread bits for the threads counted.
    fn escr_threads(&self, threads: u32) -> u64 {
        let mut bits = 0;
        if threads & 1 != 0 {
            bits |=
                if self.user { ESCR_T0_USR } else { 0 } | if self.kernel { ESCR_T0_OS } else { 0 };
        }
        if threads & 2 != 0 {
            bits |=
                if self.user { ESCR_T1_USR } else { 0 } | if self.kernel { ESCR_T1_OS } else { 0 };
        }
        bits
    }

    fn program(&self, cpu: u32, st: &mut MsrCpu) -> Result<(), Failure> {
        let fail =
            |e: Error, i: usize| Failure::new(e, wire::ERR_MSR_ACCESS).on_cpu(cpu).counter(i);
        let l = &self.layout;
        let mode = if self.user { EVTSEL_USR } else { 0 } | if self.kernel { EVTSEL_OS } else { 0 };
        for (i, c) in self.counters.iter().enumerate() {
            if c.fixed() {
                let k = c.index - wire::FIXED_BASE;
                let ctrl = match st.saved_fixed_ctrl {
                    Some(_) => self.regs.read(cpu, IA32_FIXED_CTR_CTRL),
                    None => self.regs.read(cpu, IA32_FIXED_CTR_CTRL).inspect(|v| {
                        st.saved_fixed_ctrl = Some(*v);
                    }),
                }
                .map_err(|e| fail(e, i))?;
                let bits = (if self.kernel { FIXED_OS } else { 0 }
                    | if self.user { FIXED_USR } else { 0 })
                    << (4 * k);
                self.regs
                    .write(cpu, IA32_FIXED_CTR_CTRL, (ctrl & !(0xF << (4 * k))) | bits)
                    .map_err(|e| fail(e, i))?;
            } else if l.style == wire::STYLE_NETBURST {
                st.saved[i].escr = self.regs.read(cpu, c.escr_msr).map_err(|e| fail(e, i))?;
                st.saved[i].ctl = self
                    .regs
                    .read(cpu, l.ctl(c.index))
                    .map_err(|e| fail(e, i))?;
                // Counted in `programmed` before the first write, so a failure puts it back.
                st.programmed = i + 1;
                let escr = c.escr_value | self.escr_threads(st.threads);
                self.regs
                    .write(cpu, c.escr_msr, escr)
                    .map_err(|e| fail(e, i))?;
                self.regs
                    .write(cpu, l.ctl(c.index), c.ctl_value | CCCR_ENABLE)
                    .map_err(|e| fail(e, i))?;
            } else {
                st.saved[i].ctl = self
                    .regs
                    .read(cpu, l.ctl(c.index))
                    .map_err(|e| fail(e, i))?;
                st.programmed = i + 1;
                self.regs
                    .write(cpu, l.ctl(c.index), c.ctl_value | mode | EVTSEL_EN)
                    .map_err(|e| fail(e, i))?;
            }
            st.programmed = i + 1;
        }
        if let Some(msr) = l.global_msr() {
            let g = self.regs.read(cpu, msr).map_err(|e| fail(e, 0))?;
            st.saved_global = Some(g);
            let ours = self
                .counters
                .iter()
                .fold(0, |m, c| m | l.global_bit(c.index));
            self.regs
                .write(cpu, msr, g | ours)
                .map_err(|e| fail(e, 0))?;
        }
        // Never reset a counter: its value once everything counts is the baseline, and its
        // times start there.
        for (i, c) in self.counters.iter().enumerate() {
            let (v, at) = self.regs.read_timed(cpu, c.ctr).map_err(|e| fail(e, i))?;
            st.last[i] = v;
            st.armed_at[i] = Some(at);
            st.total[i] = 0;
        }
        Ok(())
    }

    /// Puts back every register `program` changed, the global enable first so that counting
    /// stops at once. The registers shared with other counters (the global enable, the fixed
    /// counters' control) get back only our counters' bits, read afresh around them: a bit
    /// another owner changed meanwhile is not overwritten with what it was at arming. Errors
    /// are ignored: there is nothing more to do about them.
    fn restore(&self, cpu: u32, st: &mut MsrCpu) {
        let l = &self.layout;
        let put_back = |msr: u32, saved: u64, ours: u64| {
            if let Ok(now) = self.regs.read(cpu, msr) {
                let _ = self.regs.write(cpu, msr, (now & !ours) | (saved & ours));
            }
        };
        if let (Some(msr), Some(saved)) = (l.global_msr(), st.saved_global.take()) {
            let ours = self
                .counters
                .iter()
                .fold(0, |m, c| m | l.global_bit(c.index));
            put_back(msr, saved, ours);
        }
        let mut fixed_fields = 0;
        for (i, c) in self.counters.iter().enumerate().take(st.programmed) {
            if c.fixed() {
                fixed_fields |= 0xF << (4 * (c.index - wire::FIXED_BASE));
            } else {
                let _ = self.regs.write(cpu, l.ctl(c.index), st.saved[i].ctl);
                if l.style == wire::STYLE_NETBURST {
                    let _ = self.regs.write(cpu, c.escr_msr, st.saved[i].escr);
                }
            }
        }
        if let Some(saved) = st.saved_fixed_ctrl.take() {
            put_back(IA32_FIXED_CTR_CTRL, saved, fixed_fields);
        }
        st.programmed = 0;
        st.armed_at = [None; wire::MAX_COUNTERS];
    }
}

impl Backend for MsrBackend {
    type Cpu = MsrCpu;

    fn prepare(&self, cpu: u32) -> Result<MsrCpu, Failure> {
        let (core, thread) = self.regs.thread_of(cpu);
        Ok(MsrCpu {
            core,
            thread,
            threads: 1 << thread,
            last: [0; wire::MAX_COUNTERS],
            total: [0; wire::MAX_COUNTERS],
            saved: [Saved::default(); wire::MAX_COUNTERS],
            saved_fixed_ctrl: None,
            saved_global: None,
            programmed: 0,
            armed_at: [None; wire::MAX_COUNTERS],
        })
    }

    fn share(&self, owner: &mut MsrCpu, sibling: &mut MsrCpu) -> bool {
        if self.layout.style != wire::STYLE_NETBURST
            || owner.core != sibling.core
            || owner.thread == sibling.thread
            || owner.threads == 0
            || sibling.threads == 0
        {
            return false;
        }
        owner.threads |= sibling.threads;
        sibling.threads = 0;
        true
    }

    fn arm(&self, cpu: u32, st: &mut MsrCpu) -> Result<(), Failure> {
        if st.threads == 0 {
            return Ok(());
        }
        if let Err(f) = self.program(cpu, st) {
            self.restore(cpu, st);
            return Err(f);
        }
        Ok(())
    }

    fn read(&self, cpu: u32, st: &mut MsrCpu, out: &mut [Reading]) {
        let mask = self.mask();
        for (i, (c, r)) in self.counters.iter().zip(out.iter_mut()).enumerate() {
            let Some(armed_at) = st.armed_at[i] else {
                continue;
            };
            // Times run from the baseline reading to this one, each taken with its value.
            let at = match self.regs.read_timed(cpu, c.ctr) {
                Ok((v, at)) => {
                    // Modulo the width: a counter that wrapped since the last reading still
                    // gives the right increment.
                    st.total[i] = st.total[i].wrapping_add(v.wrapping_sub(st.last[i]) & mask);
                    st.last[i] = v;
                    at
                }
                Err(_) => Now::now(),
            };
            let t = ffi::ns_between(armed_at, at);
            *r = Reading {
                value: st.total[i],
                enabled_ns: t,
                running_ns: t,
            };
        }
    }

    fn disarm(&self, cpu: u32, st: &mut MsrCpu, out: &mut [Reading]) {
        self.read(cpu, st, out);
        self.restore(cpu, st);
    }

    fn arms_in_hotplug(&self) -> bool {
        true
    }

    fn survives_suspend(&self) -> bool {
        false
    }

    fn width(&self) -> u32 {
        self.layout.width
    }

    fn wrap_ns(&self) -> u64 {
        let range = if self.layout.width >= 64 {
            u64::MAX
        } else {
            1u64 << self.layout.width
        };
        range
            .checked_div(self.max_rate_per_us)
            .unwrap_or(u64::MAX)
            .saturating_mul(1000)
    }

    fn cpu_flags(&self, st: &MsrCpu) -> u32 {
        match st.threads.count_ones() {
            0 => wire::CPU_COUNTED_BY_SIBLING,
            1 => 0,
            _ => wire::CPU_INCLUDES_SIBLING,
        }
    }
}
