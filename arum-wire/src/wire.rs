//! The `/dev/arum` wire format, defined once: the arum-wire crate compiles this file, and the
//! kernel module includes the same file (`#[path]`), so it uses `core` only: no std, no alloc.
//!
//! A `write` carries one [`Request`]. A `read` returns a [`ResponseHeader`], then `ncpus`
//! [`CpuCounts`], then `nsamples` [`Sample`]s (the per-CPU time series), all little-endian,
//! `#[repr(C)]`, naturally aligned, with explicit padding fields so no uninitialised byte exists.
//! [`Response::parse`] checks a response and walks its records without allocating.

/// "ARUM" read as a little-endian u32.
pub const MAGIC: u32 = 0x4D55_5241;
/// Version 2: per-counter enabled/running times, per-CPU flags and start offsets, the start and
/// stop spreads, response flags.
pub const VERSION: u32 = 2;
/// The most counters one request may program (NetBurst has 18).
pub const MAX_COUNTERS: usize = 18;
/// CPUs addressable by the request's CPU mask.
pub const MAX_CPUS: usize = 256;
pub const CPUMASK_WORDS: usize = MAX_CPUS / 64;

/// Request flags.
pub const FLAG_USER: u32 = 1 << 0;
pub const FLAG_KERNEL: u32 = 1 << 1;
const FLAGS_KNOWN: u32 = FLAG_USER | FLAG_KERNEL;

/// How a counter is counted.
pub const SOURCE_PERF: u32 = 0;
pub const SOURCE_MSR: u32 = 1;

/// Register layouts the `msr` source understands.
pub const STYLE_AMD: u32 = 1;
pub const STYLE_INTEL: u32 = 2;
pub const STYLE_NETBURST: u32 = 3;

/// Fixed counters are numbered from 32, as in Linux.
pub const FIXED_BASE: u32 = 32;

/// The shortest overflow-timer period the module runs: each expiry reads every counter of every
/// CPU, so a shorter one is refused rather than left to load the machine (perf stat's `-I` has
/// the same floor).
pub const MIN_PERIOD_NS: u64 = 10_000_000;
/// The longest period: the time series' coarsest resolution.
pub const MAX_PERIOD_NS: u64 = 1_000_000_000;

/// `perf_event_attr.type` values the `perf` source accepts (include/uapi/linux/perf_event.h).
pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_HW_CACHE: u32 = 3;
pub const PERF_TYPE_RAW: u32 = 4;
/// `PERF_COUNT_HW_MAX`: the generalised hardware events.
const PERF_COUNT_HW_MAX: u64 = 10;
/// `PERF_COUNT_HW_CACHE_{MAX,OP_MAX,RESULT_MAX}`.
const HW_CACHE_IDS: u64 = 7;
const HW_CACHE_OPS: u64 = 3;
const HW_CACHE_RESULTS: u64 = 2;
/// Software events a CPU-wide counter may count: cpu-clock, task-clock, page-faults,
/// context-switches, cpu-migrations, minor and major faults, alignment and emulation faults,
/// cgroup-switches. Not dummy (9) nor bpf-output (10).
const SOFTWARE_ALLOWED: [u64; 10] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 11];
/// Intel's AnyThread bit (counts the sibling hyper-thread too): the module clears it in every
/// event select and raw config, and says so in [`RESPONSE_ANY_THREAD_CLEARED`].
pub const ANY_THREAD: u64 = 1 << 21;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterRequest {
    /// [`SOURCE_PERF`] or [`SOURCE_MSR`].
    pub source: u32,
    /// `msr`: counter index (general 0.., fixed 32+i; NetBurst 0..17).
    pub index: u32,
    /// `perf`: perf_event_attr.type.
    pub perf_type: u32,
    /// `msr` on NetBurst: the ESCR MSR address.
    pub escr_msr: u32,
    /// `perf`: attr.config. `msr`: the event-select value without EN/INT/USR/OS (AMD, Intel),
    /// or the CCCR value (NetBurst).
    pub config: u64,
    pub config1: u64,
    /// `msr` on NetBurst: the ESCR value without the T0/T1 OS/USR bits.
    pub escr: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub magic: u32,
    pub version: u32,
    /// `size_of::<Request>()`, checked against the write's length.
    pub size: u32,
    pub ncounters: u32,
    pub flags: u32,
    pub reserved: u32,
    /// Overflow-avoiding timer period, at least [`MIN_PERIOD_NS`]; 0 = computed by the module.
    pub timer_period_ns: u64,
    /// CPUs to count on, bit N = CPU N.
    pub cpus: [u64; CPUMASK_WORDS],
    pub counters: [CounterRequest; MAX_COUNTERS],
}

