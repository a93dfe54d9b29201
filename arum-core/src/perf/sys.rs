//! The only unsafe code of the perf backend: perf_event_open(2), its read and its ioctls. Counting
//! events use [`open`]; events that write records to a ring buffer (probes, see `records`) and
//! uprobes, whose file path the kernel reads from a pointer, use [`open_with`].

use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use nix::errno::Errno;
use perf_event_open_sys as sys;

/// What to count and how, in the terms of perf_event_attr.
#[derive(Debug, Clone, Copy, Default)]
pub struct Attr {
    pub type_: u32,
    pub config: u64,
    pub config1: u64,
    pub exclude_user: bool,
    pub exclude_kernel: bool,
    pub disabled: bool,
    pub inherit: bool,
    pub enable_on_exec: bool,
    pub pinned: bool,
}

/// One read of a counter opened with TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    pub value: u64,
    pub enabled_ns: u64,
    pub running_ns: u64,
}

impl Reading {
    /// Two counters of one event read as one (a hybrid part's core types): counts and times
    /// added.
    pub fn plus(self, other: Reading) -> Reading {
        Reading {
            value: self.value.saturating_add(other.value),
            enabled_ns: self.enabled_ns.saturating_add(other.enabled_ns),
            running_ns: self.running_ns.saturating_add(other.running_ns),
        }
    }
}

/// What a probe event adds to [`Attr`]: the probed file and offset, and what each hit records.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extra<'a> {
    /// A uprobe's file: perf_event_attr.config1 points to it while the kernel reads the attr.
    pub path: Option<&'a CStr>,
    /// perf_event_attr.config2 (a uprobe's file offset).
    pub config2: u64,
    /// Write a record on every `period`-th event instead of only counting.
    pub sampling: Option<Sampling>,
}

/// How a sampling event records.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sampling {
    pub period: u64,
    /// PERF_SAMPLE_* bits.
    pub sample_type: u64,
    /// Registers recorded with PERF_SAMPLE_REGS_USER (bit per perf register number).
    pub regs_user: u64,
    /// Timestamps from this clock (CLOCK_MONOTONIC, to compare with arum's own times).
    pub clockid: Option<i32>,
    /// Also record task events: COMM (names, exec) and FORK/EXIT.
    pub comm_and_task: bool,
}

/// Opens a counter for `pid` (-1: every task) on `cpu` (-1: any CPU), in `group` if given.
pub fn open(
    attr: &Attr,
    pid: i32,
    cpu: i32,
    group: Option<BorrowedFd<'_>>,
) -> Result<OwnedFd, Errno> {
    open_with(attr, &Extra::default(), pid, cpu, group)
}

