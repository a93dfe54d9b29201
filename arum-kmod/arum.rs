// SPDX-License-Identifier: GPL-2.0
//! ARUM's /dev/arum: per-CPU performance counters for the `arum` tool, without a kernel patch
//! and, with the device node's group and mode set by an administrator, without root, but never with
//! more power than perf would give the same user.
//!
//! `write` takes one request in the wire format defined in arum-wire/src/wire.rs (the same
//! source file is compiled here), validates all of it, checks it against what the writer may
//! count now (perf's rules, see `rights`), then starts every requested CPU's counters at once
//! (`session`). `read` stops counting
//! and returns the counts; a failed `write` leaves its detailed error for the next `read`. One
//! process at a time may have the device open.
//!
//! Files: `ffi` (every C call without bindings), `percpu` (a work item on each CPU at once),
//! `hotplug` (CPU hotplug and suspend), `backend` (what a way of counting provides), `perf` and
//! `msr` (the two ways), `sim` (the simulated PMU for tests), `session` (one measurement).

use core::sync::atomic::{AtomicBool, Ordering};

use kernel::{
    bindings, debugfs,
    fs::{File, Kiocb},
    iov::{IovIterDest, IovIterSource},
    miscdevice::{MiscDevice, MiscDeviceOptions, MiscDeviceRegistration},
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

// The counter registers, CPUID and perf's x86 counter allocator: x86-64 only.
#[cfg(not(target_arch = "x86_64"))]
compile_error!("arum is for x86-64: its register back-end and CPUID code are x86's");

mod backend;
mod ffi;
mod hotplug;
mod msr;
mod percpu;
mod perf;
mod session;
mod sim;
#[path = "../arum-wire/src/wire.rs"]
#[allow(dead_code, unreachable_pub)]
mod wire;

use backend::{Backend, Failure};
use hotplug::Active;
use sim::{SimConfig, SimPmu};

// The production parameters, and in the test build (`ARUM_SIM=1`, see Kbuild) the simulated
// PMU's: a module loaded on a real machine has no test-only parameter.
macro_rules! arum_module {
    ($($sim_params:tt)*) => {
        module! {
            type: ArumModule,
            name: "arum",
            authors: ["ARUM developers"],
            description: "Per-CPU performance counters for the ARUM resource usage monitor",
            license: "GPL",
            params: {
                group: i32 {
                    default: -1,
                    description: "If >= 0, only CAP_PERFMON and members of this group may open /dev/arum",
                },
                backend: u32 {
                    default: 0,
                    description: "0: count through the kernel's perf API (default); 1: program the counter MSRs directly",
                },
                series_kib: u32 {
                    default: 16384,
                    description: "Most memory the time series of one measurement may take, KiB; beyond it the series is thinned",
                },
                $($sim_params)*
            },
        }
    };
}

#[cfg(not(arum_sim))]
arum_module! {}

#[cfg(arum_sim)]
arum_module! {
        sim: u32 {
            default: 0,
            description: "With backend=1, a simulated PMU instead of the real MSRs (for tests): 1 K8, 2 Core 2, 3 NetBurst, 4 Zen 4, 5 Intel perfmon v6",
        },
        sim_width: u32 {
            default: 0,
            description: "Counter width of the simulated PMU in bits (0: the family's own)",
        },
        sim_rate: u32 {
            default: 1000,
            description: "Events per microsecond each simulated counter gains while enabled",
        },
        sim_fixed: i32 {
            default: -1,
            description: "Fixed counters of a simulated Intel PMU (-1: the family's own)",
        },
        sim_ht: u32 {
            default: 0,
            description: "1: simulated CPUs 2k and 2k+1 are Hyper-Threading siblings sharing one core's registers",
        },
        sim_busy: u32 {
            default: 0,
            description: "1: the simulated counters are held by another owner (perf and its NMI watchdog)",
        },
        sim_fail_msr: u32 {
            default: 0,
            description: "A simulated register whose accesses fault (0: none)",
        },
        sim_global: u64 {
            default: 0,
            description: "Power-on value of the simulated global counter enable",
        },
        sim_delay_ms: u32 {
            default: 0,
            description: "Milliseconds each simulated event-select write takes",
        },
        sim_perf_absent: u64 {
            default: 0,
            description: "CPUs (a mask) where the perf back-end's first counter is missing, as on a hybrid part's other core type",
        },
        sim_stop_pause_ms: u32 {
            default: 0,
            description: "At most this many milliseconds a stopping session waits after it halted, until a CPU comes online",
        },
        sim_rearm_pause_ms: u32 {
            default: 0,
            description: "Milliseconds the perf back-end's re-arm work waits before it looks at its session",
        },
}

/// Whether a file has the device open: one at a time.
static IN_USE: AtomicBool = AtomicBool::new(false);

#[pin_data]
struct ArumModule {
    // Dropped first: no file can be opened once the rest goes.
    #[pin]
    _dev: MiscDeviceRegistration<ArumFile>,
    _sim_view: Option<Pin<KBox<debugfs::File<Arc<SimPmu>>>>>,
    _debugfs: debugfs::Dir,
    _hotplug: hotplug::Registration,
    // Dropped last: destroying the queue waits for every work item of the module.
    _queue: ffi::OwnedQueue,
}

impl kernel::InPlaceModule for ArumModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        let debugfs = debugfs::Dir::new(c"arum");
        try_pin_init!(Self {
            _queue: ffi::OwnedQueue::new()?,
            _hotplug: hotplug::Registration::new()?,
            _sim_view: sim_view(&debugfs)?,
            _debugfs: debugfs,
            // The node's owner, group and mode are the administrator's (udev, or chmod after
            // loading): the device's own rights are checked at every open and write.
            _dev <- MiscDeviceRegistration::register(MiscDeviceOptions { name: c"arum" }),
        }? Error)
    }
}