/// Response flags.
/// AnyThread was set in a request and cleared: those events counted this thread only.
pub const RESPONSE_ANY_THREAD_CLEARED: u32 = 1 << 0;
/// The time series outgrew its buffer: every other sample was dropped, perhaps repeatedly
/// (`sample_stride` says how many expiries one sample now spans).
pub const RESPONSE_SERIES_THINNED: u32 = 1 << 1;
/// The system suspended during the session; the counters were stopped and re-armed around it.
pub const RESPONSE_SUSPENDED: u32 = 1 << 2;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResponseHeader {
    pub magic: u32,
    pub version: u32,
    /// Bytes of the whole response.
    pub size: u32,
    /// 0, or the negative errno the failing call returned.
    pub status: i32,
    /// Which check or step failed (`ERR_*`).
    pub error_code: u32,
    /// The CPU that failed, or `NO_CPU`.
    pub error_cpu: u32,
    /// The counter that failed, or `NO_COUNTER`.
    pub error_counter: u32,
    pub ncpus: u32,
    pub ncounters: u32,
    pub nsamples: u32,
    pub counter_width: u32,
    /// `RESPONSE_*` flags.
    pub flags: u32,
    /// From the first CPU's start to the last CPU's stop.
    pub time_counted_ns: u64,
    /// Timer expiries that folded counter increments into the 64-bit totals.
    pub accumulations: u64,
    pub timer_period_ns: u64,
    /// The latest CPU's start instant minus the earliest's (the CPUs start in parallel).
    pub start_spread_ns: u64,
    /// The same for the final readings.
    pub stop_spread_ns: u64,
    /// Timer expiries per recorded sample (1 unless the series was thinned).
    pub sample_stride: u32,
    pub reserved: u32,
}

/// Per-CPU flags ([`CpuCounts::flags`]).
/// The CPU was offline for part of the session: its counts cover the time it was online (nothing
/// runs on an offline CPU), and its times exclude the rest.
pub const CPU_WENT_OFFLINE: u32 = 1 << 0;
/// The CPU was offline when counting stopped.
pub const CPU_OFFLINE_AT_END: u32 = 1 << 1;
/// The CPU came back but its counters could not be re-armed: counts stop where it went away.
pub const CPU_REARM_FAILED: u32 = 1 << 2;
/// NetBurst with Hyper-Threading: this CPU's events are counted in its core sibling's record
/// (the two threads share the counters); this record's counts are zero.
pub const CPU_COUNTED_BY_SIBLING: u32 = 1 << 3;
/// NetBurst with Hyper-Threading: this record counts both threads of the core.
pub const CPU_INCLUDES_SIBLING: u32 = 1 << 4;
/// A timer reading came later than the counters' shortest wrap-around time (the machine was too
/// busy to run it): a whole wrap may have gone unseen, so counts may be short by multiples of
/// 2^`counter_width`.
pub const CPU_LATE_READ: u32 = 1 << 5;
/// Some counter does not exist on this CPU (a hybrid part's other core type: its PMU lacks the
/// event): that counter's times are 0 on this CPU, and its count is not a count. A counter that
/// exists on no requested CPU refuses the request instead.
pub const CPU_COUNTER_ABSENT: u32 = 1 << 6;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuCounts {
    pub cpu: u32,
    /// `CPU_*` flags.
    pub flags: u32,
    /// This CPU's start instant minus the earliest CPU's.
    pub start_offset_ns: u64,
    pub counts: [u64; MAX_COUNTERS],
    /// Per counter: how long it was enabled and how long it actually counted (perf multiplexes
    /// counters when there are more events than counters; `running < enabled` then).
    pub time_enabled_ns: [u64; MAX_COUNTERS],
    pub time_running_ns: [u64; MAX_COUNTERS],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub cpu: u32,
    /// The timer expiry this reading belongs to (0, 1, ...; a multiple of `sample_stride`).
    pub expiry: u32,
    /// When this CPU was read, since the earliest CPU's start.
    pub time_ns: u64,
    /// Accumulated counts at that time.
    pub counts: [u64; MAX_COUNTERS],
}

pub const NO_CPU: u32 = u32::MAX;
pub const NO_COUNTER: u32 = u32::MAX;

