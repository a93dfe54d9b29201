//! From the kernel's exit records, the fork and exit events and the /proc samples to the
//! report's records: which tasks are the tree's, one record per thread (the exit record where
//! there is one, else the last sample), one per process, the totals, and the check of the
//! totals against the run's rusage.

use std::collections::{BTreeMap, HashMap, HashSet};

use arum_taskstats::stats::{Delay, AGROUP};
use arum_taskstats::{ProcEvent, TaskStats};

use super::sample::{Command, Samples, ThreadSample};
use super::watch::Collected;
use crate::facilities::tasks::model::{
    DelayTotal, Delays, ProcessRecord, RecordSource, RusageCheck, TaskUsage, ThreadRecord,
};

/// What the run gives the assembly besides the records.
pub struct Context<'r> {
    pub root: u32,
    /// CLOCK_MONOTONIC of the release, in nanoseconds.
    pub released_ns: u64,
    /// When wait4 returned for the launched process, relative to the release (the run's wall time).
    pub reaped_ns: i64,
    /// CLOCK_BOOTTIME minus CLOCK_MONOTONIC (for /proc start times, which count from boot).
    pub boot_offset_ns: u64,
    pub ticks_per_second: u64,
    /// Block I/O, swap-in, reclaim and thrashing delays were accounted.
    pub delays_on: bool,
    /// tid → its CPU time from the scheduler's switches (exact to its last switch), where known.
    pub runtimes: &'r BTreeMap<u32, u64>,
}

/// The assembled records.
#[derive(Debug, Default)]
pub struct Assembled {
    pub threads: Vec<ThreadRecord>,
    pub processes: Vec<ProcessRecord>,
    pub totals: TaskUsage,
    /// Tasks seen forking (or in a sample) that have neither an exit record nor a sample.
    pub unrecorded: u64,
    pub sampled: u64,
}

pub fn assemble(ctx: &Context, collected: &Collected, samples: &Samples) -> Assembled {
    let tree = Tree::follow(ctx.root, &collected.events, samples, &collected.exits);
    let times = Times::from_events(&collected.events);
    let mut threads = Vec::new();
    let mut recorded = HashSet::new();
    for t in collected.exits.iter().filter(|t| tree.has(t)) {
        recorded.insert(t.pid);
        threads.push((from_exit(ctx, t, &times), t.flags & AGROUP != 0));
    }
    let mut sampled = 0;
    for s in samples.threads.values() {
        if recorded.contains(&s.tid) || !tree.processes.contains(&s.tgid) {
            continue;
        }
        sampled += 1;
        threads.push((from_sample(ctx, s, &times), false));
    }
    let unrecorded = times
        .started
        .keys()
        .filter(|tid| !recorded.contains(tid) && !samples.threads.contains_key(tid))
        .filter(|tid| {
            times
                .process_of(**tid)
                .is_some_and(|p| tree.processes.contains(&p))
        })
        .count() as u64;
    threads.sort_by_key(|(t, _)| (t.pid, t.tid));

    let mut commands: HashMap<u32, &Command> =
        samples.commands.iter().map(|(k, v)| (*k, v)).collect();
    commands.extend(collected.commands.iter().map(|(k, v)| (*k, v)));
    let processes = processes(&threads, &tree, &commands, collected);
    let threads: Vec<ThreadRecord> = threads.into_iter().map(|(t, _)| t).collect();
    let totals = sum(threads.iter().map(|t| &t.usage));
    Assembled {
        threads,
        processes,
        totals,
        unrecorded,
        sampled,
    }
}

/// The tree's processes: the launched one, and every process a member forked (from the fork
/// events, exact even through re-parenting), listed in a sample, or whose exit record names a
/// member as its parent (when there are no events).
struct Tree {
    processes: HashSet<u32>,
    parents: HashMap<u32, u32>,
}

