//! The `/dev/arum` wire format, defined once: the arum-wire crate compiles this file, and the
//! kernel module includes the same file (`#[path]`), so it uses `core` only: no std, no alloc.
//!
//! A `write` carries one [`Request`]. A `read` returns a [`ResponseHeader`], then `ncpus`
//! [`CpuCounts`], then `nsamples` [`Sample`]s (the per-CPU time series), all little-endian,
//! `#[repr(C)]`, naturally aligned, with explicit padding fields so no uninitialised byte exists.

/// "ARUM" read as a little-endian u32.
pub const MAGIC: u32 = 0x4D55_5241;
pub const VERSION: u32 = 1;
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
    /// Overflow-avoiding timer period; 0 = computed by the module.
    pub timer_period_ns: u64,
    /// CPUs to count on, bit N = CPU N.
    pub cpus: [u64; CPUMASK_WORDS],
    pub counters: [CounterRequest; MAX_COUNTERS],
}

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
    pub reserved: u32,
    pub time_counted_ns: u64,
    /// Timer expiries that folded counter increments into the 64-bit totals.
    pub accumulations: u64,
    pub timer_period_ns: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuCounts {
    pub cpu: u32,
    pub status: i32,
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
    pub counts: [u64; MAX_COUNTERS],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub cpu: u32,
    pub reserved: u32,
    /// Time since counting started.
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

// Event-select bits the requester may set (the module owns EN, INT, USR, OS).
const AMD_ALLOWED: u64 = 0xFF | 0xFF00 | 1 << 18 | 1 << 23 | 0xFF << 24 | 0xF << 32 | 3 << 40;
const INTEL_ALLOWED: u64 = 0xFF | 0xFF00 | 1 << 18 | 1 << 21 | 1 << 23 | 0xFF << 24;
const EVTSEL_INT: u64 = 1 << 20;
// NetBurst: ESCR event select 30:25, event mask 24:9, tag value 8:5, tag enable 4.
const ESCR_ALLOWED: u64 = 0x7FFF_FFF0;
// NetBurst CCCR: enable 12, ESCR select 15:13, active thread 17:16, compare 18,
// complement 19, threshold 23:20, edge 24. OVF_PMI (26, 27) and the rest are refused.
const CCCR_ALLOWED: u64 = 0x01FF_F000;
const CCCR_OVF_PMI: u64 = 3 << 26;
const ESCR_FIRST: u32 = 0x3A0;
const ESCR_LAST: u32 = 0x3E1;

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
            SOURCE_PERF => {
                if c.index != 0 || c.escr_msr != 0 || c.escr != 0 {
                    return refuse(ERR_RESERVED_BITS, idx);
                }
            }
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
            if !(ESCR_FIRST..=ESCR_LAST).contains(&c.escr_msr) {
                return refuse(ERR_ESCR_MSR, idx);
            }
            if c.config & CCCR_OVF_PMI != 0 {
                return refuse(ERR_INTERRUPT_BIT, idx);
            }
            if c.config & !CCCR_ALLOWED != 0 || c.escr & !ESCR_ALLOWED != 0 || c.config1 != 0 {
                return refuse(ERR_RESERVED_BITS, idx);
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
}

// The layout is part of the contract with the module: keep it from changing by accident.
const _: () = assert!(core::mem::size_of::<CounterRequest>() == 40);
const _: () =
    assert!(core::mem::size_of::<Request>() == 32 + 8 * CPUMASK_WORDS + 40 * MAX_COUNTERS);
const _: () = assert!(core::mem::size_of::<ResponseHeader>() == 72);
const _: () = assert!(core::mem::size_of::<CpuCounts>() == 24 + 8 * MAX_COUNTERS);
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
        for w in self.cpus {
            o.u64(w);
        }
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
        o.u32(self.reserved);
        o.u64(self.time_counted_ns);
        o.u64(self.accumulations);
        o.u64(self.timer_period_ns);
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
            reserved: i.u32(),
            time_counted_ns: i.u64(),
            accumulations: i.u64(),
            timer_period_ns: i.u64(),
        })
    }
}

impl CpuCounts {
    pub fn encode(&self, out: &mut [u8]) {
        let mut o = Out { buf: out, pos: 0 };
        o.u32(self.cpu);
        o.i32(self.status);
        o.u64(self.time_enabled_ns);
        o.u64(self.time_running_ns);
        for c in self.counts {
            o.u64(c);
        }
    }

    pub fn decode(bytes: &[u8]) -> Option<CpuCounts> {
        if bytes.len() < CPU_COUNTS_SIZE {
            return None;
        }
        let mut i = In { buf: bytes, pos: 0 };
        let mut c = CpuCounts {
            cpu: i.u32(),
            status: i.i32(),
            time_enabled_ns: i.u64(),
            time_running_ns: i.u64(),
            counts: [0; MAX_COUNTERS],
        };
        for v in c.counts.iter_mut() {
            *v = i.u64();
        }
        Some(c)
    }
}

impl Sample {
    pub fn encode(&self, out: &mut [u8]) {
        let mut o = Out { buf: out, pos: 0 };
        o.u32(self.cpu);
        o.u32(self.reserved);
        o.u64(self.time_ns);
        for c in self.counts {
            o.u64(c);
        }
    }

    pub fn decode(bytes: &[u8]) -> Option<Sample> {
        if bytes.len() < SAMPLE_SIZE {
            return None;
        }
        let mut i = In { buf: bytes, pos: 0 };
        let mut s = Sample {
            cpu: i.u32(),
            reserved: i.u32(),
            time_ns: i.u64(),
            counts: [0; MAX_COUNTERS],
        };
        for v in s.counts.iter_mut() {
            *v = i.u64();
        }
        Some(s)
    }
}
