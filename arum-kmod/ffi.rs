// SPDX-License-Identifier: GPL-2.0
//! Every C function of the kernel that `bindings` does not cover, declared here once, each behind
//! a safe wrapper; plus the thin safe wrappers over the `bindings` calls the module makes, the
//! callbacks the kernel calls (CPU hotplug, PM notifier) and the globals they reach. No other
//! file of the module declares an `extern` function, and none but `percpu`'s core has `unsafe`.

use core::ffi::{c_int, c_uint, c_void};
use core::ptr::NonNull;

use kernel::bindings;
use kernel::error::{from_err_ptr, to_result};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::time::{Instant, Monotonic};

// --- perf's in-kernel counter API (include/linux/perf_event.h, GPL-only exports) ------------

/// `struct perf_event_attr` (include/uapi/linux/perf_event.h), every field up to the kernel's
/// latest `PERF_ATTR_SIZE_VER*`. The kernel reads `sizeof(struct perf_event_attr)` bytes from
/// the pointer it is given, so the size must be the kernel's exactly: Kbuild passes that value
/// from the headers we build against, and the build fails when they differ.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
    aux_sample_size: u32,
    aux_action: u32,
    sig_data: u64,
    config3: u64,
    config4: u64,
}

/// Parses Kbuild's `ARUM_PERF_ATTR_SIZE` (decimal) at compile time.
const fn parse_usize(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    let mut v = 0;
    while i < b.len() {
        assert!(b[i].is_ascii_digit());
        v = v * 10 + (b[i] - b'0') as usize;
        i += 1;
    }
    v
}
// Each published size of the attr (PERF_ATTR_SIZE_VER0..9) ends where the next version's first
// field begins: a field declared out of place moves one of these, not only the total.
const _: () = {
    use core::mem::offset_of;
    assert!(offset_of!(PerfEventAttr, config) == 8);
    assert!(offset_of!(PerfEventAttr, flags) == 40);
    assert!(offset_of!(PerfEventAttr, config1) == 56);
    assert!(offset_of!(PerfEventAttr, config2) == 64); // VER0
    assert!(offset_of!(PerfEventAttr, branch_sample_type) == 72); // VER1
    assert!(offset_of!(PerfEventAttr, sample_regs_user) == 80); // VER2
    assert!(offset_of!(PerfEventAttr, sample_regs_intr) == 96); // VER3
    assert!(offset_of!(PerfEventAttr, aux_watermark) == 104); // VER4
    assert!(offset_of!(PerfEventAttr, aux_sample_size) == 112); // VER5
    assert!(offset_of!(PerfEventAttr, sig_data) == 120); // VER6
    assert!(offset_of!(PerfEventAttr, config3) == 128); // VER7
    assert!(offset_of!(PerfEventAttr, config4) == 136); // VER8
    assert!(core::mem::size_of::<PerfEventAttr>() == 144); // VER9
};
const KERNEL_PERF_ATTR_SIZE: usize = parse_usize(env!("ARUM_PERF_ATTR_SIZE"));
const _: () = assert!(core::mem::size_of::<PerfEventAttr>() == KERNEL_PERF_ATTR_SIZE);

// Bits of the attr's flag word.
const ATTR_DISABLED: u64 = 1 << 0;
const ATTR_EXCLUDE_USER: u64 = 1 << 4;
const ATTR_EXCLUDE_KERNEL: u64 = 1 << 5;
const ATTR_EXCLUDE_HV: u64 = 1 << 6;

/// Opaque `struct perf_event`.
#[repr(C)]
struct RawEvent {
    _private: [u8; 0],
}

extern "C" {
    fn perf_event_create_kernel_counter(
        attr: *mut PerfEventAttr,
        cpu: c_int,
        task: *mut c_void,
        overflow_handler: *mut c_void,
        context: *mut c_void,
    ) -> *mut RawEvent;
    fn perf_event_read_value(event: *mut RawEvent, enabled: *mut u64, running: *mut u64) -> u64;
    fn perf_event_release_kernel(event: *mut RawEvent) -> c_int;
    fn perf_event_enable(event: *mut RawEvent);
    fn perf_event_disable(event: *mut RawEvent);
    fn perf_allow_cpu() -> c_int;
    fn perf_allow_kernel() -> c_int;
}