impl Tree {
    fn follow(root: u32, events: &[ProcEvent], samples: &Samples, exits: &[TaskStats]) -> Tree {
        let mut processes = HashSet::from([root]);
        let mut parents = HashMap::new();
        for e in events {
            if let ProcEvent::Fork {
                parent_tgid,
                child_pid,
                child_tgid,
                ..
            } = *e
            {
                if child_pid == child_tgid && processes.contains(&parent_tgid) {
                    processes.insert(child_tgid);
                    parents.insert(child_tgid, parent_tgid);
                }
            }
        }
        for s in samples.threads.values() {
            processes.insert(s.tgid);
            parents.entry(s.tgid).or_insert(s.parent);
        }
        // Exit records of processes whose fork was not seen: follow their parents to a fixpoint.
        loop {
            let before = processes.len();
            for t in exits {
                let tgid = t.tgid.unwrap_or(t.pid);
                if t.pid == tgid && processes.contains(&t.ppid) && !processes.contains(&tgid) {
                    processes.insert(tgid);
                    parents.entry(tgid).or_insert(t.ppid);
                }
            }
            if processes.len() == before {
                break;
            }
        }
        Tree { processes, parents }
    }

    fn has(&self, t: &TaskStats) -> bool {
        self.processes.contains(&t.tgid.unwrap_or(t.pid))
    }
}

/// Exact start and end of tasks, from the fork and exit events.
#[derive(Default)]
struct Times {
    /// tid → (process, fork time).
    started: HashMap<u32, (u32, u64)>,
    ended: HashMap<u32, u64>,
}

impl Times {
    fn from_events(events: &[ProcEvent]) -> Times {
        let mut times = Times::default();
        for e in events {
            match *e {
                ProcEvent::Fork {
                    t_ns,
                    child_pid,
                    child_tgid,
                    ..
                } => {
                    times.started.insert(child_pid, (child_tgid, t_ns));
                }
                ProcEvent::Exit { t_ns, pid, .. } => {
                    times.ended.insert(pid, t_ns);
                }
                _ => {}
            }
        }
        times
    }

    fn process_of(&self, tid: u32) -> Option<u32> {
        self.started.get(&tid).map(|(p, _)| *p)
    }

    /// When thread `tid` of process `tgid` ended, relative to the release. The kernel stamps the
    /// exit event after it has woken the parent (do_exit: exit_notify, then
    /// proc_exit_connector), so the launched process's last thread can be stamped a few
    /// microseconds after wait4 returned; those threads ended before the reap, which bounds them.
    /// Other processes of the tree may outlive the launched one and are left as stamped.
    fn end(&self, ctx: &Context, tid: u32, tgid: u32) -> Option<i64> {
        let end = relative(ctx, *self.ended.get(&tid)?);
        Some(if tgid == ctx.root {
            end.min(ctx.reaped_ns)
        } else {
            end
        })
    }
}

fn relative(ctx: &Context, mono_ns: u64) -> i64 {
    mono_ns as i64 - ctx.released_ns as i64
}

fn delay(d: Delay) -> DelayTotal {
    DelayTotal {
        count: d.count,
        total_ns: d.total_ns,
    }
}

/// Splits the exact CPU time as the tick samples split it, as the kernel does for getrusage
/// (ticks alone are 4 ms samples; a short thread may have none at all).
fn split(cpu_ns: u64, user_ticks: u64, system_ticks: u64) -> (u64, u64) {
    let ticks = user_ticks + system_ticks;
    if ticks == 0 {
        return (cpu_ns, 0);
    }
    let user = (cpu_ns as u128 * user_ticks as u128 / ticks as u128) as u64;
    (user, cpu_ns - user)
}

