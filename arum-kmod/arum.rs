// SPDX-License-Identifier: GPL-2.0
//! ARUM's /dev/arum: per-CPU performance counters for the `arum` tool, without a kernel patch
//! and, with the device's mode and group set by an administrator, without root.
//!
//! `write` takes one request in the wire format defined in arum-wire/src/wire.rs (the same
//! source file is compiled here), validates all of it, then configures the counters on each
//! requested CPU from that CPU (a workqueue item per CPU) and starts counting. `read` stops
//! counting, reads every CPU and returns the counts; a failed `write` leaves its detailed error
//! code for the next `read`. Only one process may have the device open at a time.

use kernel::{
    bindings,
    fs::{File, Kiocb},
    iov::{IovIterDest, IovIterSource},
    miscdevice::{MiscDevice, MiscDeviceOptions, MiscDeviceRegistration},
    new_mutex,
    prelude::*,
    sync::Mutex,
};

mod msr;
mod oncpu;
mod perf;
mod session;
#[path = "../arum-wire/src/wire.rs"]
#[allow(dead_code, unreachable_pub)]
mod wire;

use kernel::sync::Arc;
use session::{Access, Counting, Failure, Session};

module! {
    type: ArumModule,
    name: "arum",
    authors: ["ARUM developers"],
    description: "Per-CPU performance counters for the ARUM resource usage monitor",
    license: "GPL",
    params: {
        mode: u32 {
            default: 0o600,
            description: "Permissions of /dev/arum (default 0600)",
        },
        group: i32 {
            default: -1,
            description: "If >= 0, only CAP_SYS_ADMIN and members of this group may open /dev/arum",
        },
        backend: u32 {
            default: 0,
            description: "0: count through the kernel's perf API (default); 1: program the counter MSRs directly",
        },
        sim: u32 {
            default: 0,
            description: "With backend=1, a simulated PMU instead of the real MSRs (for tests): 1 K8, 2 Core 2, 3 NetBurst",
        },
        sim_width: u32 {
            default: 0,
            description: "Counter width of the simulated PMU in bits (0: the family's own)",
        },
        sim_rate: u32 {
            default: 1000,
            description: "Events per microsecond each simulated counter gains while enabled",
        },
    },
}

kernel::global_lock! {
    // SAFETY: initialised in `ArumModule::init` before the device is registered.
    unsafe(uninit) static IN_USE: SpinLock<bool> = false;
}

#[pin_data]
struct ArumModule {
    #[pin]
    _dev: MiscDeviceRegistration<ArumFile>,
}

impl kernel::InPlaceModule for ArumModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        // SAFETY: called once, before anything can open the device.
        unsafe { IN_USE.init() };
        try_pin_init!(Self {
            _dev <- register_with_mode(module_parameters::mode.value()),
        })
    }
}

/// `MiscDeviceRegistration::register` with the device node's mode set: the registration type is
/// `#[repr(transparent)]` over `struct miscdevice`, so this writes the same `miscdevice` that
/// `register` would, plus `mode`, and registers it.
fn register_with_mode(mode: u32) -> impl PinInit<MiscDeviceRegistration<ArumFile>, Error> {
    let opts = MiscDeviceOptions { name: c"arum" };
    // SAFETY: `slot` is valid for writes and pinned; on success it holds a registered
    // miscdevice, exactly the invariant of MiscDeviceRegistration (whose Drop deregisters it);
    // on failure nothing is registered.
    unsafe {
        pin_init::pin_init_from_closure(move |slot: *mut MiscDeviceRegistration<ArumFile>| {
            let raw = slot.cast::<bindings::miscdevice>();
            let mut misc = opts.into_raw::<ArumFile>();
            misc.mode = (mode & 0o777) as _;
            raw.write(misc);
            kernel::error::to_result(bindings::misc_register(raw))
        })
    }
}

