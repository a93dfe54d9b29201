//! Where the launched tree ran: a task-clock counter per CPU, bound to the held child and
//! inherited by every thread and child it starts, gives the tree's CPU time on each CPU exactly,
//! however briefly a thread ran there (sampling each thread's last CPU misses most of that).

use std::os::fd::{AsFd, OwnedFd};

use nix::unistd::Pid;

use crate::perf::sys::{self, Attr};

/// PERF_TYPE_SOFTWARE / PERF_COUNT_SW_TASK_CLOCK.
const SOFTWARE: u32 = 1;
const TASK_CLOCK: u64 = 1;

pub struct TreeClock {
    /// `(cpu, counter)`.
    counters: Vec<(u32, OwnedFd)>,
}

impl TreeClock {
    /// Opens the counters on the held child `pid`; they start counting at its exec. `None`
    /// where perf_event_open refuses (the caller falls back to the sampled last CPU).
    pub fn open(pid: Pid, cpus: &[u32]) -> Option<TreeClock> {
        let attr = Attr {
            type_: SOFTWARE,
            config: TASK_CLOCK,
            disabled: true,
            inherit: true,
            enable_on_exec: true,
            ..Attr::default()
        };
        let counters = cpus
            .iter()
            .map(|&cpu| Ok((cpu, sys::open(&attr, pid.as_raw(), cpu as i32, None)?)))
            .collect::<Result<Vec<_>, nix::Error>>()
            .ok()?;
        Some(TreeClock { counters })
    }

    /// The tree's CPU time per CPU, in nanoseconds: `(cpu, ns)`.
    pub fn read(&self) -> Vec<(u32, u64)> {
        self.counters
            .iter()
            .map(|(cpu, fd)| (*cpu, sys::read(fd.as_fd()).map_or(0, |r| r.value)))
            .collect()
    }
}