/// What a perf counter counts.
pub(crate) struct PerfConfig {
    pub(crate) type_: u32,
    pub(crate) config: u64,
    pub(crate) config1: u64,
    pub(crate) user: bool,
    pub(crate) kernel: bool,
}

/// One counter of one CPU, counting every task on that CPU. Created disabled; released on drop.
pub(crate) struct PerfEvent(NonNull<RawEvent>);

// SAFETY: a perf event may be enabled, read, disabled and released from any CPU and thread; the
// kernel serialises these operations internally.
unsafe impl Send for PerfEvent {}
// SAFETY: as above.
unsafe impl Sync for PerfEvent {}

/// A perf counter reading: value, time enabled, time running.
#[derive(Clone, Copy, Default)]
pub(crate) struct PerfValue {
    pub(crate) value: u64,
    pub(crate) enabled_ns: u64,
    pub(crate) running_ns: u64,
}

impl PerfEvent {
    /// Creates a disabled CPU-wide counter on `cpu`. May sleep.
    pub(crate) fn new(cpu: u32, c: &PerfConfig) -> Result<Self> {
        let mut attr = PerfEventAttr {
            type_: c.type_,
            size: core::mem::size_of::<PerfEventAttr>() as u32,
            config: c.config,
            config1: c.config1,
            flags: ATTR_DISABLED
                | ATTR_EXCLUDE_HV
                | if c.user { 0 } else { ATTR_EXCLUDE_USER }
                | if c.kernel { 0 } else { ATTR_EXCLUDE_KERNEL },
            ..Default::default()
        };
        // SAFETY: `attr` is a complete perf_event_attr of the kernel's size (asserted above); a
        // NULL task makes this a CPU counter; NULL handler and context are allowed for counting.
        let ptr = from_err_ptr(unsafe {
            perf_event_create_kernel_counter(
                &mut attr,
                cpu as c_int,
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
            )
        })?;
        NonNull::new(ptr).map(PerfEvent).ok_or(EINVAL)
    }

    pub(crate) fn enable(&self) {
        // SAFETY: the event is alive (owned by self).
        unsafe { perf_event_enable(self.0.as_ptr()) };
    }

    pub(crate) fn disable(&self) {
        // SAFETY: the event is alive (owned by self).
        unsafe { perf_event_disable(self.0.as_ptr()) };
    }

    pub(crate) fn read(&self) -> PerfValue {
        let mut v = PerfValue::default();
        // SAFETY: the event is alive (owned by self); the out-pointers are valid locals.
        v.value =
            unsafe { perf_event_read_value(self.0.as_ptr(), &mut v.enabled_ns, &mut v.running_ns) };
        v
    }
}

impl Drop for PerfEvent {
    fn drop(&mut self) {
        // Releasing a counter may take the CPU-hotplug lock: a software event's static key, on a
        // kernel with jump labels (distributions build them). Under lockdep it is taken here on
        // every kernel, the way might_lock() tells lockdep of a lock a path may take, so that a
        // release under a lock the hotplug callbacks take is reported on any kernel the module is
        // checked on (the test guest's has no jump labels: see docs/kmod.md).
        #[cfg(CONFIG_PROVE_LOCKING)]
        drop(CpusReadGuard::lock());
        // SAFETY: we own the event; it is released exactly once, here. This may take the CPU
        // hotplug lock (above), so a `PerfEvent` is never dropped in a hotplug callback.
        unsafe { perf_event_release_kernel(self.0.as_ptr()) };
    }
}

/// perf's rule for CPU-wide counting, evaluated with the current task's credentials
/// (kernel.perf_event_paranoid ≤ 0 or CAP_PERFMON, then the LSM hook).
pub(crate) fn may_count_cpus() -> Result {
    // SAFETY: reads the sysctl and the current task's credentials only.
    to_result(unsafe { perf_allow_cpu() })
}

