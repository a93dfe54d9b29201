// SPDX-License-Identifier: GPL-2.0
//! One measurement: the counters of every requested CPU, started, read and stopped on all CPUs
//! at once (a work item on each, `percpu`); the overflow-avoiding timer whose expiries fold
//! every counter into 64-bit totals and record the per-CPU time series; CPUs that go offline
//! and come back, and system suspend; and the response.
//!
//! Locking: the session lock is taken after the hotplug lock and the module's `ACTIVE` lock
//! (hotplug callbacks hold both), never before them; nothing that may take the hotplug lock
//! (creating or releasing perf counters) runs under it.
//!
//! ```text
//!  write ─ prepare all CPUs ─ publish (hotplug sees it) ─ arm all CPUs ─ timer ─┐
//!                          timer: read all CPUs, record samples, re-arm ◄───────┘
//!  CPU offline: fold + disarm there          CPU online: arm there (or re-create, perf)
//!  read/close ─ halt timer ─ disarm all CPUs, final samples ─ withdraw ─ response
//! ```

use core::sync::atomic::{AtomicBool, Ordering};

use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::time::{Delta, Jiffies};
use kernel::workqueue::{
    impl_has_delayed_work, impl_has_work, new_delayed_work, new_work, DelayedWork, Work, WorkItem,
};

use crate::backend::{Backend, Failure, Reading};
use crate::ffi::{self, Now};
use crate::hotplug::{self, Active};
use crate::percpu::Calls;
use crate::wire;

/// The timer reads each counter at least this many times per shortest possible wrap-around.
const READS_PER_WRAP: u64 = 4;
/// Samples kept before the series is first thinned, per CPU, when the cap allows it.
const INITIAL_SAMPLES_PER_CPU: usize = 64;

const NO_READINGS: [Reading; wire::MAX_COUNTERS] = [Reading {
    value: 0,
    enabled_ns: 0,
    running_ns: 0,
}; wire::MAX_COUNTERS];

/// The timer period for counters that can wrap in `wrap_ns`, and the period in nanoseconds
/// after rounding up to jiffies. Refused when the rounded period cannot read a counter twice
/// per wrap (a late timer would then lose a whole wrap, silently).
pub(crate) fn timer_period(requested_ns: u64, wrap_ns: u64) -> Result<(Jiffies, u64), Failure> {
    let mut want = wire::MAX_PERIOD_NS.min(wrap_ns / READS_PER_WRAP);
    if requested_ns != 0 {
        want = want.min(requested_ns);
    }
    let want = want.max(wire::MIN_PERIOD_NS);
    let ms = want.div_ceil(1_000_000).min(u64::from(u32::MAX)) as u32;
    let jiffies = kernel::time::msecs_to_jiffies(ms).max(1);
    let ns = ffi::jiffies_to_ns(jiffies as u64);
    if ns.saturating_mul(2) > wrap_ns {
        return Err(Failure::new(EINVAL, wire::ERR_WRAP_TOO_FAST));
    }
    Ok((jiffies, ns))
}

/// One requested CPU.
struct Slot<C> {
    cpu: u32,
    /// What the back-end prepared for this CPU.
    hw: Option<C>,
    online: bool,
    armed: bool,
    /// perf: the CPU came back and its counters are to be created again.
    rearm_pending: bool,
    flags: u32,
    /// Counts of earlier armings (before the CPU went offline or the system suspended), and
    /// the current arming's latest reading.
    base: [Reading; wire::MAX_COUNTERS],
    current: [Reading; wire::MAX_COUNTERS],
    started: Option<Now>,
    stopped: Option<Now>,
    /// The reading not yet recorded in the series, and the last reading of the counters (or
    /// their arming), to tell a late one.
    last_read: Option<Now>,
    prev_read: Option<Now>,
    result: Result<(), Failure>,
}

impl<C> Slot<C> {
    fn total(&self, i: usize) -> Reading {
        let mut r = self.base[i];
        r.add(&self.current[i]);
        r
    }

    /// Folds the current arming into `base`.
    fn retire(&mut self) {
        for (b, c) in self.base.iter_mut().zip(self.current.iter_mut()) {
            b.add(c);
            *c = Reading::default();
        }
        self.armed = false;
    }
}