pub const ERR_NONE: u32 = 0;
pub const ERR_SIZE: u32 = 1;
pub const ERR_MAGIC: u32 = 2;
pub const ERR_VERSION: u32 = 3;
pub const ERR_TOO_MANY_COUNTERS: u32 = 4;
pub const ERR_FLAGS: u32 = 5;
pub const ERR_SOURCE: u32 = 6;
pub const ERR_COUNTER_INDEX: u32 = 7;
pub const ERR_RESERVED_BITS: u32 = 8;
pub const ERR_INTERRUPT_BIT: u32 = 9;
pub const ERR_ESCR_MSR: u32 = 10;
pub const ERR_DUPLICATE_COUNTER: u32 = 11;
pub const ERR_NO_CPUS: u32 = 12;
pub const ERR_CPU_OFFLINE: u32 = 13;
pub const ERR_COUNTER_BUSY: u32 = 14;
pub const ERR_PERF_CREATE: u32 = 15;
pub const ERR_NOT_CONFIGURED: u32 = 16;
pub const ERR_NO_MEMORY: u32 = 17;
pub const ERR_PERIOD: u32 = 18;
pub const ERR_PERMISSION: u32 = 19;
pub const ERR_EVENT_NOT_ALLOWED: u32 = 20;
pub const ERR_ESCR_PAIRING: u32 = 21;
pub const ERR_MSR_ACCESS: u32 = 22;
pub const ERR_WRAP_TOO_FAST: u32 = 23;

/// One line for each error code, for the user.
pub fn error_text(code: u32) -> &'static str {
    match code {
        ERR_NONE => "no error",
        ERR_SIZE => "request has the wrong size (arum and module versions differ?)",
        ERR_MAGIC => "request does not start with the ARUM magic number",
        ERR_VERSION => "request version is not the module's (rebuild arum and the module together)",
        ERR_TOO_MANY_COUNTERS => "more counters than the module supports",
        ERR_FLAGS => "unknown or missing user/kernel flags",
        ERR_SOURCE => "unknown counter source, or the msr source is not enabled in the module",
        ERR_COUNTER_INDEX => "counter index does not exist on this CPU",
        ERR_RESERVED_BITS => "a reserved or kernel-managed bit is set in an event select",
        ERR_INTERRUPT_BIT => {
            "an interrupt/overflow-enable bit is set; the module never enables interrupts"
        }
        ERR_ESCR_MSR => "NetBurst ESCR address is not an ESCR",
        ERR_DUPLICATE_COUNTER => "two events use the same counter or ESCR",
        ERR_NO_CPUS => "the CPU mask selects no online CPU",
        ERR_CPU_OFFLINE => "a requested CPU is offline",
        ERR_COUNTER_BUSY => "the counter is in use by someone else (perf, NMI watchdog)",
        ERR_PERF_CREATE => "the kernel refused to create the counter",
        ERR_NOT_CONFIGURED => "read before a successful write",
        ERR_NO_MEMORY => "out of memory",
        ERR_PERIOD => "timer period below the module's 10 ms minimum",
        ERR_PERMISSION => {
            "not permitted: counting whole CPUs (or kernel mode) needs what perf needs, \
             CAP_PERFMON or a low enough kernel.perf_event_paranoid, when the device was opened"
        }
        ERR_EVENT_NOT_ALLOWED => {
            "the module counts hardware, hardware-cache, raw and a list of software events only"
        }
        ERR_ESCR_PAIRING => "NetBurst CCCR's ESCR select does not name this ESCR for this counter",
        ERR_MSR_ACCESS => "a counter register could not be read or written",
        ERR_WRAP_TOO_FAST => "the counter wraps faster than the module's timer can read it",
        _ => "unknown error code",
    }
}

/// Why a request was refused: the `ERR_*` code and the counter it concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: u32,
    pub counter: u32,
}

/// What the validating side knows about the PMU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub style: u32,
    pub general_counters: u32,
    pub fixed_counters: u32,
    /// Whether the `msr` source is available (module parameter).
    pub msr_allowed: bool,
}

// Event-select bits the requester may set (the module owns EN, INT, USR, OS, and clears
// AnyThread).
const AMD_ALLOWED: u64 = 0xFF | 0xFF00 | 1 << 18 | 1 << 23 | 0xFF << 24 | 0xF << 32 | 3 << 40;
const INTEL_ALLOWED: u64 = 0xFF | 0xFF00 | 1 << 18 | ANY_THREAD | 1 << 23 | 0xFF << 24;
const EVTSEL_INT: u64 = 1 << 20;
// NetBurst: ESCR event select 30:25, event mask 24:9, tag value 8:5, tag enable 4.
const ESCR_ALLOWED: u64 = 0x7FFF_FFF0;
// NetBurst CCCR: enable 12, ESCR select 15:13, active thread 17:16, compare 18,
// complement 19, threshold 23:20, edge 24. OVF_PMI (26, 27) and the rest are refused.
const CCCR_ALLOWED: u64 = 0x01FF_F000;
const CCCR_OVF_PMI: u64 = 3 << 26;
const CCCR_ESCR_SELECT_SHIFT: u32 = 13;