fn from_exit(ctx: &Context, t: &TaskStats, times: &Times) -> ThreadRecord {
    let end = times.end(ctx, t.pid, t.tgid.unwrap_or(t.pid));
    let start = times
        .started
        .get(&t.pid)
        .map(|&(_, s)| relative(ctx, s))
        .or_else(|| end.map(|e| e - t.elapsed_ns as i64));
    // The exit record's runtime stops at the scheduler's last update before the exit began.
    let cpu_ns = ctx.runtimes.get(&t.pid).copied().unwrap_or(t.cpu_ns);
    let (user_ns, system_ns) = split(cpu_ns, t.user_ns, t.system_ns);
    let on = ctx.delays_on;
    let usage = TaskUsage {
        cpu_ns,
        user_ns,
        system_ns,
        minor_faults: t.minor_faults,
        major_faults: t.major_faults,
        voluntary_context_switches: t.voluntary_switches,
        involuntary_context_switches: t.involuntary_switches,
        read_chars: t.read_chars,
        write_chars: t.write_chars,
        read_syscalls: t.read_syscalls,
        write_syscalls: t.write_syscalls,
        read_bytes: t.read_bytes,
        write_bytes: t.write_bytes,
        cancelled_write_bytes: t.cancelled_write_bytes,
        peak_rss_bytes: t.peak_rss_bytes,
        peak_vm_bytes: t.peak_vm_bytes,
        delays: Delays {
            // Scheduler statistics count every arrival on a CPU: a task that ran has one.
            run_queue: (t.cpu_delay.count > 0).then(|| delay(t.cpu_delay)),
            block_io: on.then(|| delay(t.blkio_delay)),
            swap_in: on.then(|| delay(t.swapin_delay)),
            reclaim: on.then(|| delay(t.reclaim_delay)),
            thrashing: on.then(|| delay(t.thrashing_delay)),
        },
    };
    ThreadRecord {
        pid: t.tgid.unwrap_or(t.pid),
        tid: t.pid,
        parent: t.ppid,
        comm: t.comm.clone(),
        source: RecordSource::ExitRecord,
        start_ns: start,
        end_ns: end,
        exit_code: t.exit_status(),
        exit_signal: t.exit_signal(),
        cpu_wait_share: wait_share(&usage, t.elapsed_ns),
        usage,
    }
}

fn from_sample(ctx: &Context, s: &ThreadSample, times: &Times) -> ThreadRecord {
    let tick_ns = 1_000_000_000 / ctx.ticks_per_second.max(1);
    let start = times.started.get(&s.tid).map_or_else(
        || (s.start_ticks * tick_ns) as i64 - ctx.boot_offset_ns as i64 - ctx.released_ns as i64,
        |&(_, t)| relative(ctx, t),
    );
    let end = times.end(ctx, s.tid, s.tgid);
    // schedstat's time is exact; the ticks (4 ms samples, in 10 ms units) only stand in for it.
    let cpu_ns = if let Some(&ns) = ctx.runtimes.get(&s.tid) {
        ns
    } else if s.cpu_ns > 0 {
        s.cpu_ns
    } else {
        (s.user_ticks + s.system_ticks) * tick_ns
    };
    let (user_ns, system_ns) = split(cpu_ns, s.user_ticks, s.system_ticks);
    let io = s.io.unwrap_or(procfs::process::Io {
        rchar: 0,
        wchar: 0,
        syscr: 0,
        syscw: 0,
        read_bytes: 0,
        write_bytes: 0,
        cancelled_write_bytes: 0,
    });
    let usage = TaskUsage {
        cpu_ns,
        user_ns,
        system_ns,
        minor_faults: s.minor_faults,
        major_faults: s.major_faults,
        voluntary_context_switches: s.voluntary_switches,
        involuntary_context_switches: s.involuntary_switches,
        read_chars: io.rchar,
        write_chars: io.wchar,
        read_syscalls: io.syscr,
        write_syscalls: io.syscw,
        read_bytes: io.read_bytes,
        write_bytes: io.write_bytes,
        cancelled_write_bytes: io.cancelled_write_bytes,
        peak_rss_bytes: s.peak_rss_bytes,
        peak_vm_bytes: s.peak_vm_bytes,
        delays: Delays {
            run_queue: (s.timeslices > 0).then_some(DelayTotal {
                count: s.timeslices,
                total_ns: s.run_delay_ns,
            }),
            ..Delays::default()
        },
    };
    let lifetime = (relative(ctx, s.seen_ns) - start).max(0) as u64;
    ThreadRecord {
        pid: s.tgid,
        tid: s.tid,
        parent: s.parent,
        comm: s.comm.clone(),
        source: RecordSource::ProcSample,
        start_ns: Some(start),
        end_ns: end,
        exit_code: None,
        exit_signal: None,
        cpu_wait_share: wait_share(&usage, lifetime),
        usage,
    }
}