/// perf's rule for counting kernel mode (kernel.perf_event_paranoid ≤ 1 or CAP_PERFMON, then
/// the LSM hook), with the current task's credentials.
pub(crate) fn may_count_kernel() -> Result {
    // SAFETY: as for `may_count_cpus`.
    to_result(unsafe { perf_allow_kernel() })
}

// --- x86 counter reservation (arch/x86/kernel/cpu/perfctr-watchdog.c) ---------------------------

extern "C" {
    fn reserve_perfctr_nmi(msr: c_uint) -> c_int;
    fn release_perfctr_nmi(msr: c_uint);
    fn reserve_evntsel_nmi(msr: c_uint) -> c_int;
    fn release_evntsel_nmi(msr: c_uint);
}

/// A counter and its control register claimed from the kernel's owner maps, which perf (and so
/// the NMI watchdog) claims too: perf takes every general counter or none, so holding one proves
/// perf holds no hardware counter. Released on drop.
pub(crate) struct NmiReservation {
    ctr: u32,
    sel: u32,
}

impl NmiReservation {
    /// Claims both, or neither.
    pub(crate) fn claim(ctr: u32, sel: u32) -> Option<Self> {
        // SAFETY: the reservation calls only test-and-set bits of the kernel's owner maps.
        if unsafe { reserve_perfctr_nmi(ctr) } == 0 {
            return None;
        }
        // SAFETY: as above.
        if unsafe { reserve_evntsel_nmi(sel) } == 0 {
            // SAFETY: releases the bit just claimed.
            unsafe { release_perfctr_nmi(ctr) };
            return None;
        }
        Some(NmiReservation { ctr, sel })
    }
}

impl Drop for NmiReservation {
    fn drop(&mut self) {
        // SAFETY: both bits were claimed by `claim` and are released once, here.
        unsafe {
            release_evntsel_nmi(self.sel);
            release_perfctr_nmi(self.ctr);
        }
    }
}

// --- MSRs -------------------------------------------------------------------------------------

/// `rdmsr` on `cpu`; a #GP (absent register) is -EIO, an offline CPU -ENXIO.
pub(crate) fn rdmsr_on(cpu: u32, msr: u32) -> Result<u64> {
    let mut v = 0u64;
    // SAFETY: the *_safe variant turns a #GP into an error return; `v` is a valid local.
    to_result(unsafe { bindings::rdmsrq_safe_on_cpu(cpu, msr, &mut v) })?;
    Ok(v)
}

/// `wrmsr` on `cpu`, as `rdmsr_on`. Callers write only registers of the detected PMU.
pub(crate) fn wrmsr_on(cpu: u32, msr: u32, value: u64) -> Result {
    // SAFETY: as for `rdmsr_on`; the register list is fixed by `msr::Layout`.
    to_result(unsafe { bindings::wrmsrq_safe_on_cpu(cpu, msr, value) })
}

/// The TSC frequency the kernel measured at boot, in kHz.
pub(crate) fn cpu_khz() -> u32 {
    // SAFETY: `cpu_khz` is set at boot and may be refined later by a plain store; a volatile
    // read of an aligned u32 sees either value.
    unsafe { core::ptr::read_volatile(&raw const bindings::cpu_khz) }
}

// --- credentials ------------------------------------------------------------------------------

/// `make_kgid(&init_user_ns, gid)` where the kernel has user namespaces; the identity otherwise
/// (include/linux/uidgid.h). `None` when the gid has no mapping (`gid_valid` fails).
pub(crate) fn kgid_in_init_ns(gid: u32) -> Option<bindings::kgid_t> {
    #[cfg(CONFIG_USER_NS)]
    let kgid = {
        extern "C" {
            fn make_kgid(ns: *mut bindings::user_namespace, gid: u32) -> bindings::kgid_t;
        }
        // SAFETY: `init_user_ns` is the always-present initial namespace.
        unsafe { make_kgid(&raw mut bindings::init_user_ns, gid) }
    };
    #[cfg(not(CONFIG_USER_NS))]
    let kgid = bindings::kgid_t { val: gid };
    (kgid.val != u32::MAX).then_some(kgid)
}