/// One NetBurst ESCR: its address, the CCCR ESCR-select value that names it, and the counters
/// it feeds (Intel SDM vol. 3B, "Performance Counter MSRs and Associated CCCR and ESCR MSRs").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Escr {
    pub msr: u32,
    pub select: u32,
    pub counters: &'static [u32],
}

const BPU_LO: &[u32] = &[0, 1];
const BPU_HI: &[u32] = &[2, 3];
const MS_LO: &[u32] = &[4, 5];
const MS_HI: &[u32] = &[6, 7];
const FLAME_LO: &[u32] = &[8, 9];
const FLAME_HI: &[u32] = &[10, 11];
const IQ_LO: &[u32] = &[12, 13, 16];
const IQ_HI: &[u32] = &[14, 15, 17];

const fn escr(msr: u32, select: u32, counters: &'static [u32]) -> Escr {
    Escr {
        msr,
        select,
        counters,
    }
}

/// Every NetBurst ESCR, and nothing else: the addresses between them are not ESCRs.
pub const NETBURST_ESCRS: [Escr; 45] = [
    escr(0x3A0, 7, BPU_LO),   // BSU_ESCR0
    escr(0x3A1, 7, BPU_HI),   // BSU_ESCR1
    escr(0x3A2, 6, BPU_LO),   // FSB_ESCR0
    escr(0x3A3, 6, BPU_HI),   // FSB_ESCR1
    escr(0x3A4, 1, FLAME_LO), // FIRM_ESCR0
    escr(0x3A5, 1, FLAME_HI), // FIRM_ESCR1
    escr(0x3A6, 0, FLAME_LO), // FLAME_ESCR0
    escr(0x3A7, 0, FLAME_HI), // FLAME_ESCR1
    escr(0x3A8, 5, FLAME_LO), // DAC_ESCR0
    escr(0x3A9, 5, FLAME_HI), // DAC_ESCR1
    escr(0x3AA, 2, BPU_LO),   // MOB_ESCR0
    escr(0x3AB, 2, BPU_HI),   // MOB_ESCR1
    escr(0x3AC, 4, BPU_LO),   // PMH_ESCR0
    escr(0x3AD, 4, BPU_HI),   // PMH_ESCR1
    escr(0x3AE, 2, FLAME_LO), // SAAT_ESCR0
    escr(0x3AF, 2, FLAME_HI), // SAAT_ESCR1
    escr(0x3B0, 3, FLAME_LO), // U2L_ESCR0
    escr(0x3B1, 3, FLAME_HI), // U2L_ESCR1
    escr(0x3B2, 0, BPU_LO),   // BPU_ESCR0
    escr(0x3B3, 0, BPU_HI),   // BPU_ESCR1
    escr(0x3B4, 1, BPU_LO),   // IS_ESCR0
    escr(0x3B5, 1, BPU_HI),   // IS_ESCR1
    escr(0x3B6, 3, BPU_LO),   // ITLB_ESCR0
    escr(0x3B7, 3, BPU_HI),   // ITLB_ESCR1
    escr(0x3B8, 4, IQ_LO),    // CRU_ESCR0
    escr(0x3B9, 4, IQ_HI),    // CRU_ESCR1
    escr(0x3BA, 0, IQ_LO),    // IQ_ESCR0 (models 1 and 2)
    escr(0x3BB, 0, IQ_HI),    // IQ_ESCR1 (models 1 and 2)
    escr(0x3BC, 2, IQ_LO),    // RAT_ESCR0
    escr(0x3BD, 2, IQ_HI),    // RAT_ESCR1
    escr(0x3BE, 3, IQ_LO),    // SSU_ESCR0
    escr(0x3C0, 0, MS_LO),    // MS_ESCR0
    escr(0x3C1, 0, MS_HI),    // MS_ESCR1
    escr(0x3C2, 2, MS_LO),    // TBPU_ESCR0
    escr(0x3C3, 2, MS_HI),    // TBPU_ESCR1
    escr(0x3C4, 1, MS_LO),    // TC_ESCR0
    escr(0x3C5, 1, MS_HI),    // TC_ESCR1
    escr(0x3C8, 5, BPU_LO),   // IX_ESCR0
    escr(0x3C9, 5, BPU_HI),   // IX_ESCR1
    escr(0x3CA, 1, IQ_LO),    // ALF_ESCR0
    escr(0x3CB, 1, IQ_HI),    // ALF_ESCR1
    escr(0x3CC, 5, IQ_LO),    // CRU_ESCR2
    escr(0x3CD, 5, IQ_HI),    // CRU_ESCR3
    escr(0x3E0, 6, IQ_LO),    // CRU_ESCR4
    escr(0x3E1, 6, IQ_HI),    // CRU_ESCR5
];