/// Everything the session lock protects.
struct Counting<C> {
    n: usize,
    slots: KVec<Slot<C>>,
    calls: Calls,
    samples: KVVec<wire::Sample>,
    /// The most samples kept; beyond it the series is thinned.
    sample_cap: usize,
    stride: u32,
    expiries: u32,
    accumulations: u64,
    flags: u32,
    suspended: bool,
    /// The session is being stopped: from here on nothing queues work for it (a CPU coming
    /// back is not armed again), so that flushing its work items leaves none behind.
    halting: bool,
    /// Counting stopped for good: hotplug and suspend leave the CPUs alone.
    finished: bool,
    /// When the next expiry is due: expiries keep to `start + k × period` however late each
    /// one runs, so the series does not drift.
    due: Option<Now>,
}

#[pin_data]
pub(crate) struct Session<B: Backend> {
    backend: B,
    #[pin]
    state: Mutex<Counting<B::Cpu>>,
    #[pin]
    timer: DelayedWork<Session<B>>,
    #[pin]
    rearm: Work<Session<B>, 1>,
    stopped: AtomicBool,
    period: Jiffies,
    period_ns: u64,
}

impl_has_delayed_work! {
    impl{B: Backend} HasDelayedWork<Self> for Session<B> { self.timer }
}

impl_has_work! {
    impl{B: Backend} HasWork<Self, 1> for Session<B> { self.rearm }
}

/// Timer expiry: read every CPU, record the samples, come again.
impl<B: Backend> WorkItem for Session<B> {
    type Pointer = Arc<Session<B>>;

    fn run(this: Arc<Session<B>>) {
        if this.stopped.load(Ordering::SeqCst) {
            return;
        }
        let delay = {
            let mut st = this.state.lock();
            st.tick(&this.backend, false);
            st.next_delay(this.period_ns)
        };
        if !this.stopped.load(Ordering::SeqCst) {
            let _ = ffi::queue().enqueue_delayed(this, delay);
        }
    }
}

/// perf: counters of CPUs that came back are created again here, where that may take the
/// hotplug lock, then installed and armed under the session lock.
impl<B: Backend> WorkItem<1> for Session<B> {
    type Pointer = Arc<Session<B>>;

    fn run(this: Arc<Session<B>>) {
        crate::test_hooks::pause_in_rearm();
        if this.stopped.load(Ordering::SeqCst) {
            return;
        }
        let mut wanted = KVec::new();
        {
            let st = this.state.lock();
            for (k, s) in st.slots.iter().enumerate() {
                if s.rearm_pending && s.online && st.may_arm() {
                    if wanted.push((k, s.cpu, None), GFP_KERNEL).is_err() {
                        // The CPU stays unarmed: its counts end where it went offline.
                        break;
                    }
                }
            }
        }
        for (_, cpu, hw) in wanted.iter_mut() {
            *hw = Some(this.backend.prepare(*cpu));
        }
        let mut guard = this.state.lock();
        let st = &mut *guard;
        let may_arm = st.may_arm();
        for (k, _, hw) in wanted.iter_mut() {
            let slot = &mut st.slots[*k];
            if !may_arm || !slot.rearm_pending || !slot.online {
                continue;
            }
            slot.rearm_pending = false;
            // The counters replaced (or the new ones not installed) stay in `wanted`, released
            // after the lock is dropped: releasing perf counters takes the hotplug lock.
            match hw.take() {
                Some(Ok(new)) => {
                    *hw = slot.hw.replace(new).map(Ok);
                    slot.result = Ok(());
                }
                failed => {
                    *hw = failed;
                    slot.flags |= wire::CPU_REARM_FAILED;
                }
            }
        }
        let backend = &this.backend;
        st.calls.run(
            &mut st.slots,
            |s| {
                s.online
                    && !s.armed
                    && s.hw.is_some()
                    && s.result.is_ok()
                    && s.flags & wire::CPU_REARM_FAILED == 0
            },
            &|s: &mut Slot<B::Cpu>| arm_slot(backend, s),
        );
        drop(guard);
        drop(wanted);
    }
}