/// Whether the current task is a member of `gid` (primary or supplementary).
pub(crate) fn in_group(gid: bindings::kgid_t) -> bool {
    // SAFETY: a plain query about the current task's credentials.
    unsafe { bindings::in_group_p(gid) != 0 }
}

/// Whether the current task has CAP_SYS_ADMIN: what perf asks of everyone at
/// `perf_event_paranoid` 3, and what the register back-end asks (it programs the hardware
/// directly, past perf's scheduling).
pub(crate) fn sys_admin_capable() -> bool {
    // SAFETY: a plain query about the current task's credentials.
    unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as c_int) }
}

/// Whether `path` names something the current task can open for reading (a file or a
/// directory): what the module knows of the kernel's state that is not exported to it.
pub(crate) fn path_exists(path: &CStr) -> bool {
    // SAFETY: a NUL-terminated path; filp_open returns a file or an error pointer.
    match from_err_ptr(unsafe {
        bindings::filp_open(path.as_char_ptr(), bindings::O_RDONLY as c_int, 0)
    }) {
        Ok(file) => {
            // SAFETY: opened above, closed once.
            unsafe { bindings::filp_close(file, core::ptr::null_mut()) };
            true
        }
        Err(_) => false,
    }
}

/// `kernel.perf_event_paranoid`, read through the current task's /proc: the variable itself is
/// not exported to modules, and its level 3 (perf_event_open then needs CAP_SYS_ADMIN) is
/// checked by perf_event_open alone, not by `perf_allow_cpu`. `None` when it cannot be read
/// (no /proc in the caller's mount namespace): the caller then assumes the strictest level.
pub(crate) fn perf_event_paranoid() -> Option<i32> {
    // SAFETY: a NUL-terminated path; filp_open returns a file or an error pointer.
    let file = from_err_ptr(unsafe {
        bindings::filp_open(
            c"/proc/sys/kernel/perf_event_paranoid".as_char_ptr(),
            bindings::O_RDONLY as c_int,
            0,
        )
    })
    .ok()?;
    let mut buf = [0u8; 16];
    let mut pos: bindings::loff_t = 0;
    // SAFETY: `file` is open for reading; the buffer and position are valid locals.
    let n = unsafe { bindings::kernel_read(file, buf.as_mut_ptr().cast(), buf.len(), &mut pos) };
    // SAFETY: `file` came from filp_open above and is closed exactly once, here.
    unsafe { bindings::filp_close(file, core::ptr::null_mut()) };
    let text = buf.get(..usize::try_from(n).ok()?)?;
    core::str::from_utf8(text).ok()?.trim().parse().ok()
}

/// perf's `perfmon_capable()`: CAP_PERFMON, or CAP_SYS_ADMIN as before it existed.
pub(crate) fn perfmon_capable() -> bool {
    // SAFETY: plain queries about the current task's credentials.
    unsafe {
        bindings::capable(bindings::CAP_PERFMON as c_int)
            || bindings::capable(bindings::CAP_SYS_ADMIN as c_int)
    }
}

// --- CPU hotplug and system sleep ---------------------------------------------------------------

kernel::global_lock! {
    // SAFETY: initialised in `Callbacks::register`, before the callbacks are registered.
    unsafe(uninit) static ACTIVE: Mutex<Option<Arc<dyn crate::hotplug::Active>>> = None;
}

kernel::global_lock! {
    // SAFETY: initialised in `Callbacks::register`, before the callbacks are registered.
    unsafe(uninit) static SIM: Mutex<Option<Arc<crate::sim::SimPmu>>> = None;
}

/// The session the callbacks reach, under its lock (taken before any session's lock).
pub(crate) fn with_active<R>(
    f: impl FnOnce(&mut Option<Arc<dyn crate::hotplug::Active>>) -> R,
) -> R {
    f(&mut ACTIVE.lock())
}

/// The simulated PMU, under its lock.
pub(crate) fn with_sim<R>(f: impl FnOnce(&mut Option<Arc<crate::sim::SimPmu>>) -> R) -> R {
    f(&mut SIM.lock())
}

unsafe extern "C" fn on_cpu_online(cpu: c_uint) -> c_int {
    crate::hotplug::cpu_online(cpu);
    0
}

