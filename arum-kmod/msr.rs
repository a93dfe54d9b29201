// SPDX-License-Identifier: GPL-2.0
//! Model-specific registers: one small trait for reading and writing them on a given CPU, the
//! hardware implementation (the kernel's *_safe_on_cpu helpers, the only unsafe MSR code), and
//! a simulated PMU that models the counter and control registers of one family.
//!
//! The simulation exists to test the `msr` path: no machine here has a PMU, and QEMU's emulator
//! ignores counter MSRs. It refuses every MSR outside the modelled registers.

use kernel::bindings;
use kernel::prelude::*;
use kernel::sync::SpinLock;

use crate::wire;

pub(crate) trait Msr: Send + Sync {
    fn read(&self, cpu: u32, msr: u32) -> Result<u64>;
    fn write(&self, cpu: u32, msr: u32, value: u64) -> Result;
}

/// The real registers.
pub(crate) struct HwMsr;

impl Msr for HwMsr {
    fn read(&self, cpu: u32, msr: u32) -> Result<u64> {
        let mut v = 0u64;
        // SAFETY: the *_safe variant turns a #GP from an absent MSR into an error return.
        kernel::error::to_result(unsafe { bindings::rdmsrq_safe_on_cpu(cpu, msr, &mut v) })?;
        Ok(v)
    }

    fn write(&self, cpu: u32, msr: u32, value: u64) -> Result {
        // SAFETY: as for `read`; only registers of the detected family's PMU are written
        // (checked by `Layout` and the request validation).
        kernel::error::to_result(unsafe { bindings::wrmsrq_safe_on_cpu(cpu, msr, value) })
    }
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
}

pub(crate) const AMD_K8: Layout = Layout { style: wire::STYLE_AMD, general: 4, fixed: 0, width: 48, ctl_base: 0xC001_0000, ctr_base: 0xC001_0004, stride: 1 };
pub(crate) const AMD_ZEN: Layout = Layout { style: wire::STYLE_AMD, general: 6, fixed: 0, width: 48, ctl_base: 0xC001_0200, ctr_base: 0xC001_0201, stride: 2 };
pub(crate) const NETBURST: Layout = Layout { style: wire::STYLE_NETBURST, general: 18, fixed: 0, width: 40, ctl_base: 0x360, ctr_base: 0x300, stride: 1 };
pub(crate) const CORE2: Layout = Layout { style: wire::STYLE_INTEL, general: 2, fixed: 3, width: 40, ctl_base: 0x186, ctr_base: 0xC1, stride: 1 };

pub(crate) const IA32_FIXED_CTR0: u32 = 0x309;
pub(crate) const IA32_FIXED_CTR_CTRL: u32 = 0x38D;
pub(crate) const IA32_PERF_GLOBAL_CTRL: u32 = 0x38F;
pub(crate) const ESCR_FIRST: u32 = 0x3A0;
pub(crate) const ESCR_LAST: u32 = 0x3E1;

impl Layout {
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
    pub(crate) fn limits(&self) -> wire::Limits {
        wire::Limits { style: self.style, general_counters: self.general, fixed_counters: self.fixed, msr_allowed: true }
    }

    /// The layout of the CPU this runs on, from CPUID.
    pub(crate) fn detect() -> Option<Layout> {
        use core::arch::x86_64::__cpuid;
        let v = __cpuid(0);
        let mut vendor = [0u8; 12];
        vendor[..4].copy_from_slice(&v.ebx.to_le_bytes());
        vendor[4..8].copy_from_slice(&v.edx.to_le_bytes());
        vendor[8..].copy_from_slice(&v.ecx.to_le_bytes());
        let sig = __cpuid(1).eax;
        let family = ((sig >> 8) & 0xF) + if (sig >> 8) & 0xF == 0xF { (sig >> 20) & 0xFF } else { 0 };
        match &vendor[..] {
            b"AuthenticAMD" if family >= 0x17 => Some(AMD_ZEN),
            b"AuthenticAMD" if family >= 0x0F => {
                let ext = __cpuid(0x8000_0000).eax >= 0x8000_0001 && __cpuid(0x8000_0001).ecx & (1 << 23) != 0;
                Some(if ext { AMD_ZEN } else { AMD_K8 })
            }
            b"GenuineIntel" if family == 0x0F => Some(NETBURST),
            b"GenuineIntel" => {
                let a = __cpuid(0xA);
                let (version, general, width) = (a.eax & 0xFF, (a.eax >> 8) & 0xFF, (a.eax >> 16) & 0xFF);
                if version == 0 || general == 0 {
                    return None;
                }
                let fixed = if version >= 2 { a.edx & 0x1F } else { 0 };
                Some(Layout { general, fixed, width, ..CORE2 })
            }
            _ => None,
        }
    }
}

/// Per-CPU state of the simulated registers.
#[derive(Clone, Copy)]
struct SimCpu {
    ctl: [u64; 18],
    escr: [u64; 66],
    /// Counter value when it was last written or stopped, and since when it runs (ns, 0 = not).
    base: [u64; 21],
    since: [i64; 21],
    fixed_ctrl: u64,
    global_ctrl: u64,
}

impl Default for SimCpu {
    fn default() -> Self {
        SimCpu { ctl: [0; 18], escr: [0; 66], base: [0; 21], since: [0; 21], fixed_ctrl: 0, global_ctrl: 0 }
    }
}