/// The NetBurst ESCR at `msr`, if it is one.
pub fn netburst_escr(msr: u32) -> Option<&'static Escr> {
    NETBURST_ESCRS.iter().find(|e| e.msr == msr)
}

/// IA32_PMC0..7 / IA32_PERFEVTSEL0..7: the architectural general counters. The registers after
/// them are others (IA32_PERFEVTSEL0 + 26 is IA32_MISC_ENABLE), so no CPUID may raise this.
pub const INTEL_MAX_GENERAL: u32 = 8;
/// IA32_FIXED_CTR0..3.
pub const INTEL_MAX_FIXED: u32 = 4;

/// Intel's architectural performance monitoring as CPUID leaf 0xA describes it, capped at the
/// architectural maxima (a hypervisor may report anything).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntelPerfmon {
    pub version: u32,
    pub general: u32,
    pub fixed: u32,
    /// The narrower of the general and fixed counter widths.
    pub width: u32,
}

impl IntelPerfmon {
    /// From CPUID.0AH EAX and EDX; `None` without usable counters.
    pub fn from_cpuid(eax: u32, edx: u32) -> Option<IntelPerfmon> {
        let version = eax & 0xFF;
        let general = ((eax >> 8) & 0xFF).min(INTEL_MAX_GENERAL);
        let mut width = ((eax >> 16) & 0xFF).min(64);
        if version == 0 || general == 0 || width < 32 {
            return None;
        }
        // Fixed counters exist from version 2.
        let fixed = if version >= 2 {
            (edx & 0x1F).min(INTEL_MAX_FIXED)
        } else {
            0
        };
        if fixed > 0 {
            width = width.min((edx >> 5) & 0xFF).max(32);
        }
        Some(IntelPerfmon {
            version,
            general,
            fixed,
            width,
        })
    }
}

fn refuse(code: u32, counter: u32) -> Result<(), Refusal> {
    Err(Refusal { code, counter })
}

/// Checks a request completely before anything is touched. `len` is the write's length.
pub fn validate(req: &Request, len: usize, limits: &Limits) -> Result<(), Refusal> {
    if len != core::mem::size_of::<Request>() || req.size as usize != len {
        return refuse(ERR_SIZE, NO_COUNTER);
    }
    if req.magic != MAGIC {
        return refuse(ERR_MAGIC, NO_COUNTER);
    }
    if req.version != VERSION {
        return refuse(ERR_VERSION, NO_COUNTER);
    }
    if req.ncounters as usize > MAX_COUNTERS {
        return refuse(ERR_TOO_MANY_COUNTERS, NO_COUNTER);
    }
    if req.flags & !FLAGS_KNOWN != 0 || req.flags & FLAGS_KNOWN == 0 || req.reserved != 0 {
        return refuse(ERR_FLAGS, NO_COUNTER);
    }
    if req.timer_period_ns != 0 && req.timer_period_ns < MIN_PERIOD_NS {
        return refuse(ERR_PERIOD, NO_COUNTER);
    }
    if req.cpus.iter().all(|w| *w == 0) {
        return refuse(ERR_NO_CPUS, NO_COUNTER);
    }
    let n = req.ncounters as usize;
    for (i, c) in req.counters.iter().enumerate() {
        let idx = i as u32;
        if i >= n {
            // Unused slots must be zero, so a request has one meaning.
            if *c != CounterRequest::default() {
                return refuse(ERR_RESERVED_BITS, idx);
            }
            continue;
        }
        match c.source {
            SOURCE_PERF => validate_perf(c, idx)?,
            SOURCE_MSR if limits.msr_allowed => validate_msr(c, idx, limits)?,
            _ => return refuse(ERR_SOURCE, idx),
        }
        for other in &req.counters[..i] {
            if other.source == SOURCE_MSR
                && c.source == SOURCE_MSR
                && (other.index == c.index || (c.escr_msr != 0 && other.escr_msr == c.escr_msr))
            {
                return refuse(ERR_DUPLICATE_COUNTER, idx);
            }
        }
    }
    Ok(())
}

