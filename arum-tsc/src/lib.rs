//! The time-stamp counter, as ARUM's fine-grained timing tools use it (`arum hourglass`'s gap
//! detection, `arum calibrate`'s cycle figures): reading it, knowing whether it can be trusted as
//! a clock, and converting its ticks to nanoseconds.
//!
//! A TSC is a usable clock only when it is *invariant* (CPUID 0x8000_0007 EDX bit 8: constant
//! rate in every P-, C- and T-state); otherwise its rate follows the core's frequency and ticks are
//! cycles, not time. Its rate is not architecturally reported on every part, so it is measured
//! against CLOCK_MONOTONIC.

use std::time::Duration;

#[cfg(not(target_arch = "x86_64"))]
compile_error!("arum-tsc reads the x86-64 time-stamp counter");

use core::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};

/// Reads the TSC. Not ordered with respect to surrounding instructions (see [`read_ordered`]).
#[inline(always)]
pub fn read() -> u64 {
    // SAFETY: RDTSC is available on every x86-64 processor and has no memory effects.
    unsafe { _rdtsc() }
}

/// Reads the TSC with RDTSCP, which waits for earlier instructions to complete, and returns the
/// counter and the IA32_TSC_AUX value (Linux stores `node << 12 | cpu` there).
#[inline(always)]
pub fn read_ordered() -> (u64, u32) {
    let mut aux = 0u32;
    // SAFETY: RDTSCP writes the 32-bit TSC_AUX value through the valid pointer `aux`; the
    // instruction exists on every x86-64 processor Linux runs ARUM on (checked by `has_rdtscp`).
    let t = unsafe { __rdtscp(&mut aux) };
    (t, aux)
}

/// Reads the TSC at the start of a timed region: LFENCE before, so earlier instructions have
/// completed, and after, so the region's instructions do not start before the read. Pair with
/// [`end`]. Unlike CPUID-based serialisation this costs no VM exit under a hypervisor.
#[inline(always)]
pub fn begin() -> u64 {
    // SAFETY: LFENCE and RDTSC exist on every x86-64 processor (LFENCE is SSE2, part of the
    // x86-64 baseline) and have no memory effects.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

/// Reads the TSC at the end of a timed region: LFENCE first, so the region's instructions have
/// completed before the counter is read. Pair with [`begin`].
#[inline(always)]
pub fn end() -> u64 {
    // SAFETY: LFENCE and RDTSC exist on every x86-64 processor and have no memory effects.
    unsafe {
        _mm_lfence();
        _rdtsc()
    }
}

/// The CPU a [`read_ordered`] ran on, from Linux's TSC_AUX layout.
pub fn cpu_of_aux(aux: u32) -> u32 {
    aux & 0xFFF
}

/// Whether the processor has RDTSCP (CPUID 0x8000_0001 EDX bit 27).
pub fn has_rdtscp() -> bool {
    raw_cpuid::CpuId::new()
        .get_extended_processor_and_feature_identifiers()
        .is_some_and(|f| f.has_rdtscp())
}

/// Whether the TSC runs at a constant rate in every power state (CPUID 0x8000_0007 EDX bit 8).
pub fn is_invariant() -> bool {
    raw_cpuid::CpuId::new()
        .get_advanced_power_mgmt_info()
        .is_some_and(|p| p.has_invariant_tsc())
}

/// CLOCK_MONOTONIC in nanoseconds (through the vDSO: no system call where the TSC is the
/// clocksource).
pub fn monotonic_ns() -> u64 {
    let ts = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .expect("CLOCK_MONOTONIC is always available on Linux");
    ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64
}

/// The TSC's rate, measured against CLOCK_MONOTONIC.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// TSC ticks per second.
    pub hz: f64,
    /// Relative spread of the rounds (max - min) / median: how far the rate can be trusted.
    pub spread: f64,
    pub invariant: bool,
}

impl Calibration {
    /// Measures the rate in `rounds` windows of `window` each, keeping the median. Each window is
    /// bracketed by clock reads taken back to back with TSC reads, so the error per window is a
    /// few hundred nanoseconds over `window`.
    pub fn measure(window: Duration, rounds: usize) -> Calibration {
        let mut rates: Vec<f64> = (0..rounds.max(1))
            .map(|_| {
                let (t0, c0) = paired();
                let until = t0 + window.as_nanos() as u64;
                while monotonic_ns() < until {
                    std::hint::spin_loop();
                }
                let (t1, c1) = paired();
                (c1.wrapping_sub(c0)) as f64 * 1e9 / (t1 - t0).max(1) as f64
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        let median = arum_stats::quantile_sorted(&rates, 0.5).expect("at least one round");
        Calibration {
            hz: median,
            spread: (rates[rates.len() - 1] - rates[0]) / median,
            invariant: is_invariant(),
        }
    }

    /// Ticks to nanoseconds.
    pub fn ns(&self, ticks: u64) -> f64 {
        ticks as f64 * 1e9 / self.hz
    }

    /// Nanoseconds to ticks.
    pub fn ticks(&self, ns: f64) -> u64 {
        (ns * self.hz / 1e9) as u64
    }
}

/// A CLOCK_MONOTONIC read (ns) and a TSC read taken as close together as possible: the pair with
/// the shortest bracketing of three attempts, so a preemption between the two reads is not
/// believed. Anchors conversions between the two time lines.
pub fn paired() -> (u64, u64) {
    (0..3)
        .map(|_| {
            let a = read();
            let t = monotonic_ns();
            let b = read();
            (b - a, t, a + (b - a) / 2)
        })
        .min_by_key(|&(width, _, _)| width)
        .map(|(_, t, c)| (t, c))
        .expect("three attempts")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_advances_and_rdtscp_names_an_online_cpu() {
        let a = read();
        let (b, aux) = read_ordered();
        assert!(b > a);
        let online = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        // TSC_AUX holds the CPU number on Linux; it is below the number of possible CPUs.
        let possible = std::fs::read_to_string("/sys/devices/system/cpu/possible")
            .ok()
            .and_then(|s| s.trim().rsplit(['-', ',']).next()?.parse::<u32>().ok())
            .map_or(online, |last| last + 1);
        assert!(cpu_of_aux(aux) < possible, "aux {aux:#x}");
    }

    #[test]
    fn a_fenced_region_contains_the_work_inside_it() {
        // 100 000 dependent additions take at least 100 000 cycles on any processor: a fenced
        // pair around them reads at least as many ticks as cycles divided by the largest
        // plausible ratio of core clock to TSC rate (4).
        let t0 = begin();
        let mut x = 1u64;
        for i in 0..100_000u64 {
            x = std::hint::black_box(x.wrapping_mul(3).wrapping_add(i));
        }
        let t1 = end();
        std::hint::black_box(x);
        assert!(t1 - t0 >= 25_000, "{} ticks", t1 - t0);
    }

    #[test]
    fn calibration_converts_a_sleep_back_to_its_length() {
        let cal = Calibration::measure(Duration::from_millis(20), 3);
        assert!(cal.hz > 1e8, "a TSC below 100 MHz: {cal:?}");
        // An independent interval: a 50 ms sleep timed by both clocks must agree within 2%.
        let (t0, c0) = (monotonic_ns(), read());
        std::thread::sleep(Duration::from_millis(50));
        let (t1, c1) = (monotonic_ns(), read());
        let by_tsc = cal.ns(c1 - c0);
        let by_clock = (t1 - t0) as f64;
        assert!(
            (by_tsc / by_clock - 1.0).abs() < 0.02,
            "TSC says {by_tsc} ns, CLOCK_MONOTONIC {by_clock} ns ({cal:?})"
        );
    }
}