/// Arms one slot on its CPU.
fn arm_slot<B: Backend>(backend: &B, s: &mut Slot<B::Cpu>) {
    let Some(hw) = s.hw.as_mut() else { return };
    s.result = backend.arm(s.cpu, hw);
    if s.result.is_ok() {
        let now = Now::now();
        s.armed = true;
        s.current = NO_READINGS;
        s.started.get_or_insert(now);
        s.prev_read = Some(now);
    } else if s.started.is_some() {
        s.flags |= wire::CPU_REARM_FAILED;
    }
}

/// Takes the final reading of one slot on its CPU and stops its counters.
fn disarm_slot<B: Backend>(backend: &B, n: usize, s: &mut Slot<B::Cpu>) {
    if let (true, Some(hw)) = (s.armed, s.hw.as_mut()) {
        backend.disarm(s.cpu, hw, &mut s.current[..n]);
        s.last_read = Some(Now::now());
        s.stopped = s.last_read;
        s.retire();
    }
}

impl<C: Send> Counting<C> {
    /// Whether a CPU may be armed now: not while suspended, stopping or stopped.
    fn may_arm(&self) -> bool {
        !self.finished && !self.halting && !self.suspended
    }

    /// The earliest start instant: time zero of the response.
    fn t0(&self) -> Option<Now> {
        self.slots
            .iter()
            .filter_map(|s| s.started)
            .reduce(ffi::earlier)
    }

    /// Reads (or, `last`, disarms) every armed CPU at once, folds, records the samples.
    fn tick<B: Backend<Cpu = C>>(&mut self, backend: &B, last: bool) {
        if self.finished {
            return;
        }
        let n = self.n;
        let wrap_ns = backend.wrap_ns();
        let job = |s: &mut Slot<C>| {
            let now = Now::now();
            if s.prev_read
                .is_some_and(|p| ffi::ns_between(p, now) >= wrap_ns)
            {
                s.flags |= wire::CPU_LATE_READ;
            }
            s.prev_read = Some(now);
            if last {
                disarm_slot(backend, n, s);
            } else if let Some(hw) = s.hw.as_mut() {
                backend.read(s.cpu, hw, &mut s.current[..n]);
                s.last_read = Some(Now::now());
            }
        };
        let wanted = |s: &Slot<C>| s.armed;
        let armed_before = self.slots.iter().filter(|s| s.armed).count();
        self.calls.run(&mut self.slots, wanted, &job);
        self.accumulations += 1;
        if armed_before > 0 {
            self.record(last);
        }
        self.expiries = self.expiries.wrapping_add(1);
    }

    /// Records this expiry's readings when it falls on the stride (always for the last one),
    /// thinning the series when it is full.
    fn record(&mut self, last: bool) {
        if !last && self.expiries.checked_rem(self.stride) != Some(0) {
            return;
        }
        let Some(t0) = self.t0() else { return };
        let expiry = self.expiries;
        let n = self.n;
        let fresh = self
            .slots
            .iter()
            .filter(|s| s.last_read.is_some() && (s.armed || last))
            .count();
        if self.samples.len() + fresh > self.sample_cap && !last {
            self.thin();
            if self.expiries.checked_rem(self.stride) != Some(0) {
                return;
            }
        }
        for s in self.slots.iter_mut() {
            let Some(at) = s.last_read.take() else {
                continue;
            };
            let mut sample = wire::Sample {
                cpu: s.cpu,
                expiry,
                time_ns: ffi::ns_between(t0, at),
                counts: [0; wire::MAX_COUNTERS],
            };
            for (i, c) in sample.counts.iter_mut().enumerate().take(n) {
                *c = s.total(i).value;
            }
            if self.samples.push(sample, GFP_KERNEL_ACCOUNT).is_err() {
                // No memory for a longer series: keep what there is, at half the resolution.
                self.thin();
                break;
            }
        }
    }

    /// The delay to the next expiry, in jiffies.
    fn next_delay(&mut self, period_ns: u64) -> Jiffies {
        let period = Delta::from_nanos(period_ns.min(i64::MAX as u64) as i64);
        let now = Now::now();
        let mut due = self.due.map_or(now + period, |d| d + period);
        if (due - now).as_nanos() <= 0 {
            // Too late for this one: keep the phase, skip what was missed.
            due = now + period;
        }
        self.due = Some(due);
        let ms = ffi::ns_between(now, due)
            .div_ceil(1_000_000)
            .min(u64::from(u32::MAX)) as u32;
        kernel::time::msecs_to_jiffies(ms).max(1)
    }