/// [`open`] with a probe's file and offset, and sampling.
pub fn open_with(
    attr: &Attr,
    extra: &Extra<'_>,
    pid: i32,
    cpu: i32,
    group: Option<BorrowedFd<'_>>,
) -> Result<OwnedFd, Errno> {
    let mut a = sys::bindings::perf_event_attr {
        type_: attr.type_,
        size: std::mem::size_of::<sys::bindings::perf_event_attr>() as u32,
        config: attr.config,
        read_format: u64::from(
            sys::bindings::PERF_FORMAT_TOTAL_TIME_ENABLED
                | sys::bindings::PERF_FORMAT_TOTAL_TIME_RUNNING,
        ),
        ..Default::default()
    };
    a.config1 = attr.config1;
    a.set_disabled(attr.disabled.into());
    a.set_inherit(attr.inherit.into());
    a.set_enable_on_exec(attr.enable_on_exec.into());
    a.set_pinned(attr.pinned.into());
    a.set_exclude_user(attr.exclude_user.into());
    a.set_exclude_kernel(attr.exclude_kernel.into());
    a.set_exclude_hv(1);
    if let Some(path) = extra.path {
        // The pointer is only read during the call below, while `path` is borrowed.
        a.config1 = path.as_ptr() as u64;
    }
    a.config2 = extra.config2;
    if let Some(s) = &extra.sampling {
        a.sample_period = s.period;
        a.sample_type = s.sample_type;
        a.sample_regs_user = s.regs_user;
        if let Some(clock) = s.clockid {
            a.set_use_clockid(1);
            a.clockid = clock;
        }
        if s.comm_and_task {
            a.set_comm(1);
            a.set_comm_exec(1);
            a.set_task(1);
            a.set_sample_id_all(1);
        }
    }
    let group_fd = group.map_or(-1, |g| g.as_raw_fd());
    // SAFETY: `a` is a fully initialised perf_event_attr whose size field matches its type, and
    // config1 is either a number or points into `extra.path`, borrowed for this call; the kernel
    // reads them and returns a new descriptor or -1 with errno.
    let fd = unsafe {
        sys::perf_event_open(
            &mut a,
            pid,
            cpu,
            group_fd,
            u64::from(sys::bindings::PERF_FLAG_FD_CLOEXEC),
        )
    };
    if fd < 0 {
        return Err(Errno::last());
    }
    // SAFETY: the descriptor was just returned to us and nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reads value, time enabled and time running (children of inherited counters included).
pub fn read(fd: BorrowedFd<'_>) -> Result<Reading, Errno> {
    let mut buf = [0u8; 24];
    let n = nix::unistd::read(fd, &mut buf)?;
    if n != buf.len() {
        return Err(Errno::EIO);
    }
    let word = |i: usize| u64::from_ne_bytes(buf[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    Ok(Reading {
        value: word(0),
        enabled_ns: word(1),
        running_ns: word(2),
    })
}

pub fn enable(fd: BorrowedFd<'_>) -> Result<(), Errno> {
    // SAFETY: ENABLE takes no pointer argument; an invalid fd only makes the call fail.
    Errno::result(unsafe { sys::ioctls::ENABLE(fd.as_raw_fd(), 0) }).map(drop)
}

pub fn disable(fd: BorrowedFd<'_>) -> Result<(), Errno> {
    // SAFETY: DISABLE, like ENABLE, takes no pointer argument; an invalid fd only makes the
    // call fail.
    Errno::result(unsafe { sys::ioctls::DISABLE(fd.as_raw_fd(), 0) }).map(drop)
}

/// The event's id, as records of it carry in PERF_SAMPLE_IDENTIFIER (inherited copies report
/// their parent's).
pub fn id(fd: BorrowedFd<'_>) -> Result<u64, Errno> {
    let mut id = 0u64;
    // SAFETY: ID writes one u64 through the pointer, which points to `id`.
    Errno::result(unsafe { sys::ioctls::ID(fd.as_raw_fd(), &mut id) })?;
    Ok(id)
}

/// Sends `fd`'s records to the ring buffer mapped on `target` (same CPU).
pub fn set_output(fd: BorrowedFd<'_>, target: BorrowedFd<'_>) -> Result<(), Errno> {
    // SAFETY: SET_OUTPUT takes a descriptor number; a wrong one only makes the call fail.
    Errno::result(unsafe { sys::ioctls::SET_OUTPUT(fd.as_raw_fd(), target.as_raw_fd()) }).map(drop)
}

/// Sets a tracepoint event's filter (ftrace's syntax on the tracepoint's fields, e.g.
/// `id == 0 || id == 1`): records the filter rejects are never written.
pub fn set_filter(fd: BorrowedFd<'_>, filter: &CStr) -> Result<(), Errno> {
    // SAFETY: SET_FILTER reads a NUL-terminated string through the pointer, which points into
    // `filter`, borrowed for the call; the kernel copies it and does not keep the pointer.
    Errno::result(unsafe { sys::ioctls::SET_FILTER(fd.as_raw_fd(), filter.as_ptr().cast_mut()) })
        .map(drop)
}