fn wait_share(u: &TaskUsage, lifetime_ns: u64) -> Option<f64> {
    let waited = u.delays.run_queue?.total_ns;
    (lifetime_ns > 0).then(|| (waited as f64 / lifetime_ns as f64).min(1.0))
}

fn add_delay(a: Option<DelayTotal>, b: Option<DelayTotal>) -> Option<DelayTotal> {
    match (a, b) {
        (None, None) => None,
        (a, b) => {
            let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
            Some(DelayTotal {
                count: a.count + b.count,
                total_ns: a.total_ns + b.total_ns,
            })
        }
    }
}

/// Sums of every field; peaks are the largest.
pub fn sum<'a>(usages: impl Iterator<Item = &'a TaskUsage>) -> TaskUsage {
    let mut s = TaskUsage::default();
    for u in usages {
        s.cpu_ns += u.cpu_ns;
        s.user_ns += u.user_ns;
        s.system_ns += u.system_ns;
        s.minor_faults += u.minor_faults;
        s.major_faults += u.major_faults;
        s.voluntary_context_switches += u.voluntary_context_switches;
        s.involuntary_context_switches += u.involuntary_context_switches;
        s.read_chars += u.read_chars;
        s.write_chars += u.write_chars;
        s.read_syscalls += u.read_syscalls;
        s.write_syscalls += u.write_syscalls;
        s.read_bytes += u.read_bytes;
        s.write_bytes += u.write_bytes;
        s.cancelled_write_bytes += u.cancelled_write_bytes;
        s.peak_rss_bytes = s.peak_rss_bytes.max(u.peak_rss_bytes);
        s.peak_vm_bytes = s.peak_vm_bytes.max(u.peak_vm_bytes);
        let (a, b) = (&mut s.delays, &u.delays);
        a.run_queue = add_delay(a.run_queue, b.run_queue);
        a.block_io = add_delay(a.block_io, b.block_io);
        a.swap_in = add_delay(a.swap_in, b.swap_in);
        a.reclaim = add_delay(a.reclaim, b.reclaim);
        a.thrashing = add_delay(a.thrashing, b.thrashing);
    }
    s
}