unsafe extern "C" fn on_cpu_offline(cpu: c_uint) -> c_int {
    crate::hotplug::cpu_offline(cpu);
    0
}

#[cfg(CONFIG_PM_SLEEP)]
unsafe extern "C" fn on_pm_event(
    _nb: *mut bindings::notifier_block,
    action: kernel::ffi::c_ulong,
    _data: *mut c_void,
) -> c_int {
    match action as u32 {
        bindings::PM_SUSPEND_PREPARE | bindings::PM_HIBERNATION_PREPARE => {
            crate::hotplug::sleep(true)
        }
        bindings::PM_POST_SUSPEND | bindings::PM_POST_HIBERNATION | bindings::PM_POST_RESTORE => {
            crate::hotplug::sleep(false)
        }
        _ => {}
    }
    bindings::NOTIFY_OK as c_int
}

/// The module's CPU hotplug state (`hotplug::cpu_online`/`cpu_offline` on each CPU that comes
/// or goes) and PM notifier (`hotplug::sleep`), removed on drop.
pub(crate) struct Callbacks {
    state: c_int,
    #[cfg(CONFIG_PM_SLEEP)]
    pm: Pin<KBox<kernel::types::Opaque<bindings::notifier_block>>>,
}

// SAFETY: the notifier block is only touched by the PM core (under its own lock) and by Drop.
unsafe impl Send for Callbacks {}
// SAFETY: as above; `&Callbacks` gives no access.
unsafe impl Sync for Callbacks {}

impl Callbacks {
    pub(crate) fn register() -> Result<Self> {
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
                Some(on_cpu_online),
                Some(on_cpu_offline),
                false,
            )
        };
        to_result(state)?;
        #[cfg(CONFIG_PM_SLEEP)]
        let pm = {
            let remove_state = || {
                // SAFETY: the state was set up above and nothing else removes it.
                unsafe { bindings::__cpuhp_remove_state(state as _, false) };
            };
            let nb = KBox::pin(
                kernel::types::Opaque::new(bindings::notifier_block {
                    notifier_call: Some(on_pm_event),
                    ..Default::default()
                }),
                GFP_KERNEL,
            )
            .inspect_err(|_| remove_state())?;
            // SAFETY: the block is pinned on the heap and unregistered in Drop before it is
            // freed.
            to_result(unsafe { bindings::register_pm_notifier(nb.get()) })
                .inspect_err(|_| remove_state())?;
            nb
        };
        Ok(Callbacks {
            state,
            #[cfg(CONFIG_PM_SLEEP)]
            pm,
        })
    }
}

impl Drop for Callbacks {
    fn drop(&mut self) {
        #[cfg(CONFIG_PM_SLEEP)]
        // SAFETY: registered in `register`.
        unsafe {
            bindings::unregister_pm_notifier(self.pm.get())
        };
        // SAFETY: set up in `register`; afterwards no callback runs.
        unsafe { bindings::__cpuhp_remove_state(self.state as _, false) };
    }
}

// --- The module's workqueue --------------------------------------------------------------------

static QUEUE: core::sync::atomic::AtomicPtr<bindings::workqueue_struct> =
    core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());

/// The module's own high-priority workqueue, where sessions queue their timer and re-arm work.
/// Destroying it at module exit drains it, so no work item of the module's runs after its code
/// is gone (the system's queues would not wait).
pub(crate) struct OwnedQueue(());

impl OwnedQueue {
    /// Allocates the queue; the module's first step, before anything can queue work.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: a static name without format arguments; 0: the default limit of items.
        let wq = unsafe {
            bindings::alloc_workqueue_noprof(
                c"arum".as_char_ptr(),
                bindings::wq_flags_WQ_HIGHPRI as c_uint,
                0,
            )
        };
        if wq.is_null() {
            return Err(ENOMEM);
        }
        QUEUE.store(wq, core::sync::atomic::Ordering::Release);
        Ok(OwnedQueue(()))
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        let wq = QUEUE.swap(core::ptr::null_mut(), core::sync::atomic::Ordering::AcqRel);
        // SAFETY: allocated in `new`, destroyed once; it drains what is still queued first.
        unsafe { bindings::destroy_workqueue(wq) };
    }
}

