//! CPU placement and the raw system calls the CPU measurements time.

use std::io;

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

use super::errno;

/// The CPUs the calling thread may run on.
pub fn allowed_cpus() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => vec![0],
    }
}

fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c).map_err(errno)?;
    }
    sched_setaffinity(Pid::from_raw(0), &set).map_err(errno)
}

/// Keeps the calling thread on `cpus` until dropped, then restores its previous mask.
/// Threads and processes started meanwhile inherit the placement.
pub struct Pinned {
    previous: Vec<usize>,
}

impl Pinned {
    pub fn to(cpus: &[usize]) -> io::Result<Pinned> {
        let previous = allowed_cpus();
        set_affinity(cpus)?;
        Ok(Pinned { previous })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = set_affinity(&self.previous);
    }
}

/// Pins the calling thread for the rest of its life (worker threads).
pub fn pin_thread(cpu: usize) -> io::Result<()> {
    set_affinity(&[cpu])
}

/// getppid(2) through the system-call instruction, never a cached or vDSO answer.
#[inline(always)]
pub fn getppid_syscall() -> i64 {
    // SAFETY: getppid takes no arguments, cannot fail and touches no memory of ours.
    unsafe { libc::syscall(libc::SYS_getppid) }
}

/// clock_gettime(CLOCK_MONOTONIC) through the system-call instruction (the path the vDSO avoids).
#[inline(always)]
pub fn clock_gettime_syscall(ts: &mut libc::timespec) -> i64 {
    // SAFETY: `ts` is a valid, writable timespec for the kernel to fill.
    unsafe {
        libc::syscall(
            libc::SYS_clock_gettime,
            libc::CLOCK_MONOTONIC,
            ts as *mut libc::timespec,
        )
    }
}

/// clock_gettime(CLOCK_MONOTONIC) as programs call it: through the C library and the vDSO.
#[inline(always)]
pub fn clock_gettime_vdso(ts: &mut libc::timespec) -> i32 {
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, ts) }
}

/// CPU time (user + system) of this process and its reaped children, in nanoseconds.
pub fn own_cpu_ns() -> u64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let ns = |who| {
        getrusage(who).map_or(0, |u| {
            let t = |tv: nix::sys::time::TimeVal| {
                tv.tv_sec() as u64 * 1_000_000_000 + tv.tv_usec() as u64 * 1000
            };
            t(u.user_time()) + t(u.system_time())
        })
    };
    ns(UsageWho::RUSAGE_SELF) + ns(UsageWho::RUSAGE_CHILDREN)
}

/// The unit of /proc/stat's CPU times (USER_HZ).
pub fn clock_ticks_per_second() -> f64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .filter(|&hz| hz > 0)
        .map_or(100.0, |hz| hz as f64)
}

/// CPU time (user + system) of this process's reaped children, in nanoseconds.
pub fn children_cpu_ns() -> u64 {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0, |u| {
        let t = |tv: nix::sys::time::TimeVal| {
            tv.tv_sec() as u64 * 1_000_000_000 + tv.tv_usec() as u64 * 1000
        };
        t(u.user_time()) + t(u.system_time())
    })
}

/// Involuntary context switches of the calling thread so far (it was preempted).
pub fn thread_preemptions() -> u64 {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_THREAD).map_or(0, |u| u.involuntary_context_switches() as u64)
}

/// Minor and major page faults of this process so far.
pub fn own_faults() -> (u64, u64) {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_SELF).map_or((0, 0), |u| {
        (u.minor_page_faults() as u64, u.major_page_faults() as u64)
    })
}

/// Moves the calling thread into a new network namespace of its own (CAP_SYS_ADMIN). Only this
/// thread, and the processes it starts, see the new namespace; it ends with its last user.
pub fn unshare_network() -> io::Result<()> {
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).map_err(errno)
}

/// The calling thread's id (what `ip link ... netns ID` accepts to name its namespace).
pub fn thread_id() -> i32 {
    nix::unistd::gettid().as_raw()
}