    /// Drops every other recorded expiry; from now on only every `2 × stride`-th is recorded.
    fn thin(&mut self) {
        let keep = self.stride.saturating_mul(2);
        self.samples
            .retain(|s| s.expiry.checked_rem(keep) == Some(0));
        self.stride = keep;
        self.flags |= wire::RESPONSE_SERIES_THINNED;
    }

    fn response<B: Backend<Cpu = C>>(&self, backend: &B, period_ns: u64) -> Result<KVVec<u8>> {
        let n = self.n;
        let t0 = self.t0();
        let spread = |f: fn(&Slot<C>) -> Option<Now>| {
            let (lo, hi) = self
                .slots
                .iter()
                .filter_map(f)
                .fold((None, None), |(lo, hi), t| {
                    (
                        Some(lo.map_or(t, |l| ffi::earlier(l, t))),
                        Some(hi.map_or(t, |h| ffi::later(h, t))),
                    )
                });
            match (lo, hi) {
                (Some(lo), Some(hi)) => ffi::ns_between(lo, hi),
                _ => 0,
            }
        };
        let last_stop = self
            .slots
            .iter()
            .filter_map(|s| s.stopped)
            .reduce(ffi::later);
        let size = wire::HEADER_SIZE
            + self.slots.len() * wire::CPU_COUNTS_SIZE
            + self.samples.len() * wire::SAMPLE_SIZE;
        // Charged, like the series, to the memory cgroup of whoever asked.
        let mut buf = KVVec::from_elem(0u8, size, GFP_KERNEL_ACCOUNT)?;
        let header = wire::ResponseHeader {
            magic: wire::MAGIC,
            version: wire::VERSION,
            size: size as u32,
            status: 0,
            error_code: wire::ERR_NONE,
            error_cpu: wire::NO_CPU,
            error_counter: wire::NO_COUNTER,
            ncpus: self.slots.len() as u32,
            ncounters: n as u32,
            nsamples: self.samples.len() as u32,
            counter_width: backend.width(),
            flags: self.flags,
            time_counted_ns: match (t0, last_stop) {
                (Some(a), Some(b)) => ffi::ns_between(a, b),
                _ => 0,
            },
            accumulations: self.accumulations,
            timer_period_ns: period_ns,
            start_spread_ns: spread(|s| s.started),
            stop_spread_ns: spread(|s| s.stopped),
            sample_stride: self.stride,
            reserved: 0,
        };
        header.encode(&mut buf[..wire::HEADER_SIZE]);
        let mut at = wire::HEADER_SIZE;
        for s in self.slots.iter() {
            let mut rec = wire::CpuCounts {
                cpu: s.cpu,
                flags: s.flags
                    | s.hw.as_ref().map_or(0, |hw| backend.cpu_flags(hw))
                    | if s.online {
                        0
                    } else {
                        wire::CPU_OFFLINE_AT_END
                    },
                start_offset_ns: match (t0, s.started) {
                    (Some(a), Some(b)) => ffi::ns_between(a, b),
                    _ => 0,
                },
                ..Default::default()
            };
            for i in 0..n {
                let r = s.total(i);
                rec.counts[i] = r.value;
                rec.time_enabled_ns[i] = r.enabled_ns;
                rec.time_running_ns[i] = r.running_ns;
            }
            rec.encode(&mut buf[at..at + wire::CPU_COUNTS_SIZE]);
            at += wire::CPU_COUNTS_SIZE;
        }
        for sample in self.samples.iter() {
            sample.encode(&mut buf[at..at + wire::SAMPLE_SIZE]);
            at += wire::SAMPLE_SIZE;
        }
        Ok(buf)
    }
}

/// How a session is built.
pub(crate) struct Plan {
    pub(crate) ncounters: usize,
    pub(crate) period: Jiffies,
    pub(crate) period_ns: u64,
    /// The most bytes the time series may take.
    pub(crate) series_bytes: usize,
    /// `wire::RESPONSE_*` flags known from the request.
    pub(crate) flags: u32,
}