/// The perf allow-list: CPU-wide counters of the core PMU and of harmless software events only.
/// Tracepoints (which can switch on kernel tracers), breakpoints and every dynamic PMU (uncore,
/// RAPL energy, ...) are refused.
fn validate_perf(c: &CounterRequest, idx: u32) -> Result<(), Refusal> {
    if c.index != 0 || c.escr_msr != 0 || c.escr != 0 {
        return refuse(ERR_RESERVED_BITS, idx);
    }
    let allowed = match c.perf_type {
        // The upper half would select another PMU by its type (hybrid CPUs); not allowed.
        PERF_TYPE_HARDWARE => c.config < PERF_COUNT_HW_MAX,
        PERF_TYPE_HW_CACHE => {
            let (id, op, result) = (c.config & 0xFF, (c.config >> 8) & 0xFF, c.config >> 16);
            id < HW_CACHE_IDS && op < HW_CACHE_OPS && result < HW_CACHE_RESULTS
        }
        PERF_TYPE_SOFTWARE => SOFTWARE_ALLOWED.contains(&c.config),
        PERF_TYPE_RAW => true,
        _ => false,
    };
    if !allowed {
        return refuse(ERR_EVENT_NOT_ALLOWED, idx);
    }
    // config1 carries a raw event's extra register (offcore response, load latency); the other
    // types have none.
    if c.perf_type != PERF_TYPE_RAW && c.config1 != 0 {
        return refuse(ERR_RESERVED_BITS, idx);
    }
    Ok(())
}

fn validate_msr(c: &CounterRequest, idx: u32, limits: &Limits) -> Result<(), Refusal> {
    let general = c.index < limits.general_counters;
    let fixed = c.index >= FIXED_BASE && c.index < FIXED_BASE + limits.fixed_counters;
    match limits.style {
        STYLE_AMD | STYLE_INTEL => {
            if !(general || (limits.style == STYLE_INTEL && fixed)) {
                return refuse(ERR_COUNTER_INDEX, idx);
            }
            if c.config & EVTSEL_INT != 0 {
                return refuse(ERR_INTERRUPT_BIT, idx);
            }
            // (A fixed counter's event is fixed: its select only says which event it is.)
            let allowed = if limits.style == STYLE_AMD {
                AMD_ALLOWED
            } else {
                INTEL_ALLOWED
            };
            if c.config & !allowed != 0 || c.config1 != 0 || c.escr != 0 || c.escr_msr != 0 {
                return refuse(ERR_RESERVED_BITS, idx);
            }
        }
        STYLE_NETBURST => {
            if !general {
                return refuse(ERR_COUNTER_INDEX, idx);
            }
            let Some(e) = netburst_escr(c.escr_msr) else {
                return refuse(ERR_ESCR_MSR, idx);
            };
            if c.config & CCCR_OVF_PMI != 0 {
                return refuse(ERR_INTERRUPT_BIT, idx);
            }
            if c.config & !CCCR_ALLOWED != 0 || c.escr & !ESCR_ALLOWED != 0 || c.config1 != 0 {
                return refuse(ERR_RESERVED_BITS, idx);
            }
            let select = ((c.config >> CCCR_ESCR_SELECT_SHIFT) & 7) as u32;
            if !e.counters.contains(&c.index) || select != e.select {
                return refuse(ERR_ESCR_PAIRING, idx);
            }
        }
        _ => return refuse(ERR_SOURCE, idx),
    }
    Ok(())
}

impl Request {
    /// An empty, valid-looking request header with no counters.
    pub const fn new(flags: u32) -> Request {
        Request {
            magic: MAGIC,
            version: VERSION,
            size: core::mem::size_of::<Request>() as u32,
            ncounters: 0,
            flags,
            reserved: 0,
            timer_period_ns: 0,
            cpus: [0; CPUMASK_WORDS],
            counters: [CounterRequest {
                source: 0,
                index: 0,
                perf_type: 0,
                escr_msr: 0,
                config: 0,
                config1: 0,
                escr: 0,
            }; MAX_COUNTERS],
        }
    }

    /// The requested counters.
    pub fn active(&self) -> &[CounterRequest] {
        &self.counters[..(self.ncounters as usize).min(MAX_COUNTERS)]
    }

