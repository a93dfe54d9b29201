// SPDX-License-Identifier: GPL-2.0
//! One measurement: the counters of every requested CPU, the overflow-avoiding timer that folds
//! counter increments (modulo the counter width) into 64-bit totals without ever resetting the
//! counters, the per-CPU time series those readings make, and stopping.

use core::sync::atomic::{AtomicBool, Ordering};

use kernel::bindings;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::workqueue::{self, impl_has_delayed_work, new_delayed_work, DelayedWork, WorkItem};

use crate::msr::{self, Layout, Msr};
use crate::oncpu;
use crate::perf::CpuCounter;
use crate::wire;

/// Samples kept per CPU; later timer expiries still accumulate but are not recorded.
const MAX_SAMPLES_PER_CPU: usize = 1024;
/// The most events a counter can gain per cycle on any supported CPU, for the timer period.
const MAX_EVENTS_PER_CYCLE: u64 = 16;
/// The timer fires at least four times per shortest possible wrap-around.
const SAFETY: u64 = 4;
/// Time-series resolution when overflow does not force a shorter period.
const MAX_PERIOD_NS: u64 = 1_000_000_000;

/// A refusal: errno, wire error code, CPU, counter.
pub(crate) type Failure = (Error, u32, u32, u32);

/// How the counters are reached.
pub(crate) enum Access {
    Hw(msr::HwMsr),
    Sim(Pin<KBox<msr::SimPmu>>),
}

impl Access {
    fn get(&self) -> &dyn Msr {
        match self {
            Access::Hw(h) => h,
            Access::Sim(s) => &**s,
        }
    }
}

enum Kind {
    /// `[cpu][counter]`.
    Perf(KVec<KVec<CpuCounter>>),
    Msr { access: Access, layout: Layout, reserved: KVec<(u32, u32)> },
}

pub(crate) struct Counting {
    cpus: KVec<u32>,
    n: usize,
    req: wire::Request,
    kind: Kind,
    /// Last raw value and 64-bit total per `cpu * n + counter`.
    last: KVec<u64>,
    acc: KVec<u64>,
    /// perf: time enabled/running per CPU.
    times: KVec<(u64, u64)>,
    samples: KVec<wire::Sample>,
    accumulations: u64,
    started_ns: i64,
    stopped_ns: i64,
    period_ns: u64,
    width: u32,
}

fn now_ns() -> i64 {
    // SAFETY: ktime_get (nanoseconds, monotonic) may be called from any context but NMI.
    unsafe { bindings::ktime_get() }
}

extern "C" {
    static cpu_khz: core::ffi::c_uint;
    fn reserve_perfctr_nmi(msr: u32) -> core::ffi::c_int;
    fn release_perfctr_nmi(msr: u32);
    fn reserve_evntsel_nmi(msr: u32) -> core::ffi::c_int;
    fn release_evntsel_nmi(msr: u32);
}

const EVTSEL_USR: u64 = 1 << 16;
const EVTSEL_OS: u64 = 1 << 17;
const EVTSEL_EN: u64 = 1 << 22;
const ESCR_T0_USR: u64 = 1 << 2;
const ESCR_T0_OS: u64 = 1 << 3;
const CCCR_ENABLE: u64 = 1 << 12;

impl Counting {
    /// Creates the counters of a validated request. Nothing is left behind on failure.
    pub(crate) fn new(req: &wire::Request, cpus: KVec<u32>, access: Option<Access>, sim_rate_per_us: u64) -> core::result::Result<Counting, Failure> {
        let n = req.ncounters as usize;
        let nomem = |cpu| (ENOMEM, wire::ERR_NO_MEMORY, cpu, wire::NO_COUNTER);
        let cells = cpus.len() * n;
        let mut c = Counting {
            n,
            req: *req,
            kind: Kind::Perf(KVec::new()),
            last: KVec::from_elem(0u64, cells, GFP_KERNEL).map_err(|_| nomem(wire::NO_CPU))?,
            acc: KVec::from_elem(0u64, cells, GFP_KERNEL).map_err(|_| nomem(wire::NO_CPU))?,
            times: KVec::from_elem((0u64, 0u64), cpus.len(), GFP_KERNEL).map_err(|_| nomem(wire::NO_CPU))?,
            samples: KVec::with_capacity(cpus.len() * MAX_SAMPLES_PER_CPU, GFP_KERNEL).map_err(|_| nomem(wire::NO_CPU))?,
            cpus,
            accumulations: 0,
            started_ns: 0,
            stopped_ns: 0,
            period_ns: MAX_PERIOD_NS,
            width: 64,
        };
        match access {
            None => c.start_perf()?,
            Some(a) => c.start_msr(a, sim_rate_per_us)?,
        }
        if req.timer_period_ns != 0 {
            c.period_ns = c.period_ns.min(req.timer_period_ns);
        }
        c.started_ns = now_ns();
        Ok(c)
    }