/// Builds the simulated PMU the parameters ask for, hands it to the hotplug callbacks, and
/// shows it in debugfs.
fn sim_view(dir: &debugfs::Dir) -> Result<Option<Pin<KBox<debugfs::File<Arc<SimPmu>>>>>> {
    if group_kgid().is_err() {
        pr_err!(
            "group={} has no mapping\n",
            module_parameters::group.value()
        );
        return Err(EINVAL);
    }
    let Some(cfg) = sim_config()? else {
        return Ok(None);
    };
    let sim = SimPmu::new(cfg, kernel::cpu::nr_cpu_ids())?;
    hotplug::set_sim(Some(sim.clone()));
    let view = KBox::pin_init(
        dir.read_callback_file(c"sim", sim, &|s: &Arc<SimPmu>, f| s.describe(f)),
        GFP_KERNEL,
    )?;
    Ok(Some(view))
}

/// What the test build's parameters make the module pretend; nothing in a production build.
mod test_hooks {
    /// Whether counter `counter` is to be treated as missing on `cpu` (`sim_perf_absent`, for
    /// counter 0): the other core type of a hybrid part, which no test machine has.
    #[cfg(arum_sim)]
    pub(crate) fn perf_absent(cpu: u32, counter: usize) -> bool {
        let mask = super::module_parameters::sim_perf_absent.value();
        counter == 0 && cpu < 64 && mask >> cpu & 1 == 1
    }

    #[cfg(not(arum_sim))]
    pub(crate) fn perf_absent(_cpu: u32, _counter: usize) -> bool {
        false
    }

    /// CPUs that came online since the module was loaded.
    #[cfg(arum_sim)]
    static ONLINE_EVENTS: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

    /// A CPU came online (the hotplug callback).
    #[cfg(arum_sim)]
    pub(crate) fn cpu_came_online() {
        ONLINE_EVENTS.fetch_add(1, core::sync::atomic::Ordering::SeqCst);
    }

    /// A pause where a stopping session has halted and not yet finished, until a CPU comes
    /// online or `sim_stop_pause_ms` pass: a CPU that comes back then must not queue work, which
    /// could otherwise outlive the file and the module. Ending at the CPU's return puts one in
    /// every such window while a test toggles a CPU, without waiting longer than that.
    #[cfg(arum_sim)]
    pub(crate) fn pause_in_stop() {
        use core::sync::atomic::Ordering;
        let most = u64::from(super::module_parameters::sim_stop_pause_ms.value()) * 1_000_000;
        let (seen, start) = (ONLINE_EVENTS.load(Ordering::SeqCst), crate::ffi::Now::now());
        while ONLINE_EVENTS.load(Ordering::SeqCst) == seen
            && crate::ffi::ns_between(start, crate::ffi::Now::now()) < most
        {
            crate::ffi::sleep_ms(1);
        }
    }