    /// Whether CPU `cpu` is in the mask.
    pub fn has_cpu(&self, cpu: usize) -> bool {
        cpu < MAX_CPUS && self.cpus[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    /// Clears AnyThread in every perf raw config and Intel event select; returns whether any was
    /// set. (On AMD and NetBurst bit 21 is reserved and refused by validation.)
    pub fn clear_any_thread(&mut self, style: u32) -> bool {
        let mut cleared = false;
        let n = (self.ncounters as usize).min(MAX_COUNTERS);
        for c in self.counters[..n].iter_mut() {
            let applies = match c.source {
                SOURCE_PERF => c.perf_type == PERF_TYPE_RAW,
                _ => style == STYLE_INTEL,
            };
            if applies && c.config & ANY_THREAD != 0 {
                c.config &= !ANY_THREAD;
                cleared = true;
            }
        }
        cleared
    }
}

// The layout is part of the contract with the module: keep it from changing by accident.
const _: () = assert!(core::mem::size_of::<CounterRequest>() == 40);
const _: () =
    assert!(core::mem::size_of::<Request>() == 32 + 8 * CPUMASK_WORDS + 40 * MAX_COUNTERS);
const _: () = assert!(core::mem::size_of::<ResponseHeader>() == 96);
const _: () = assert!(core::mem::size_of::<CpuCounts>() == 16 + 3 * 8 * MAX_COUNTERS);
const _: () = assert!(core::mem::size_of::<Sample>() == 16 + 8 * MAX_COUNTERS);

// --- Encoding: field by field, in declaration order, little-endian. With the explicit padding
// fields above, this is exactly the #[repr(C)] layout, and no byte is left uninitialised. -------

struct Out<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl Out<'_> {
    fn put(&mut self, bytes: &[u8]) {
        self.buf[self.pos..self.pos + bytes.len()].copy_from_slice(bytes);
        self.pos += bytes.len();
    }
    fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.put(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.put(&v.to_le_bytes());
    }
    fn u64s(&mut self, v: &[u64]) {
        for x in v {
            self.u64(*x);
        }
    }
}

struct In<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl In<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&self.buf[self.pos..self.pos + N]);
        self.pos += N;
        a
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    fn u64s(&mut self) -> [u64; MAX_COUNTERS] {
        let mut a = [0; MAX_COUNTERS];
        for v in a.iter_mut() {
            *v = self.u64();
        }
        a
    }
}

pub const REQUEST_SIZE: usize = core::mem::size_of::<Request>();
pub const HEADER_SIZE: usize = core::mem::size_of::<ResponseHeader>();
pub const CPU_COUNTS_SIZE: usize = core::mem::size_of::<CpuCounts>();
pub const SAMPLE_SIZE: usize = core::mem::size_of::<Sample>();

impl Request {
    /// Encodes into `out[..REQUEST_SIZE]`.
    pub fn encode(&self, out: &mut [u8]) {
        let mut o = Out { buf: out, pos: 0 };
        o.u32(self.magic);
        o.u32(self.version);
        o.u32(self.size);
        o.u32(self.ncounters);
        o.u32(self.flags);
        o.u32(self.reserved);
        o.u64(self.timer_period_ns);
        o.u64s(&self.cpus);
        for c in &self.counters {
            o.u32(c.source);
            o.u32(c.index);
            o.u32(c.perf_type);
            o.u32(c.escr_msr);
            o.u64(c.config);
            o.u64(c.config1);
            o.u64(c.escr);
        }
    }

    /// Decodes a request of exactly [`REQUEST_SIZE`] bytes.
    pub fn decode(bytes: &[u8]) -> Option<Request> {
        if bytes.len() != REQUEST_SIZE {
            return None;
        }
        let mut i = In { buf: bytes, pos: 0 };
        let mut r = Request::new(0);
        r.magic = i.u32();
        r.version = i.u32();
        r.size = i.u32();
        r.ncounters = i.u32();
        r.flags = i.u32();
        r.reserved = i.u32();
        r.timer_period_ns = i.u64();
        for w in r.cpus.iter_mut() {
            *w = i.u64();
        }
        for c in r.counters.iter_mut() {
            c.source = i.u32();
            c.index = i.u32();
            c.perf_type = i.u32();
            c.escr_msr = i.u32();
            c.config = i.u64();
            c.config1 = i.u64();
            c.escr = i.u64();
        }
        Some(r)
    }
}

impl ResponseHeader {
    pub fn encode(&self, out: &mut [u8]) {
        let mut o = Out { buf: out, pos: 0 };
        o.u32(self.magic);
        o.u32(self.version);
        o.u32(self.size);
        o.i32(self.status);
        o.u32(self.error_code);
        o.u32(self.error_cpu);
        o.u32(self.error_counter);
        o.u32(self.ncpus);
        o.u32(self.ncounters);
        o.u32(self.nsamples);
        o.u32(self.counter_width);
        o.u32(self.flags);
        o.u64(self.time_counted_ns);
        o.u64(self.accumulations);
        o.u64(self.timer_period_ns);
        o.u64(self.start_spread_ns);
        o.u64(self.stop_spread_ns);
        o.u32(self.sample_stride);
        o.u32(self.reserved);
    }