impl<B: Backend> Session<B> {
    /// Prepares every CPU, publishes the session to the hotplug callbacks, arms every CPU at
    /// once and starts the timer. On failure nothing is left counting or published.
    pub(crate) fn start(backend: B, cpus: &[u32], plan: Plan) -> Result<Arc<Self>, Failure> {
        let calls = Calls::new(
            cpus.iter().copied(),
            cpus.len(),
            kernel::static_lock_class!(),
        )
        .map_err(|_| Failure::nomem())?;
        let mut slots = KVec::with_capacity(cpus.len(), GFP_KERNEL)?;
        for &cpu in cpus {
            slots.push(
                Slot {
                    cpu,
                    hw: None,
                    online: true,
                    armed: false,
                    rearm_pending: false,
                    flags: 0,
                    base: NO_READINGS,
                    current: NO_READINGS,
                    started: None,
                    stopped: None,
                    last_read: None,
                    prev_read: None,
                    result: Ok(()),
                },
                GFP_KERNEL,
            )?;
        }
        // Each CPU's counters are allocated on that CPU, all CPUs at once, without any lock.
        // A CPU that fails drops what it made there, which takes the CPU-hotplug lock: these
        // items are of a class of their own, apart from the session's, which run under the
        // session lock that the hotplug callbacks take.
        Calls::new(
            cpus.iter().copied(),
            cpus.len(),
            kernel::static_lock_class!(),
        )
        .map_err(|_| Failure::nomem())?
        .run(&mut slots, |_| true, &|s: &mut Slot<B::Cpu>| {
            s.result = backend.prepare(s.cpu).map(|hw| s.hw = Some(hw));
        });
        if let Some(f) = slots.iter().find_map(|s| s.result.err()) {
            return Err(f);
        }
        // A counter may be missing on some CPUs (a hybrid part's other core type), not on all.
        if let Some(i) = (0..plan.ncounters).find(|&i| {
            slots
                .iter()
                .all(|s| s.hw.as_ref().is_some_and(|hw| backend.absent(hw, i)))
        }) {
            return Err(Failure::new(ENOENT, wire::ERR_PERF_CREATE)
                .on_cpu(cpus[0])
                .counter(i));
        }
        // Threads that share counters (NetBurst): the first counts for both.
        for j in 1..slots.len() {
            let (head, tail) = slots.split_at_mut(j);
            let sibling = &mut tail[0];
            for owner in head.iter_mut() {
                if let (Some(o), Some(s)) = (owner.hw.as_mut(), sibling.hw.as_mut()) {
                    if backend.share(o, s) {
                        break;
                    }
                }
            }
        }
        let per_cpu = (plan.series_bytes / wire::SAMPLE_SIZE / cpus.len().max(1)).max(2);
        // The series is charged to the memory cgroup of the process that asked for it: up to
        // twice `series_kib` (a vector growing), and the user's to pay for.
        let samples = KVVec::with_capacity(
            cpus.len() * per_cpu.min(INITIAL_SAMPLES_PER_CPU),
            GFP_KERNEL_ACCOUNT,
        )?;
        let session = Arc::pin_init(
            pin_init!(Session {
                backend,
                state <- kernel::new_mutex!(Counting {
                    n: plan.ncounters,
                    slots,
                    calls,
                    samples,
                    sample_cap: per_cpu * cpus.len(),
                    stride: 1,
                    expiries: 0,
                    accumulations: 0,
                    flags: plan.flags,
                    suspended: false,
                    halting: false,
                    finished: false,
                    due: None,
                }),
                timer <- new_delayed_work!("arum::timer"),
                rearm <- new_work!("arum::rearm"),
                stopped: AtomicBool::new(false),
                period: plan.period,
                period_ns: plan.period_ns,
            }),
            GFP_KERNEL,
        )
        .map_err(|_| Failure::nomem())?;
        // From here on a CPU going away or coming back reaches the session.
        if let Err(cpu) = hotplug::publish(session.clone(), cpus) {
            return Err(Failure::new(EINVAL, wire::ERR_CPU_OFFLINE).on_cpu(cpu));
        }
        let failed = {
            let mut st = session.state.lock();
            let st = &mut *st;
            let backend = &session.backend;
            st.calls
                .run(&mut st.slots, |s| s.online, &|s: &mut Slot<B::Cpu>| {
                    arm_slot(backend, s)
                });
            let failed = st.slots.iter().find_map(|s| s.result.err());
            if failed.is_some() {
                // Stop the CPUs that did start: nothing is left counting.
                st.tick(backend, true);
                st.finished = true;
            }
            failed
        };
        if let Some(f) = failed {
            // A CPU that came back meanwhile may have queued the re-arm work: flushed here.
            session.halt();
            drop(hotplug::withdraw());
            return Err(f);
        }
        let delay = session.state.lock().next_delay(session.period_ns);
        let _ = ffi::queue().enqueue_delayed(session.clone(), delay);
        Ok(session)
    }

