//! The only unsafe code of the perf backend: perf_event_open(2), its read and its ioctls.

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

/// Opens a counter for `pid` (-1: every task) on `cpu` (-1: any CPU), in `group` if given.
pub fn open(
    attr: &Attr,
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
    let group_fd = group.map_or(-1, |g| g.as_raw_fd());
    // SAFETY: `a` is a fully initialised perf_event_attr whose size field matches its type; the
    // kernel reads it and returns a new descriptor or -1 with errno.
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
    // SAFETY: as for `enable`.
    Errno::result(unsafe { sys::ioctls::DISABLE(fd.as_raw_fd(), 0) }).map(drop)
}