    /// A pause at the start of the re-arm work (`sim_rearm_pause_ms`): work still queued when
    /// the module goes would then run in freed code, which the module's own queue prevents.
    #[cfg(arum_sim)]
    pub(crate) fn pause_in_rearm() {
        pause(super::module_parameters::sim_rearm_pause_ms.value());
    }

    #[cfg(arum_sim)]
    fn pause(ms: u32) {
        if ms > 0 {
            crate::ffi::sleep_ms(ms);
        }
    }

    #[cfg(not(arum_sim))]
    pub(crate) fn cpu_came_online() {}

    #[cfg(not(arum_sim))]
    pub(crate) fn pause_in_stop() {}

    #[cfg(not(arum_sim))]
    pub(crate) fn pause_in_rearm() {}
}

/// The simulated PMU the test build's parameters ask for.
#[cfg(arum_sim)]
fn sim_config() -> Result<Option<SimConfig>> {
    let mut layout = match module_parameters::sim.value() {
        0 => return Ok(None),
        1 => msr::AMD_K8,
        2 => msr::CORE2,
        3 => msr::NETBURST,
        4 => msr::AMD_ZEN4,
        5 => msr::INTEL_V6,
        _ => return Err(EINVAL),
    };
    let width = module_parameters::sim_width.value();
    if (8..=64).contains(&width) {
        layout.width = width;
    }
    let fixed = module_parameters::sim_fixed.value();
    if fixed >= 0 && layout.style == wire::STYLE_INTEL {
        layout.fixed = (fixed as u32).min(msr::INTEL_MAX_FIXED);
    }
    Ok(Some(SimConfig {
        layout,
        rate_per_us: u64::from(module_parameters::sim_rate.value()),
        ht: module_parameters::sim_ht.value() != 0,
        busy: module_parameters::sim_busy.value() != 0,
        fail_msr: module_parameters::sim_fail_msr.value(),
        global_at_power_on: module_parameters::sim_global.value(),
        delay_ms: module_parameters::sim_delay_ms.value(),
    }))
}

/// A production build has no simulated PMU.
#[cfg(not(arum_sim))]
fn sim_config() -> Result<Option<SimConfig>> {
    Ok(None)
}

/// What one open file is doing.
enum State {
    Idle,
    Counting(Arc<dyn Active>),
    /// The last write failed, or stopping did: its details for the next read.
    Failed(Failure),
    /// A response ready to be read, from file position 0.
    Done(KVVec<u8>),
}

#[pin_data(PinnedDrop)]
struct ArumFile {
    #[pin]
    state: Mutex<State>,
}

/// The `group` parameter as a kernel group id (`Ok(None)`: no group restriction).
fn group_kgid() -> Result<Option<bindings::kgid_t>> {
    match module_parameters::group.value() {
        g if g < 0 => Ok(None),
        g => ffi::kgid_in_init_ns(g as u32).map(Some).ok_or(EINVAL),
    }
}

/// The device's own rule: with `group` set, only members and CAP_PERFMON (perf's capability).
/// Membership first: a failed capability check leaves an audit record, which members should
/// not cause.
fn may_open() -> bool {
    match group_kgid() {
        Ok(None) => true,
        Ok(Some(gid)) => ffi::in_group(gid) || ffi::perfmon_capable(),
        Err(_) => false,
    }
}

/// What the current task may do with the device, judged as perf judges a perf_event_open of
/// the same counters, at open and again at every configuring write, so that a descriptor
/// handed to another process, or kept across a change of the sysctl, has only the rights its
/// user has now. Every request counts whole CPUs (`perf_allow_cpu`, which also asks the LSM);
/// `kernel`: kernel mode too (`perf_allow_kernel`); `registers`: the register back-end, which
/// bypasses perf, needs CAP_SYS_ADMIN. perf_event_open's own LSM check (PERF_SECURITY_OPEN) is
/// not exported to modules: the CPU and kernel checks are the LSM's say here.
fn rights(kernel: bool, registers: bool) -> Result {
    if !may_open() {
        return Err(EACCES);
    }
    // Level 3 (or unknown): perf_event_open needs CAP_SYS_ADMIN.
    if ffi::perf_event_paranoid().is_none_or(|level| level > 2) && !ffi::sys_admin_capable() {
        return Err(EACCES);
    }
    ffi::may_count_cpus()?;
    if kernel {
        ffi::may_count_kernel()?;
    }
    if registers && !ffi::sys_admin_capable() {
        return Err(EPERM);
    }
    Ok(())
}

#[vtable]
impl MiscDevice for ArumFile {
    type Ptr = Pin<KBox<Self>>;

