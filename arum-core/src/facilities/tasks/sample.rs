//! /proc samples of every thread of the tree while it runs: each process's command line and
//! executable (which no exit record carries), and each thread's values up to its last sample,
//! which stand in for an exit record that is missing (no CAP_NET_ADMIN, or the kernel dropped
//! it). The sampler spaces its samples so that its own CPU time stays a small share of one CPU.

use std::collections::HashMap;
use std::time::Duration;

use procfs::process::{Process, Task};

use crate::launch::monotonic;
use crate::periodic::{Cadence, FirstTick, Sampler};
use crate::tree::Tree;

/// Samples start dense (short programs matter) and slow down for long runs.
const FIRST_INTERVAL: Duration = Duration::from_millis(2);
const MAX_INTERVAL: Duration = Duration::from_millis(100);

/// One thread as last seen.
#[derive(Debug, Clone, Default)]
pub struct ThreadSample {
    pub tgid: u32,
    pub tid: u32,
    pub parent: u32,
    pub comm: String,
    /// Since boot, in clock ticks.
    pub start_ticks: u64,
    /// CLOCK_MONOTONIC of the sample.
    pub seen_ns: u64,
    pub user_ticks: u64,
    pub system_ticks: u64,
    /// From schedstat: exact CPU time, run-queue wait and its count.
    pub cpu_ns: u64,
    pub run_delay_ns: u64,
    pub timeslices: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    pub io: Option<procfs::process::Io>,
    /// The process's VmHWM and VmPeak.
    pub peak_rss_bytes: u64,
    pub peak_vm_bytes: u64,
}

/// A process's command, read while it ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Command {
    pub argv: Vec<String>,
    pub exe: Option<String>,
}

/// Reads the command of process `pid` now (its last exec's).
pub fn command(pid: u32) -> Option<Command> {
    let p = Process::new(pid as i32).ok()?;
    let argv = p.cmdline().ok()?;
    // A process that has exited (a zombie) has no command line left.
    if argv.is_empty() {
        return None;
    }
    let exe = p.exe().ok().map(|e| e.to_string_lossy().into_owned());
    Some(Command { argv, exe })
}

#[derive(Debug, Default)]
pub struct Samples {
    pub threads: HashMap<u32, ThreadSample>,
    pub commands: HashMap<u32, Command>,
    pub count: u64,
}

/// Starts sampling the tree (once the program has run past the launch grace).
pub fn start(tree: &Tree) -> Option<Sampler<Samples>> {
    let mut reader = tree.reader();
    let mut pids = Vec::with_capacity(64);
    Sampler::spawn(
        "arum-tasks",
        (
            Cadence::Growing {
                first: FIRST_INTERVAL,
                max: MAX_INTERVAL,
            },
            FirstTick::Thread,
            false,
        ),
        Samples::default(),
        move |samples, _| {
            reader.read(&mut pids);
            sample(&pids, samples);
            Duration::ZERO
        },
        |samples| samples,
    )
}

fn sample(pids: &[i32], samples: &mut Samples) {
    samples.count += 1;
    for &pid in pids {
        let Ok(process) = Process::new(pid) else {
            continue;
        };
        let tgid = pid as u32;
        if let std::collections::hash_map::Entry::Vacant(e) = samples.commands.entry(tgid) {
            if let Some(c) = command(tgid) {
                e.insert(c);
            }
        }
        let Ok(status) = process.status() else {
            continue;
        };
        let parent = status.ppid.max(0) as u32;
        let (rss, vm) = (
            status.vmhwm.unwrap_or(0) * 1024,
            status.vmpeak.unwrap_or(0) * 1024,
        );
        let Ok(tasks) = process.tasks() else { continue };
        for task in tasks.flatten() {
            if let Some(mut s) = thread(&task) {
                s.tgid = tgid;
                s.parent = parent;
                s.peak_rss_bytes = rss;
                s.peak_vm_bytes = vm;
                samples.threads.insert(s.tid, s);
            }
        }
    }
}

fn thread(task: &Task) -> Option<ThreadSample> {
    let seen_ns = monotonic().as_nanos() as u64;
    let stat = task.stat().ok()?;
    let status = task.status().ok();
    let sched = task.schedstat().ok();
    Some(ThreadSample {
        tgid: 0,
        tid: task.tid as u32,
        parent: 0,
        comm: stat.comm,
        start_ticks: stat.starttime,
        seen_ns,
        user_ticks: stat.utime,
        system_ticks: stat.stime,
        cpu_ns: sched.as_ref().map_or(0, |s| s.sum_exec_runtime),
        run_delay_ns: sched.as_ref().map_or(0, |s| s.run_delay),
        timeslices: sched.as_ref().map_or(0, |s| s.pcount),
        minor_faults: stat.minflt,
        major_faults: stat.majflt,
        voluntary_switches: status
            .as_ref()
            .and_then(|s| s.voluntary_ctxt_switches)
            .unwrap_or(0),
        involuntary_switches: status
            .as_ref()
            .and_then(|s| s.nonvoluntary_ctxt_switches)
            .unwrap_or(0),
        io: task.io().ok(),
        peak_rss_bytes: 0,
        peak_vm_bytes: 0,
    })
}