    fn start_perf(&mut self) -> core::result::Result<(), Failure> {
        let (user, kernel) = (self.req.flags & wire::FLAG_USER != 0, self.req.flags & wire::FLAG_KERNEL != 0);
        let mut all = KVec::with_capacity(self.cpus.len(), GFP_KERNEL).map_err(|_| (ENOMEM, wire::ERR_NO_MEMORY, wire::NO_CPU, wire::NO_COUNTER))?;
        for &cpu in self.cpus.iter() {
            let mut counters = KVec::with_capacity(self.n, GFP_KERNEL).map_err(|_| (ENOMEM, wire::ERR_NO_MEMORY, cpu, wire::NO_COUNTER))?;
            let mut failed = None;
            // Each CPU's counters are created on that CPU, from a workqueue item.
            let reqs = &self.req.counters[..self.n];
            let _ = oncpu::run_on(cpu, &mut || {
                for (i, r) in reqs.iter().enumerate() {
                    match CpuCounter::new(cpu, r.perf_type, r.config, r.config1, user, kernel) {
                        Ok(counter) => counters.push(counter, GFP_KERNEL)?,
                        Err(e) => {
                            failed = Some((e, wire::ERR_PERF_CREATE, cpu, i as u32));
                            return Err(e);
                        }
                    }
                }
                Ok(())
            });
            if let Some(f) = failed {
                return Err(f);
            }
            if counters.len() != self.n {
                return Err((ENOMEM, wire::ERR_NO_MEMORY, cpu, wire::NO_COUNTER));
            }
            all.push(counters, GFP_KERNEL).map_err(|_| (ENOMEM, wire::ERR_NO_MEMORY, cpu, wire::NO_COUNTER))?;
        }
        self.kind = Kind::Perf(all);
        Ok(())
    }

    fn start_msr(&mut self, access: Access, sim_rate_per_us: u64) -> core::result::Result<(), Failure> {
        let layout = match &access {
            Access::Sim(s) => s.layout(),
            Access::Hw(_) => Layout::detect().ok_or((ENODEV, wire::ERR_SOURCE, wire::NO_CPU, wire::NO_COUNTER))?,
        };
        // Claim the counters from the kernel first; refuse if perf or the NMI watchdog has them.
        let mut reserved = KVec::new();
        for (i, r) in self.req.counters[..self.n].iter().enumerate() {
            if r.index >= wire::FIXED_BASE {
                continue; // fixed counters are not managed by the reservation allocator
            }
            let (ctr, sel) = (layout.ctr(r.index), if layout.style == wire::STYLE_NETBURST { r.escr_msr } else { layout.ctl(r.index) });
            // SAFETY: the reservation calls only test-and-set bits of the kernel's owner maps.
            let ok = unsafe { reserve_perfctr_nmi(ctr) != 0 && (reserve_evntsel_nmi(sel) != 0 || { release_perfctr_nmi(ctr); false }) };
            if !ok {
                release(&reserved);
                return Err((EBUSY, wire::ERR_COUNTER_BUSY, wire::NO_CPU, i as u32));
            }
            if reserved.push((ctr, sel), GFP_KERNEL).is_err() {
                // SAFETY: releases the pair just reserved.
                unsafe {
                    release_perfctr_nmi(ctr);
                    release_evntsel_nmi(sel);
                }
                release(&reserved);
                return Err((ENOMEM, wire::ERR_NO_MEMORY, wire::NO_CPU, wire::NO_COUNTER));
            }
        }
        self.width = layout.width;
        // The highest rate any counter can gain, in events per microsecond.
        let max_rate_per_us = match &access {
            Access::Sim(_) => sim_rate_per_us.max(1),
            // SAFETY: cpu_khz is a plain exported variable set at boot.
            Access::Hw(_) => (u64::from(unsafe { cpu_khz }) / 1000).max(1) * MAX_EVENTS_PER_CYCLE,
        };
        let range = if layout.width >= 64 { u64::MAX } else { 1u64 << layout.width };
        let wrap_ns = (range / max_rate_per_us).saturating_mul(1000);
        self.period_ns = (wrap_ns / SAFETY).clamp(1_000_000, MAX_PERIOD_NS);
        self.kind = Kind::Msr { access, layout, reserved };
        for k in 0..self.cpus.len() {
            let cpu = self.cpus[k];
            let mut result = Ok(());
            let _ = oncpu::run_on(cpu, &mut || {
                result = self.program(cpu, k, true);
                Ok(())
            });
            if let Err(i) = result {
                for j in 0..=k {
                    let _ = self.program(self.cpus[j], j, false);
                }
                return Err((EIO, wire::ERR_COUNTER_INDEX, cpu, i));
            }
        }
        Ok(())
    }