/// What one open file is doing.
enum State {
    Idle,
    Counting(Arc<Session>),
    /// The last write failed: its details for the next read.
    Failed { status: i32, code: u32, cpu: u32, counter: u32 },
    /// A response ready to be read, from file position 0.
    Done(KVVec<u8>),
}

#[pin_data(PinnedDrop)]
struct ArumFile {
    #[pin]
    state: Mutex<State>,
}

fn allowed() -> bool {
    let group = module_parameters::group.value();
    if group < 0 {
        return true;
    }
    // SAFETY: plain queries about the current task's credentials.
    unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as i32) || bindings::in_group_p(bindings::kgid_t { val: group as u32 }) != 0 }
}

#[vtable]
impl MiscDevice for ArumFile {
    type Ptr = Pin<KBox<Self>>;

    fn open(_file: &File, _misc: &MiscDeviceRegistration<Self>) -> Result<Pin<KBox<Self>>> {
        if !allowed() {
            return Err(EACCES);
        }
        {
            let mut busy = IN_USE.lock();
            if *busy {
                return Err(EBUSY);
            }
            *busy = true;
        }
        KBox::try_pin_init(try_pin_init!(ArumFile { state <- new_mutex!(State::Idle) }), GFP_KERNEL).inspect_err(|_| {
            *IN_USE.lock() = false;
        })
    }

    fn write_iter(mut kiocb: Kiocb<'_, Self::Ptr>, iov: &mut IovIterSource<'_>) -> Result<usize> {
        let me = kiocb.file();
        let len = iov.len();
        let mut state = me.state.lock();
        if matches!(*state, State::Counting(_)) {
            return Err(EBUSY);
        }
        if len != wire::REQUEST_SIZE {
            *state = State::Failed { status: EINVAL.to_errno(), code: wire::ERR_SIZE, cpu: wire::NO_CPU, counter: wire::NO_COUNTER };
            return Err(EINVAL);
        }
        let mut bytes = KVVec::with_capacity(len, GFP_KERNEL)?;
        iov.copy_from_iter_vec(&mut bytes, GFP_KERNEL)?;
        *kiocb.ki_pos_mut() = 0;
        match configure(&bytes) {
            Ok(s) => {
                *state = s;
                Ok(len)
            }
            Err((err, code, cpu, counter)) => {
                *state = State::Failed { status: err.to_errno(), code, cpu, counter };
                Err(err)
            }
        }
    }

    fn read_iter(mut kiocb: Kiocb<'_, Self::Ptr>, iov: &mut IovIterDest<'_>) -> Result<usize> {
        let me = kiocb.file();
        let mut state = me.state.lock();
        let response = match &*state {
            State::Idle => return Err(EINVAL),
            State::Done(buf) => return iov.simple_read_from_buffer(kiocb.ki_pos_mut(), buf),
            State::Failed { status, code, cpu, counter } => respond_error(*status, *code, *cpu, *counter)?,
            State::Counting(session) => session.stop()?,
        };
        // Counting has stopped: release the counters now, keep the response for partial reads.
        *state = State::Done(response);
        *kiocb.ki_pos_mut() = 0;
        let State::Done(buf) = &*state else { unreachable!() };
        iov.simple_read_from_buffer(kiocb.ki_pos_mut(), buf)
    }
}

#[pinned_drop]
impl PinnedDrop for ArumFile {
    fn drop(self: Pin<&mut Self>) {
        // Stop the timer before the counters are released with the state; then the device is
        // free again.
        let mut state = self.state.lock();
        if let State::Counting(session) = &*state {
            session.halt();
        }
        *state = State::Idle;
        drop(state);
        *IN_USE.lock() = false;
    }
}

fn cpu_online(cpu: u32) -> bool {
    if cpu >= kernel::cpu::nr_cpu_ids() {
        return false;
    }
    // SAFETY: __cpu_online_mask is a valid, always-present cpumask.
    let online = unsafe { kernel::cpumask::Cpumask::from_raw(&raw const bindings::__cpu_online_mask) };
    kernel::cpu::CpuId::from_u32(cpu).is_some_and(|id| online.test(id))
}