/// One record per process of the tree, from its threads' records.
fn processes(
    threads: &[(ThreadRecord, bool)],
    tree: &Tree,
    commands: &HashMap<u32, &Command>,
    collected: &Collected,
) -> Vec<ProcessRecord> {
    let mut by_process: BTreeMap<u32, Vec<&(ThreadRecord, bool)>> = BTreeMap::new();
    for t in threads {
        by_process.entry(t.0.pid).or_default().push(t);
    }
    by_process
        .into_iter()
        .map(|(pid, ts)| {
            let main = ts.iter().find(|(t, _)| t.tid == pid).map(|(t, _)| t);
            // The last thread's record carries the process's exit status.
            let last = ts
                .iter()
                .find(|(_, group_end)| *group_end)
                .map(|(t, _)| t)
                .or(main);
            let command = commands.get(&pid);
            let cpu: Vec<u64> = ts
                .iter()
                .map(|(t, _)| t.usage.cpu_ns)
                .filter(|&c| c > 0)
                .collect();
            let imbalance = (cpu.len() >= 2).then(|| {
                let mean = cpu.iter().sum::<u64>() as f64 / cpu.len() as f64;
                *cpu.iter().max().expect("two or more") as f64 / mean
            });
            let mut usage = sum(ts.iter().map(|(t, _)| &t.usage));
            if let Some(g) = collected.groups.get(&pid) {
                // The kernel's own process total of run-queue waits, where it sent one.
                if g.cpu_delay.count > 0 {
                    usage.delays.run_queue = Some(delay(g.cpu_delay));
                }
            }
            let lifetimes: i64 = ts
                .iter()
                .filter_map(|(t, _)| Some(t.end_ns? - t.start_ns?))
                .sum();
            let cpu_wait_share = usage
                .delays
                .run_queue
                .filter(|_| lifetimes > 0)
                .map(|d| (d.total_ns as f64 / lifetimes as f64).min(1.0));
            ProcessRecord {
                pid,
                parent: tree
                    .parents
                    .get(&pid)
                    .copied()
                    .or(main.map(|m| m.parent))
                    .unwrap_or(0),
                comm: main.or(last).map(|t| t.comm.clone()).unwrap_or_default(),
                exe: command.and_then(|c| c.exe.clone()),
                argv: command.map(|c| c.argv.clone()),
                start_ns: ts.iter().filter_map(|(t, _)| t.start_ns).min(),
                end_ns: ts.iter().filter_map(|(t, _)| t.end_ns).max(),
                exit_code: last.and_then(|t| t.exit_code),
                exit_signal: last.and_then(|t| t.exit_signal),
                threads: ts.len() as u64,
                usage,
                imbalance,
                cpu_wait_share,
            }
        })
        .collect()
}

/// The tree's totals against wait4's rusage of the launched process, which covers it and the
/// descendants it (and they) waited for.
pub fn check_rusage(
    totals: &TaskUsage,
    ru: &libc::rusage,
    processes: usize,
    exact: bool,
) -> Vec<RusageCheck> {
    let micros = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64;
    let rusage_cpu_ns = (micros(ru.ru_utime) + micros(ru.ru_stime)) * 1000;
    // getrusage truncates user and system time to microseconds, per process.
    let cpu_slack = 2_000 * processes.max(1) as u64;
    let row = |field: &str, tasks_total: u64, rusage: u64, slack: u64, exit_tail: bool| {
        let agrees = tasks_total.abs_diff(rusage) <= slack;
        RusageCheck {
            field: field.into(),
            tasks_total,
            rusage,
            agrees,
            note: (!agrees).then(|| why_they_differ(tasks_total, rusage, exact, exit_tail)),
        }
    };
    vec![
        row("cpu_ns", totals.cpu_ns, rusage_cpu_ns, cpu_slack, true),
        row(
            "minor_faults",
            totals.minor_faults,
            ru.ru_minflt as u64,
            0,
            false,
        ),
        row(
            "major_faults",
            totals.major_faults,
            ru.ru_majflt as u64,
            0,
            false,
        ),
        row(
            "voluntary_context_switches",
            totals.voluntary_context_switches,
            ru.ru_nvcsw as u64,
            0,
            true,
        ),
        row(
            "involuntary_context_switches",
            totals.involuntary_context_switches,
            ru.ru_nivcsw as u64,
            0,
            true,
        ),
        // The kernel's block counts are its byte counts in 512-byte units, per task.
        row(
            "read_bytes / 512",
            totals.read_bytes / 512,
            ru.ru_inblock as u64,
            processes as u64,
            false,
        ),
        row(
            "(write_bytes - cancelled_write_bytes) / 512",
            totals
                .write_bytes
                .saturating_sub(totals.cancelled_write_bytes)
                / 512,
            ru.ru_oublock as u64,
            processes as u64,
            false,
        ),
    ]
}