    /// Programs (`on`) or stops the counters of one CPU through its MSRs.
    fn program(&mut self, cpu: u32, k: usize, on: bool) -> core::result::Result<(), u32> {
        let Kind::Msr { access, layout, .. } = &self.kind else { return Ok(()) };
        let m = access.get();
        let (user, kernel) = (self.req.flags & wire::FLAG_USER != 0, self.req.flags & wire::FLAG_KERNEL != 0);
        for (i, r) in self.req.counters[..self.n].iter().enumerate() {
            let fail = |_| i as u32;
            match layout.style {
                wire::STYLE_NETBURST => {
                    let escr = if on { r.escr | if user { ESCR_T0_USR } else { 0 } | if kernel { ESCR_T0_OS } else { 0 } } else { 0 };
                    m.write(cpu, r.escr_msr, escr).map_err(fail)?;
                    let cccr = if on { r.config | CCCR_ENABLE } else { r.config & !CCCR_ENABLE };
                    m.write(cpu, layout.ctl(r.index), cccr).map_err(fail)?;
                }
                _ if r.index >= wire::FIXED_BASE => {
                    let f = r.index - wire::FIXED_BASE;
                    let bits = (u64::from(kernel) | u64::from(user) << 1) << (4 * f);
                    let ctrl = m.read(cpu, msr::IA32_FIXED_CTR_CTRL).map_err(fail)?;
                    m.write(cpu, msr::IA32_FIXED_CTR_CTRL, if on { ctrl | bits } else { ctrl & !(0xF << (4 * f)) }).map_err(fail)?;
                    let g = m.read(cpu, msr::IA32_PERF_GLOBAL_CTRL).map_err(fail)?;
                    let bit = 1u64 << (32 + f);
                    m.write(cpu, msr::IA32_PERF_GLOBAL_CTRL, if on { g | bit } else { g & !bit }).map_err(fail)?;
                }
                style => {
                    let sel = r.config | if user { EVTSEL_USR } else { 0 } | if kernel { EVTSEL_OS } else { 0 };
                    m.write(cpu, layout.ctl(r.index), if on { sel | EVTSEL_EN } else { sel }).map_err(fail)?;
                    if style == wire::STYLE_INTEL && layout.fixed > 0 {
                        let g = m.read(cpu, msr::IA32_PERF_GLOBAL_CTRL).map_err(fail)?;
                        let bit = 1u64 << r.index;
                        m.write(cpu, msr::IA32_PERF_GLOBAL_CTRL, if on { g | bit } else { g & !bit }).map_err(fail)?;
                    }
                }
            }
            if on {
                // Never reset the counter: its current value is the baseline.
                self.last[k * self.n + i] = m.read(cpu, layout.ctr(r.index)).map_err(fail)?;
            }
        }
        Ok(())
    }

    /// Reads every counter, folds the increments into the totals, records a sample.
    fn tick(&mut self) {
        let t = (now_ns() - self.started_ns).max(0) as u64;
        let mask = if self.width >= 64 { u64::MAX } else { (1u64 << self.width) - 1 };
        for (k, &cpu) in self.cpus.iter().enumerate() {
            for i in 0..self.n {
                let cell = k * self.n + i;
                match &self.kind {
                    Kind::Perf(all) => {
                        let (value, enabled, running) = all[k][i].read();
                        self.acc[cell] = value;
                        self.times[k] = (self.times[k].0.max(enabled), self.times[k].1.max(running));
                    }
                    Kind::Msr { access, layout, .. } => {
                        if let Ok(v) = access.get().read(cpu, layout.ctr(self.req.counters[i].index)) {
                            // Modulo the width: a counter that wrapped since the last reading
                            // still gives the right increment.
                            self.acc[cell] = self.acc[cell].wrapping_add(v.wrapping_sub(self.last[cell]) & mask);
                            self.last[cell] = v;
                        }
                    }
                }
            }
            if self.samples.len() < self.samples.capacity() {
                let mut s = wire::Sample { cpu, reserved: 0, time_ns: t, counts: [0; wire::MAX_COUNTERS] };
                for i in 0..self.n {
                    s.counts[i] = self.acc[k * self.n + i];
                }
                let _ = self.samples.push(s, GFP_KERNEL);
            }
        }
        self.accumulations += 1;
    }