/// The register access and layout of the `msr` back-end, real or simulated.
fn msr_access() -> core::result::Result<Access, Failure> {
    let refuse = (ENODEV, wire::ERR_SOURCE, wire::NO_CPU, wire::NO_COUNTER);
    let layout = match module_parameters::sim.value() {
        0 => return msr::Layout::detect().map(|_| Access::Hw(msr::HwMsr)).ok_or(refuse),
        1 => msr::AMD_K8,
        2 => msr::CORE2,
        3 => msr::NETBURST,
        _ => return Err(refuse),
    };
    let width = module_parameters::sim_width.value();
    let layout = if (8..=64).contains(&width) { msr::Layout { width, ..layout } } else { layout };
    let pmu = msr::SimPmu::new(layout, u64::from(module_parameters::sim_rate.value()), kernel::cpu::nr_cpu_ids())
        .map_err(|_| (ENOMEM, wire::ERR_NO_MEMORY, wire::NO_CPU, wire::NO_COUNTER))?;
    Ok(Access::Sim(pmu))
}

/// Validates the whole request, then creates every counter, each CPU's on that CPU.
fn configure(bytes: &[u8]) -> core::result::Result<State, Failure> {
    let req = wire::Request::decode(bytes).ok_or((EINVAL, wire::ERR_SIZE, wire::NO_CPU, wire::NO_COUNTER))?;
    let msr = module_parameters::backend.value() == 1;
    let access = if msr { Some(msr_access()?) } else { None };
    let limits = match &access {
        Some(Access::Sim(s)) => s.layout().limits(),
        Some(Access::Hw(_)) => msr::Layout::detect().map(|l| l.limits()).ok_or((ENODEV, wire::ERR_SOURCE, wire::NO_CPU, wire::NO_COUNTER))?,
        None => wire::Limits { style: 0, general_counters: 0, fixed_counters: 0, msr_allowed: false },
    };
    wire::validate(&req, bytes.len(), &limits).map_err(|r| (EINVAL, r.code, wire::NO_CPU, r.counter))?;
    let want = if msr { wire::SOURCE_MSR } else { wire::SOURCE_PERF };
    if let Some(i) = req.counters[..req.ncounters as usize].iter().position(|c| c.source != want) {
        return Err((EINVAL, wire::ERR_SOURCE, wire::NO_CPU, i as u32));
    }
    let mut cpus = KVec::new();
    for cpu in 0..wire::MAX_CPUS as u32 {
        if req.cpus[(cpu / 64) as usize] & (1 << (cpu % 64)) == 0 {
            continue;
        }
        if !cpu_online(cpu) {
            return Err((EINVAL, wire::ERR_CPU_OFFLINE, cpu, wire::NO_COUNTER));
        }
        cpus.push(cpu, GFP_KERNEL).map_err(|_| (ENOMEM, wire::ERR_NO_MEMORY, cpu, wire::NO_COUNTER))?;
    }
    let counting = Counting::new(&req, cpus, access, u64::from(module_parameters::sim_rate.value()))?;
    let session = Session::start(counting).map_err(|e| (e, wire::ERR_NO_MEMORY, wire::NO_CPU, wire::NO_COUNTER))?;
    Ok(State::Counting(session))
}

/// The response to a read after a refused write: only the header, with the reason.
fn respond_error(status: i32, code: u32, cpu: u32, counter: u32) -> Result<KVVec<u8>> {
    let mut buf = KVVec::from_elem(0u8, wire::HEADER_SIZE, GFP_KERNEL)?;
    let header = wire::ResponseHeader {
        magic: wire::MAGIC,
        version: wire::VERSION,
        size: wire::HEADER_SIZE as u32,
        status,
        error_code: code,
        error_cpu: cpu,
        error_counter: counter,
        ..Default::default()
    };
    header.encode(&mut buf);
    Ok(buf)
}