/// The module's workqueue. Valid from module init to exit: every caller runs on behalf of an
/// open file or a registered callback, which the module's exit removes before the queue.
pub(crate) fn queue() -> &'static kernel::workqueue::Queue {
    let wq = QUEUE.load(core::sync::atomic::Ordering::Acquire);
    // SAFETY: non-null and alive while the module is (see above): `OwnedQueue` is the module's
    // last field, dropped after the device and the hotplug callbacks are gone.
    unsafe { kernel::workqueue::Queue::from_raw(wq) }
}

// --- CPUs and time ----------------------------------------------------------------------------

/// `jiffies` in nanoseconds.
pub(crate) fn jiffies_to_ns(jiffies: u64) -> u64 {
    // SAFETY: a pure conversion.
    unsafe { bindings::jiffies64_to_nsecs(jiffies) }
}

/// Sleeps `ms` milliseconds (process context only).
pub(crate) fn sleep_ms(ms: u32) {
    // SAFETY: a plain sleep; the callers run in process context.
    unsafe { bindings::msleep(ms) };
}

/// Flushes a delayed work item and a work item until neither is pending or running: flushing
/// runs a pending item at once and waits for a running one, which may queue itself again.
pub(crate) fn flush_until_idle<T, const ID: u64>(
    timer: &kernel::workqueue::DelayedWork<T>,
    work: &kernel::workqueue::Work<T, ID>,
) {
    // DelayedWork and Work are #[repr(transparent)] over the C structs.
    let timer = core::ptr::from_ref(timer)
        .cast::<bindings::delayed_work>()
        .cast_mut();
    let work = core::ptr::from_ref(work)
        .cast::<bindings::work_struct>()
        .cast_mut();
    // SAFETY: both point at initialised items of a live object (borrowed for this call).
    while unsafe { bindings::flush_delayed_work(timer) || bindings::flush_work(work) } {}
}

/// Whether `cpu` is online. Stable only under `CpusReadGuard` (or in a hotplug callback).
pub(crate) fn cpu_online(cpu: u32) -> bool {
    if cpu >= kernel::cpu::nr_cpu_ids() {
        return false;
    }
    // SAFETY: __cpu_online_mask is a valid, always-present cpumask.
    let online =
        unsafe { kernel::cpumask::Cpumask::from_raw(&raw const bindings::__cpu_online_mask) };
    // SAFETY: `cpu` is below nr_cpu_ids.
    online.test(unsafe { kernel::cpu::CpuId::from_u32_unchecked(cpu) })
}

/// `cpus_read_lock()` held: no CPU goes on- or offline until it is dropped.
pub(crate) struct CpusReadGuard(());

impl CpusReadGuard {
    pub(crate) fn lock() -> Self {
        // SAFETY: may sleep; paired with the unlock in Drop.
        unsafe { bindings::cpus_read_lock() };
        CpusReadGuard(())
    }
}

impl Drop for CpusReadGuard {
    fn drop(&mut self) {
        // SAFETY: taken in `lock`.
        unsafe { bindings::cpus_read_unlock() };
    }
}

pub(crate) type Now = Instant<Monotonic>;

/// Nanoseconds from `earlier` to `later` (0 if `later` is earlier).
pub(crate) fn ns_between(earlier: Now, later: Now) -> u64 {
    (later - earlier).as_nanos().max(0) as u64
}

/// The earlier of two instants.
pub(crate) fn earlier(a: Now, b: Now) -> Now {
    if (b - a).as_nanos() < 0 {
        b
    } else {
        a
    }
}

/// The later of two instants.
pub(crate) fn later(a: Now, b: Now) -> Now {
    if (b - a).as_nanos() > 0 {
        b
    } else {
        a
    }
}

// --- CPUID ------------------------------------------------------------------------------------

/// `cpuid(leaf)` on the current CPU: (eax, ebx, ecx, edx).
pub(crate) fn cpuid(leaf: u32) -> (u32, u32, u32, u32) {
    let r = core::arch::x86_64::__cpuid(leaf);
    (r.eax, r.ebx, r.ecx, r.edx)
}