    pub fn decode(bytes: &[u8]) -> Option<ResponseHeader> {
        if bytes.len() < HEADER_SIZE {
            return None;
        }
        let mut i = In { buf: bytes, pos: 0 };
        Some(ResponseHeader {
            magic: i.u32(),
            version: i.u32(),
            size: i.u32(),
            status: i.i32(),
            error_code: i.u32(),
            error_cpu: i.u32(),
            error_counter: i.u32(),
            ncpus: i.u32(),
            ncounters: i.u32(),
            nsamples: i.u32(),
            counter_width: i.u32(),
            flags: i.u32(),
            time_counted_ns: i.u64(),
            accumulations: i.u64(),
            timer_period_ns: i.u64(),
            start_spread_ns: i.u64(),
            stop_spread_ns: i.u64(),
            sample_stride: i.u32(),
            reserved: i.u32(),
        })
    }
}

impl CpuCounts {
    pub fn encode(&self, out: &mut [u8]) {
        let mut o = Out { buf: out, pos: 0 };
        o.u32(self.cpu);
        o.u32(self.flags);
        o.u64(self.start_offset_ns);
        o.u64s(&self.counts);
        o.u64s(&self.time_enabled_ns);
        o.u64s(&self.time_running_ns);
    }

    pub fn decode(bytes: &[u8]) -> Option<CpuCounts> {
        if bytes.len() < CPU_COUNTS_SIZE {
            return None;
        }
        let mut i = In { buf: bytes, pos: 0 };
        Some(CpuCounts {
            cpu: i.u32(),
            flags: i.u32(),
            start_offset_ns: i.u64(),
            counts: i.u64s(),
            time_enabled_ns: i.u64s(),
            time_running_ns: i.u64s(),
        })
    }
}

impl Sample {
    pub fn encode(&self, out: &mut [u8]) {
        let mut o = Out { buf: out, pos: 0 };
        o.u32(self.cpu);
        o.u32(self.expiry);
        o.u64(self.time_ns);
        o.u64s(&self.counts);
    }

    pub fn decode(bytes: &[u8]) -> Option<Sample> {
        if bytes.len() < SAMPLE_SIZE {
            return None;
        }
        let mut i = In { buf: bytes, pos: 0 };
        Some(Sample {
            cpu: i.u32(),
            expiry: i.u32(),
            time_ns: i.u64(),
            counts: i.u64s(),
        })
    }
}

/// Why a response could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Fewer bytes than a header, or than the header's `size`.
    Truncated,
    BadMagic,
    /// Another wire-format version: arum and the module were built from different sources.
    Version(u32),
    /// The header's `size` does not match its record counts.
    Inconsistent,
}

/// A checked response: its header and typed access to the records that follow.
#[derive(Clone, Copy, Debug)]
pub struct Response<'a> {
    pub header: ResponseHeader,
    bytes: &'a [u8],
}

impl<'a> Response<'a> {
    /// Checks magic, version and sizes. A refusal (status < 0) parses too: its header carries
    /// the reason and no records follow.
    pub fn parse(bytes: &'a [u8]) -> Result<Response<'a>, ParseError> {
        let header = ResponseHeader::decode(bytes).ok_or(ParseError::Truncated)?;
        if header.magic != MAGIC {
            return Err(ParseError::BadMagic);
        }
        if header.version != VERSION {
            return Err(ParseError::Version(header.version));
        }
        let size = header.size as usize;
        if bytes.len() < size {
            return Err(ParseError::Truncated);
        }
        let expected = HEADER_SIZE as u64
            + u64::from(header.ncpus) * CPU_COUNTS_SIZE as u64
            + u64::from(header.nsamples) * SAMPLE_SIZE as u64;
        if expected != size as u64 || header.ncounters as usize > MAX_COUNTERS {
            return Err(ParseError::Inconsistent);
        }
        Ok(Response {
            header,
            bytes: &bytes[..size],
        })
    }

    /// The per-CPU totals, in the order of the request's CPU mask.
    pub fn cpus(&self) -> impl Iterator<Item = CpuCounts> + 'a {
        let at = HEADER_SIZE;
        let records = &self.bytes[at..at + self.header.ncpus as usize * CPU_COUNTS_SIZE];
        records
            .chunks_exact(CPU_COUNTS_SIZE)
            .filter_map(CpuCounts::decode)
    }

    /// The time series: for each recorded timer expiry, one sample per counting CPU, in CPU
    /// order. A CPU that was offline at an expiry has no sample for it: group by `expiry`.
    pub fn samples(&self) -> impl Iterator<Item = Sample> + 'a {
        let at = HEADER_SIZE + self.header.ncpus as usize * CPU_COUNTS_SIZE;
        self.bytes[at..]
            .chunks_exact(SAMPLE_SIZE)
            .filter_map(Sample::decode)
    }
}