    fn open(_file: &File, _misc: &MiscDeviceRegistration<Self>) -> Result<Pin<KBox<Self>>> {
        // Nothing can be counted without the right to count whole CPUs: refused at once.
        if let Err(e) = rights(false, false) {
            pr_debug!(
                "open refused: errno {} (group {})\n",
                e.to_errno(),
                module_parameters::group.value()
            );
            return Err(e);
        }
        if IN_USE
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(EBUSY);
        }
        KBox::try_pin_init(
            try_pin_init!(ArumFile {
                state <- new_mutex!(State::Idle),
            }),
            GFP_KERNEL,
        )
        .inspect_err(|_| IN_USE.store(false, Ordering::Release))
    }

    fn write_iter(mut kiocb: Kiocb<'_, Self::Ptr>, iov: &mut IovIterSource<'_>) -> Result<usize> {
        let me = kiocb.file();
        let len = iov.len();
        let mut state = me.state.lock();
        if matches!(*state, State::Counting(_)) {
            return Err(EBUSY);
        }
        // A new request replaces what the last one left, whatever happens next: a later read
        // never returns an earlier measurement.
        *state = State::Idle;
        *kiocb.ki_pos_mut() = 0;
        let outcome = read_request(iov, len).and_then(|bytes| configure(&bytes));
        match outcome {
            Ok(session) => {
                *state = State::Counting(session);
                Ok(len)
            }
            Err(f) => {
                pr_debug!(
                    "request refused: {} (errno {}, cpu {}, counter {})\n",
                    wire::error_text(f.code),
                    f.err.to_errno(),
                    f.cpu as i32,
                    f.counter as i32
                );
                *state = State::Failed(f);
                Err(f.err)
            }
        }
    }

    fn read_iter(mut kiocb: Kiocb<'_, Self::Ptr>, iov: &mut IovIterDest<'_>) -> Result<usize> {
        let me = kiocb.file();
        let mut state = me.state.lock();
        let failure = match &*state {
            State::Done(buf) => return iov.simple_read_from_buffer(kiocb.ki_pos_mut(), buf),
            State::Idle => Failure::new(EINVAL, wire::ERR_NOT_CONFIGURED),
            State::Failed(f) => *f,
            State::Counting(session) => {
                let session = session.clone();
                // Whatever stopping returns, counting has stopped and the counters are released
                // with the last reference below.
                *state = State::Idle;
                let stopped = session.stop();
                drop(session);
                match stopped {
                    Ok(response) => {
                        *state = State::Done(response);
                        *kiocb.ki_pos_mut() = 0;
                        let State::Done(buf) = &*state else {
                            unreachable!()
                        };
                        return iov.simple_read_from_buffer(kiocb.ki_pos_mut(), buf);
                    }
                    Err(f) => {
                        *state = State::Failed(f);
                        f
                    }
                }
            }
        };
        let header = respond_error(&failure)?;
        *state = State::Done(header);
        *kiocb.ki_pos_mut() = 0;
        let State::Done(buf) = &*state else {
            unreachable!()
        };
        iov.simple_read_from_buffer(kiocb.ki_pos_mut(), buf)
    }
}

#[pinned_drop]
impl PinnedDrop for ArumFile {
    fn drop(self: Pin<&mut Self>) {
        // Closed while counting (or killed): stop every CPU's counters and put their registers
        // back, then release them; then the device is free again.
        let mut state = self.state.lock();
        if let State::Counting(session) = core::mem::replace(&mut *state, State::Idle) {
            let _ = session.stop();
        }
        drop(state);
        IN_USE.store(false, Ordering::Release);
    }
}

/// The request bytes of a write of `len` bytes.
fn read_request(iov: &mut IovIterSource<'_>, len: usize) -> Result<KVVec<u8>, Failure> {
    if len != wire::REQUEST_SIZE {
        return Err(Failure::new(EINVAL, wire::ERR_SIZE));
    }
    let mut bytes = KVVec::with_capacity(len, GFP_KERNEL)?;
    iov.copy_from_iter_vec(&mut bytes, GFP_KERNEL)
        .map_err(|e| Failure::new(e, wire::ERR_SIZE))?;
    if bytes.len() != len {
        return Err(Failure::new(EFAULT, wire::ERR_SIZE));
    }
    Ok(bytes)
}