/// With CPU times from the scheduler's switches, a CPU total above rusage's is the threads'
/// exit tails: the kernel adds an exiting thread's time to its process's total when the thread
/// is released, and what it runs after that (to its last switch) is in the records only.
pub fn note_switch_tails(rows: &mut [RusageCheck]) {
    for r in rows
        .iter_mut()
        .filter(|r| r.field == "cpu_ns" && r.tasks_total > r.rusage)
    {
        r.note = Some(format!(
            "{:.2}% more in the records: they count each thread to its last switch; rusage leaves out what an exiting thread runs after it is released",
            100.0 * (r.tasks_total - r.rusage) as f64 / r.rusage.max(1) as f64
        ));
    }
}

/// Why a total of the records and rusage's figure differ: samples that stop early, the tail of
/// an exit (for a figure that grows as a task exits, `exit_tail`), or a descendant not waited for.
fn why_they_differ(tasks_total: u64, rusage: u64, exact: bool, exit_tail: bool) -> String {
    let less = |what: &str| {
        format!(
            "{:.2}% less in the records{what}",
            100.0 * (rusage - tasks_total) as f64 / rusage.max(1) as f64
        )
    };
    if !exact {
        "some records are /proc samples, which stop at each task's last sample".into()
    } else if tasks_total < rusage && exit_tail {
        less(
            ": an exit record is taken as the task begins to exit; the rest of its exit \
             (freeing its memory, its last switch) counts in rusage only",
        )
    } else if tasks_total > rusage {
        "rusage counts only the descendants that were waited for; a process reaped by init (its \
         parent exited first) is in the records but not in rusage"
            .into()
    } else {
        less(" than in rusage")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static NO_RUNTIMES: BTreeMap<u32, u64> = BTreeMap::new();

    fn ctx() -> Context<'static> {
        Context {
            root: 100,
            released_ns: 1_000_000,
            reaped_ns: 20_000_000,
            boot_offset_ns: 0,
            ticks_per_second: 100,
            delays_on: false,
            runtimes: &NO_RUNTIMES,
        }
    }

    fn task(pid: u32, tgid: u32, ppid: u32, cpu_ns: u64) -> TaskStats {
        TaskStats {
            pid,
            tgid: Some(tgid),
            ppid,
            cpu_ns,
            user_ns: cpu_ns,
            comm: format!("t{pid}"),
            elapsed_ns: 5_000_000,
            cpu_delay: Delay {
                count: 2,
                total_ns: 1_000_000,
            },
            ..TaskStats::default()
        }
    }

    fn fork(parent: u32, child: u32, tgid: u32, t_ns: u64) -> ProcEvent {
        ProcEvent::Fork {
            t_ns,
            parent_pid: parent,
            parent_tgid: parent,
            child_pid: child,
            child_tgid: tgid,
        }
    }

    #[test]
    fn the_tree_is_followed_through_forks_and_strangers_are_left_out() {
        let collected = Collected {
            exits: vec![
                task(101, 100, 1, 3_000_000),
                task(200, 200, 1, 7_000_000), // re-parented to init, but forked by 100
                task(300, 300, 1, 9_000_000), // not the tree's
                task(100, 100, 50, 1_000_000),
            ],
            events: vec![
                fork(100, 101, 100, 2_000_000),
                fork(100, 200, 200, 2_500_000),
                ProcEvent::Exit {
                    t_ns: 4_000_000,
                    pid: 101,
                    tgid: 100,
                    exit_code: 0,
                    parent_pid: 50,
                },
            ],
            ..Collected::default()
        };
        let a = assemble(&ctx(), &collected, &Samples::default());
        let tids: Vec<u32> = a.threads.iter().map(|t| t.tid).collect();
        assert_eq!(tids, [100, 101, 200]);
        assert_eq!(a.totals.cpu_ns, 11_000_000);
        let t101 = &a.threads[1];
        assert_eq!(
            (t101.start_ns, t101.end_ns),
            (Some(1_000_000), Some(3_000_000))
        );
        assert_eq!(t101.cpu_wait_share, Some(0.2));
        let pids: Vec<(u32, u32, u64)> = a
            .processes
            .iter()
            .map(|p| (p.pid, p.parent, p.threads))
            .collect();
        assert_eq!(pids, [(100, 50, 2), (200, 100, 1)]);
        // Threads of 3 ms and 1 ms: the busiest used 1.5 times the mean.
        assert_eq!(a.processes[0].imbalance, Some(1.5));
        assert_eq!(a.unrecorded, 0);
        // Delay accounting off: only the run-queue delay is known.
        assert!(a.totals.delays.block_io.is_none());
        assert_eq!(a.totals.delays.run_queue.unwrap().count, 6);
    }

    #[test]
    fn the_launched_process_threads_end_by_the_reap_and_others_may_outlive_it() {
        let exit = |pid: u32, tgid: u32, t_ns: u64| ProcEvent::Exit {
            t_ns,
            pid,
            tgid,
            exit_code: 0,
            parent_pid: 100,
        };
        let collected = Collected {
            exits: vec![
                task(101, 100, 1, 1_000_000),
                task(100, 100, 50, 1_000_000),
                task(200, 200, 100, 1_000_000),
            ],
            events: vec![
                fork(100, 101, 100, 2_000_000),
                fork(100, 200, 200, 3_000_000),
                // Stamped 7 µs after wait4 returned (the reap is at 21 ms of CLOCK_MONOTONIC).
                exit(101, 100, 21_007_000),
                exit(200, 200, 30_000_000),
            ],
            ..Collected::default()
        };
        let a = assemble(&ctx(), &collected, &Samples::default());
        let end = |tid: u32| a.threads.iter().find(|t| t.tid == tid).unwrap().end_ns;
        assert_eq!(end(101), Some(20_000_000));
        assert_eq!(end(200), Some(29_000_000));
    }

    #[test]
    fn a_task_without_its_exit_record_comes_from_its_last_sample_or_is_counted_missing() {
        let mut samples = Samples::default();
        samples.threads.insert(
            102,
            ThreadSample {
                tgid: 100,
                tid: 102,
                parent: 50,
                cpu_ns: 4_000_000,
                user_ticks: 1,
                timeslices: 3,
                seen_ns: 9_000_000,
                ..ThreadSample::default()
            },
        );
        let collected = Collected {
            exits: vec![task(100, 100, 50, 1_000_000)],
            events: vec![
                fork(100, 102, 100, 2_000_000),
                fork(100, 103, 100, 2_100_000),
            ],
            exits_dropped: true,
            ..Collected::default()
        };
        let a = assemble(&ctx(), &collected, &samples);
        assert_eq!(a.sampled, 1);
        assert_eq!(a.unrecorded, 1);
        let t = a.threads.iter().find(|t| t.tid == 102).unwrap();
        assert_eq!(t.source, RecordSource::ProcSample);
        assert_eq!(t.usage.cpu_ns, 4_000_000);
        assert_eq!(t.start_ns, Some(1_000_000));
    }

    #[test]
    fn cpu_time_is_split_in_the_proportion_of_the_ticks() {
        assert_eq!(split(1_000, 3, 1), (750, 250));
        assert_eq!(split(1_000, 0, 0), (1_000, 0));
    }

    #[test]
    fn totals_are_checked_against_rusage() {
        // SAFETY: rusage is plain old data; zero is a valid value of every field.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        ru.ru_utime.tv_usec = 900;
        ru.ru_stime.tv_usec = 100;
        ru.ru_minflt = 5;
        let totals = TaskUsage {
            cpu_ns: 1_000_400,
            minor_faults: 5,
            ..TaskUsage::default()
        };
        let rows = check_rusage(&totals, &ru, 1, true);
        assert!(rows.iter().all(|r| r.agrees), "{rows:?}");
        let totals = TaskUsage {
            minor_faults: 6,
            ..totals
        };
        let rows = check_rusage(&totals, &ru, 1, true);
        let faults = rows.iter().find(|r| r.field == "minor_faults").unwrap();
        assert!(!faults.agrees && faults.note.is_some());
    }
}
