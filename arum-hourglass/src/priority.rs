//! Putting the calling thread where its spec says: scheduling policy and priority, CPUs, timer
//! slack. Linux applies all three per thread (the TID), so each Hourglass thread sets its own.

use std::io;

use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;

use crate::experiment::Priority;

/// Sets the calling thread's policy: SCHED_IDLE, SCHED_OTHER with a nice value, or SCHED_FIFO.
pub fn apply(priority: Priority) -> io::Result<()> {
    let (policy, rt) = match priority {
        Priority::Idle => (libc::SCHED_IDLE, 0),
        Priority::Nice(_) => (libc::SCHED_OTHER, 0),
        Priority::Fifo(p) => (libc::SCHED_FIFO, p as i32),
    };
    let param = libc::sched_param { sched_priority: rt };
    // SAFETY: pid 0 names the calling thread; `param` is a valid sched_param for the call.
    if unsafe { libc::sched_setscheduler(0, policy, &param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if let Priority::Nice(n) = priority {
        // setpriority on a thread's ID sets that thread's nice alone.
        rustix::process::setpriority_process(Some(rustix::thread::gettid()), n as i32)?;
    }
    Ok(())
}

/// Restricts the calling thread to `cpus`.
pub fn pin(cpus: &[usize]) -> nix::Result<()> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c)?;
    }
    sched_setaffinity(Pid::from_raw(0), &set)
}

/// The CPUs the calling thread may run on.
pub fn allowed_cpus() -> Vec<usize> {
    nix::sched::sched_getaffinity(Pid::from_raw(0))
        .map(|set| {
            (0..CpuSet::count())
                .filter(|&c| set.is_set(c).unwrap_or(false))
                .collect()
        })
        .unwrap_or_default()
}

/// The shortest timer slack (1 ns), so that sleeping SCHED_OTHER threads wake when they asked
/// (real-time threads have none anyway).
pub fn minimal_timer_slack() -> nix::Result<()> {
    nix::sys::prctl::set_timerslack(1)
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> usize {
    nix::sched::sched_getcpu().unwrap_or(0)
}

/// The share of a CPU a SCHED_OTHER thread gets against others, by the kernel's weight law:
/// 1024 at nice 0, a factor 1.25 per nice step (the kernel's table rounds these), 3 for
/// SCHED_IDLE. `None` for real-time threads, which are not shared by weight.
pub fn weight(priority: Priority) -> Option<f64> {
    match priority {
        Priority::Idle => Some(3.0),
        Priority::Nice(n) => Some(1024.0 / 1.25f64.powi(n as i32)),
        Priority::Fifo(_) => None,
    }
}

/// Why a priority could not be set, with the fix.
pub fn explain(priority: Priority, e: &io::Error) -> String {
    let fix = match (priority, e.raw_os_error()) {
        (Priority::Fifo(_), Some(libc::EPERM)) => {
            "real-time priorities need root or CAP_SYS_NICE (or an RLIMIT_RTPRIO that allows it); \
             on a kernel with RT group scheduling, also runtime in the cgroup's cpu.rt_runtime_us"
        }
        (Priority::Nice(n), Some(libc::EACCES | libc::EPERM)) if n < 0 => {
            "negative nice values need root or CAP_SYS_NICE (or RLIMIT_NICE)"
        }
        _ => "check the process's limits (ulimit -e, -r)",
    };
    format!("cannot set priority {priority}: {e}; {fix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_the_kernel_law() {
        assert_eq!(weight(Priority::NORMAL), Some(1024.0));
        // The kernel's table: nice 10 → 110, nice -10 → 9548 (within its rounding).
        assert!((weight(Priority::LOW).unwrap() - 110.0).abs() < 2.0);
        assert!((weight(Priority::HIGH).unwrap() / 9548.0 - 1.0).abs() < 0.01);
        assert_eq!(weight(Priority::RTHIGH), None);
    }

    #[test]
    fn a_thread_can_lower_itself_and_pin_itself() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        let last = *cpus.last().unwrap();
        std::thread::spawn(move || {
            apply(Priority::Nice(5)).unwrap();
            let nice = rustix::process::getpriority_process(Some(rustix::thread::gettid()));
            assert_eq!(nice.unwrap(), 5);
            pin(&[last]).unwrap();
            assert_eq!(allowed_cpus(), vec![last]);
            assert_eq!(current_cpu(), last);
            apply(Priority::Idle).unwrap();
            // SAFETY: sched_getscheduler on the calling thread.
            assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_IDLE);
        })
        .join()
        .unwrap();
        // The test's own thread is untouched.
        // SAFETY: as above.
        assert_ne!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_IDLE);
    }
}