/// A simulated PMU: enabled counters advance by `rate` events per microsecond and wrap at
/// `width` bits; nothing outside the modelled registers can be read or written.
#[pin_data]
pub(crate) struct SimPmu {
    layout: Layout,
    rate_per_us: u64,
    #[pin]
    cpus: SpinLock<KVec<SimCpu>>,
}

fn now_ns() -> i64 {
    // SAFETY: ktime_get (nanoseconds, monotonic) may be called from any context but NMI.
    unsafe { bindings::ktime_get() }
}

impl SimPmu {
    pub(crate) fn new(layout: Layout, rate_per_us: u64, ncpus: u32) -> Result<Pin<KBox<SimPmu>>> {
        let cpus = KVec::from_elem(SimCpu::default(), ncpus as usize, GFP_KERNEL)?;
        KBox::pin_init(
            pin_init!(SimPmu { layout, rate_per_us, cpus <- kernel::new_spinlock!(cpus, "arum_sim") }),
            GFP_KERNEL,
        )
    }

    pub(crate) fn layout(&self) -> Layout {
        self.layout
    }

    fn mask(&self) -> u64 {
        if self.layout.width >= 64 { u64::MAX } else { (1u64 << self.layout.width) - 1 }
    }

    /// Which counter slot an MSR is (general 0.., fixed 18+k), and whether it is a counter.
    fn counter_slot(&self, msr: u32) -> Option<usize> {
        let l = &self.layout;
        for i in 0..l.general {
            if msr == l.ctr(i) {
                return Some(i as usize);
            }
        }
        (0..l.fixed).find(|k| msr == IA32_FIXED_CTR0 + k).map(|k| 18 + k as usize)
    }

    fn running(&self, c: &SimCpu, slot: usize) -> bool {
        let l = &self.layout;
        if slot >= 18 {
            // Fixed counter k (Intel only): enabled in FIXED_CTR_CTRL and GLOBAL_CTRL.
            let k = slot - 18;
            return k < l.fixed as usize && (c.fixed_ctrl >> (4 * k)) & 3 != 0 && c.global_ctrl & (1 << (32 + k)) != 0;
        }
        if slot >= l.general as usize {
            return false;
        }
        match l.style {
            wire::STYLE_NETBURST => c.ctl[slot] & (1 << 12) != 0,
            wire::STYLE_INTEL => c.ctl[slot] & (1 << 22) != 0 && c.global_ctrl & (1 << slot) != 0,
            _ => c.ctl[slot] & (1 << 22) != 0,
        }
    }

    fn value(&self, c: &SimCpu, slot: usize, now: i64) -> u64 {
        let advanced = if c.since[slot] > 0 { (now - c.since[slot]).max(0) as u64 * self.rate_per_us / 1000 } else { 0 };
        c.base[slot].wrapping_add(advanced) & self.mask()
    }

    /// Re-evaluates which counters run after a control register changed.
    fn settle(&self, c: &mut SimCpu, now: i64) {
        for slot in 0..21 {
            let run = self.running(c, slot);
            if run && c.since[slot] == 0 {
                c.since[slot] = now;
            } else if !run && c.since[slot] != 0 {
                c.base[slot] = self.value(c, slot, now);
                c.since[slot] = 0;
            }
        }
    }
}

impl Msr for SimPmu {
    fn read(&self, cpu: u32, msr: u32) -> Result<u64> {
        let all = self.cpus.lock();
        let c = all.get(cpu as usize).ok_or(EIO)?;
        let l = &self.layout;
        if let Some(slot) = self.counter_slot(msr) {
            return Ok(self.value(c, slot, now_ns()));
        }
        if let Some(i) = (0..l.general).find(|&i| msr == l.ctl(i)) {
            return Ok(c.ctl[i as usize]);
        }
        match msr {
            IA32_FIXED_CTR_CTRL if l.fixed > 0 => Ok(c.fixed_ctrl),
            IA32_PERF_GLOBAL_CTRL if l.style == wire::STYLE_INTEL => Ok(c.global_ctrl),
            ESCR_FIRST..=ESCR_LAST if l.style == wire::STYLE_NETBURST => Ok(c.escr[(msr - ESCR_FIRST) as usize]),
            _ => Err(EIO),
        }
    }

    fn write(&self, cpu: u32, msr: u32, value: u64) -> Result {
        let mut all = self.cpus.lock();
        let c = all.get_mut(cpu as usize).ok_or(EIO)?;
        let l = self.layout;
        let now = now_ns();
        if let Some(slot) = self.counter_slot(msr) {
            if value & !self.mask() != 0 {
                return Err(EIO);
            }
            c.base[slot] = value;
            if c.since[slot] != 0 {
                c.since[slot] = now;
            }
            return Ok(());
        }
        if let Some(i) = (0..l.general).find(|&i| msr == l.ctl(i)) {
            c.ctl[i as usize] = value;
        } else {
            match msr {
                IA32_FIXED_CTR_CTRL if l.fixed > 0 => c.fixed_ctrl = value,
                IA32_PERF_GLOBAL_CTRL if l.style == wire::STYLE_INTEL => c.global_ctrl = value,
                ESCR_FIRST..=ESCR_LAST if l.style == wire::STYLE_NETBURST => c.escr[(msr - ESCR_FIRST) as usize] = value,
                _ => return Err(EIO),
            }
        }
        self.settle(c, now);
        Ok(())
    }
}