    /// Final reading, counters stopped; the response bytes.
    fn finish(&mut self) -> Result<KVVec<u8>> {
        self.tick();
        self.stopped_ns = now_ns();
        match &self.kind {
            Kind::Perf(all) => all.iter().flatten().for_each(CpuCounter::stop),
            Kind::Msr { .. } => {
                for k in 0..self.cpus.len() {
                    let _ = self.program(self.cpus[k], k, false);
                }
            }
        }
        let counted = (self.stopped_ns - self.started_ns).max(0) as u64;
        let ncpus = self.cpus.len();
        let size = wire::HEADER_SIZE + ncpus * wire::CPU_COUNTS_SIZE + self.samples.len() * wire::SAMPLE_SIZE;
        let mut buf = KVVec::from_elem(0u8, size, GFP_KERNEL)?;
        let h = wire::ResponseHeader {
            magic: wire::MAGIC,
            version: wire::VERSION,
            size: size as u32,
            status: 0,
            error_code: wire::ERR_NONE,
            error_cpu: wire::NO_CPU,
            error_counter: wire::NO_COUNTER,
            ncpus: ncpus as u32,
            ncounters: self.n as u32,
            nsamples: self.samples.len() as u32,
            counter_width: self.width,
            reserved: 0,
            time_counted_ns: counted,
            accumulations: self.accumulations,
            timer_period_ns: self.period_ns,
        };
        h.encode(&mut buf[..wire::HEADER_SIZE]);
        let mut at = wire::HEADER_SIZE;
        for (k, &cpu) in self.cpus.iter().enumerate() {
            let (enabled, running) = match self.kind {
                Kind::Perf(_) => self.times[k],
                Kind::Msr { .. } => (counted, counted),
            };
            let mut rec = wire::CpuCounts { cpu, status: 0, time_enabled_ns: enabled, time_running_ns: running, counts: [0; wire::MAX_COUNTERS] };
            for i in 0..self.n {
                rec.counts[i] = self.acc[k * self.n + i];
            }
            rec.encode(&mut buf[at..at + wire::CPU_COUNTS_SIZE]);
            at += wire::CPU_COUNTS_SIZE;
        }
        for s in self.samples.iter() {
            s.encode(&mut buf[at..at + wire::SAMPLE_SIZE]);
            at += wire::SAMPLE_SIZE;
        }
        Ok(buf)
    }
}

fn release(reserved: &[(u32, u32)]) {
    for &(ctr, sel) in reserved {
        // SAFETY: each pair was reserved by this session and is released once.
        unsafe {
            release_perfctr_nmi(ctr);
            release_evntsel_nmi(sel);
        }
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        if let Kind::Msr { reserved, .. } = &self.kind {
            release(reserved);
        }
        // perf counters are released by their own Drop.
    }
}

/// A running measurement, shared by the open file and its timer.
#[pin_data]
pub(crate) struct Session {
    #[pin]
    state: Mutex<Counting>,
    #[pin]
    work: DelayedWork<Session>,
    stopped: AtomicBool,
    period: kernel::time::Jiffies,
}

impl_has_delayed_work! {
    impl HasDelayedWork<Self> for Session { self.work }
}

impl WorkItem for Session {
    type Pointer = Arc<Session>;

    fn run(this: Arc<Session>) {
        if this.stopped.load(Ordering::SeqCst) {
            return;
        }
        this.state.lock().tick();
        if !this.stopped.load(Ordering::SeqCst) {
            let period = this.period;
            let _ = workqueue::system().enqueue_delayed(this, period);
        }
    }
}

impl Session {
    /// Starts the timer over already-running counters.
    pub(crate) fn start(counting: Counting) -> Result<Arc<Session>> {
        let ms = (counting.period_ns / 1_000_000).max(1) as u32;
        let period = kernel::time::msecs_to_jiffies(ms).max(1);
        let s = Arc::pin_init(
            pin_init!(Session {
                state <- kernel::new_mutex!(counting),
                work <- new_delayed_work!("arum::timer"),
                stopped: AtomicBool::new(false),
                period,
            }),
            GFP_KERNEL,
        )?;
        let _ = workqueue::system().enqueue_delayed(s.clone(), period);
        Ok(s)
    }

    /// Stops the timer (waiting for a running expiry), takes the final reading, stops the
    /// counters and returns the response.
    pub(crate) fn stop(&self) -> Result<KVVec<u8>> {
        self.halt();
        self.state.lock().finish()
    }

    /// Stops the timer for good. After this no expiry is pending or running.
    pub(crate) fn halt(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        // SAFETY: DelayedWork is #[repr(transparent)] over Opaque<delayed_work>, itself
        // transparent over the C struct, so this points at the initialised delayed_work of this
        // live session. Flushing runs a pending expiry at once (it sees `stopped` and does not
        // re-arm, releasing its reference) and waits for a running one; repeat until idle.
        let dw = (&raw const self.work).cast::<bindings::delayed_work>().cast_mut();
        while unsafe { bindings::flush_delayed_work(dw) } {}
    }
}