/// The register back-end's registers and layout: the simulated PMU, or the real one. Refused
/// where the counters' owner cannot be proved (see `Layout::owner_provable`), and on a machine
/// that runs KVM: its mediated vPMU hands the counters to guests without claiming them.
fn msr_registers() -> Result<(msr::Registers, msr::Layout, Option<u64>), Failure> {
    let refuse = Failure::new(ENODEV, wire::ERR_SOURCE);
    let (registers, layout, rate) = match hotplug::sim() {
        Some(sim) => {
            let (layout, rate) = (sim.layout(), sim.rate_per_us());
            (msr::Registers::Sim(sim), layout, Some(rate))
        }
        None => {
            if ffi::path_exists(c"/sys/module/kvm") {
                return Err(refuse);
            }
            let layout = msr::Layout::detect().ok_or(refuse)?;
            (msr::Registers::Hw, layout, None)
        }
    };
    if !layout.owner_provable() {
        return Err(refuse);
    }
    Ok((registers, layout, rate))
}

/// Validates the whole request and the opener's rights, then starts counting on every
/// requested CPU.
fn configure(bytes: &[u8]) -> Result<Arc<dyn Active>, Failure> {
    let mut req = wire::Request::decode(bytes).ok_or(Failure::new(EINVAL, wire::ERR_SIZE))?;
    let use_msr = module_parameters::backend.value() == 1;
    let registers = if use_msr {
        Some(msr_registers()?)
    } else {
        None
    };
    let limits = match &registers {
        Some((_, layout, _)) => layout.limits(),
        None => wire::Limits {
            style: 0,
            general_counters: 0,
            fixed_counters: 0,
            msr_allowed: false,
        },
    };
    wire::validate(&req, bytes.len(), &limits)
        .map_err(|r| Failure::new(EINVAL, r.code).counter(r.counter as usize))?;
    let want = if use_msr {
        wire::SOURCE_MSR
    } else {
        wire::SOURCE_PERF
    };
    if let Some(i) = req.active().iter().position(|c| c.source != want) {
        return Err(Failure::new(EINVAL, wire::ERR_SOURCE).counter(i));
    }
    // The writer's rights now, whoever opened the descriptor and whatever the sysctl was then.
    rights(req.flags & wire::FLAG_KERNEL != 0, use_msr)
        .map_err(|e| Failure::new(e, wire::ERR_PERMISSION))?;
    let mut flags = 0;
    if req.clear_any_thread(limits.style) {
        flags |= wire::RESPONSE_ANY_THREAD_CLEARED;
    }
    let mut cpus = KVec::new();
    for cpu in (0..wire::MAX_CPUS).filter(|&c| req.has_cpu(c)) {
        let cpu = cpu as u32;
        if !ffi::cpu_online(cpu) {
            return Err(Failure::new(EINVAL, wire::ERR_CPU_OFFLINE).on_cpu(cpu));
        }
        cpus.push(cpu, GFP_KERNEL)?;
    }
    match registers {
        Some((regs, layout, sim_rate)) => {
            let backend = msr::MsrBackend::new(&req, regs, layout, sim_rate)?;
            start(backend, &req, &cpus, flags)
        }
        None => start(perf::PerfBackend::new(&req)?, &req, &cpus, flags),
    }
}

fn start<B: Backend>(
    backend: B,
    req: &wire::Request,
    cpus: &[u32],
    flags: u32,
) -> Result<Arc<dyn Active>, Failure> {
    let (period, period_ns) = session::timer_period(req.timer_period_ns, backend.wrap_ns())?;
    let plan = session::Plan {
        ncounters: req.active().len(),
        period,
        period_ns,
        series_bytes: module_parameters::series_kib.value() as usize * 1024,
        flags,
    };
    let s: Arc<dyn Active> = session::Session::start(backend, cpus, plan)?;
    Ok(s)
}

/// The response to a read after a refusal: only the header, with the reason.
fn respond_error(f: &Failure) -> Result<KVVec<u8>> {
    let mut buf = KVVec::from_elem(0u8, wire::HEADER_SIZE, GFP_KERNEL)?;
    let header = wire::ResponseHeader {
        magic: wire::MAGIC,
        version: wire::VERSION,
        size: wire::HEADER_SIZE as u32,
        status: f.err.to_errno(),
        error_code: f.code,
        error_cpu: f.cpu,
        error_counter: f.counter,
        sample_stride: 1,
        ..Default::default()
    };
    header.encode(&mut buf);
    Ok(buf)
}