    /// Stops the timer and the re-arm work for good. Afterwards neither is pending or running,
    /// and nothing queues them again: the timer sees `stopped`, the hotplug callbacks and the
    /// re-arm work see `halting` under the session lock.
    fn halt(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.state.lock().halting = true;
        // A pending item runs at once, sees `stopped`, does nothing and does not come again.
        ffi::flush_until_idle(&self.timer, &self.rearm);
    }
}

impl<B: Backend> Active for Session<B> {
    fn stop(&self) -> Result<KVVec<u8>, Failure> {
        self.halt();
        crate::test_hooks::pause_in_stop();
        let response = {
            let mut st = self.state.lock();
            st.tick(&self.backend, true);
            st.finished = true;
            st.response(&self.backend, self.period_ns)
        };
        // The hotplug callbacks no longer reach this session; the caller's reference is the
        // one that releases it, outside every lock.
        drop(hotplug::withdraw());
        response.map_err(|_| Failure::nomem())
    }

    fn cpu_offline(&self, cpu: u32) {
        let mut st = self.state.lock();
        let st = &mut *st;
        if st.finished {
            return;
        }
        let n = st.n;
        if let Some(s) = st.slots.iter_mut().find(|s| s.cpu == cpu) {
            // This runs on `cpu`, before it goes: the last reading, then its registers back.
            disarm_slot(&self.backend, n, s);
            s.last_read = None;
            s.online = false;
            s.rearm_pending = false;
            s.flags |= wire::CPU_WENT_OFFLINE;
        }
    }

    fn cpu_online(self: Arc<Self>, cpu: u32) {
        let deferred = {
            let mut guard = self.state.lock();
            let st = &mut *guard;
            let Some(s) = st.slots.iter_mut().find(|s| s.cpu == cpu) else {
                return;
            };
            if st.finished || s.online {
                return;
            }
            s.online = true;
            if st.halting {
                return;
            }
            if self.backend.arms_in_hotplug() {
                if st.suspended {
                    // Armed with every CPU at resume.
                    return;
                }
                // This runs on `cpu` as it comes back.
                arm_slot(&self.backend, s);
                false
            } else {
                // Its counters were detached when it went: new ones are made, after the resume
                // if the system is suspending.
                s.rearm_pending = true;
                !st.suspended
            }
        };
        if deferred {
            // The caller holds the module's reference, so this one is never the last.
            let _ = ffi::queue().enqueue::<_, 1>(self);
        }
    }

    fn suspend(&self) {
        let mut st = self.state.lock();
        let st = &mut *st;
        if st.finished {
            return;
        }
        st.suspended = true;
        st.flags |= wire::RESPONSE_SUSPENDED;
        if self.backend.survives_suspend() {
            return;
        }
        let (backend, n) = (&self.backend, st.n);
        st.calls
            .run(&mut st.slots, |s| s.armed, &|s: &mut Slot<B::Cpu>| {
                disarm_slot(backend, n, s);
                s.last_read = None;
            });
    }

    fn resume(self: Arc<Self>) {
        let recreate = {
            let mut guard = self.state.lock();
            let st = &mut *guard;
            if st.finished || !st.suspended {
                return;
            }
            st.suspended = false;
            if st.halting {
                return;
            }
            let backend = &self.backend;
            st.calls.run(
                &mut st.slots,
                |s| s.online && !s.armed && !s.rearm_pending && s.hw.is_some(),
                &|s: &mut Slot<B::Cpu>| arm_slot(backend, s),
            );
            st.slots.iter().any(|s| s.online && s.rearm_pending)
        };
        if recreate {
            // The caller holds the module's reference, so this one is never the last.
            let _ = ffi::queue().enqueue::<_, 1>(self);
        }
    }
}
