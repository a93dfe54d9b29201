//! Peers side by side (`--peers`): perf bench (Debian's linux-perf) and sysbench measure some of
//! the same costs. Each peer runs, and the matching measurement of ours is taken again right
//! after it, so both see the same machine; the output gives the ratio, whether it is within a
//! factor of 2, and how the two methods differ.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::context::{Context, Sink};
use crate::model::{Comparison, Measurement, Unit};
use crate::suite;
use crate::sys::cpu::Pinned;

/// What a peer printed, and its CPU time and wall time.
struct PeerRun {
    text: String,
    cpu_ns: f64,
    wall_ns: f64,
}

/// Runs a peer within `limit`. Its CPU time (and its children's) is the growth of this
/// process's reaped-children usage across the run: nothing else of ours is reaped meanwhile.
/// Its wall time ends when it is reaped, by a thread that waits for it (a polling loop would add
/// up to its period to the wall time, and so take a short peer's CPU share for less than it had).
fn run_peer(program: &str, args: &[&str], limit: Duration) -> Result<PeerRun, String> {
    let cpu0 = crate::sys::cpu::children_cpu_ns();
    let start = Instant::now();
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{program} is not available ({e})"))?;
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let output = child.wait_with_output();
        let _ = tx.send(Instant::now());
        output
    });
    let ended = rx.recv_timeout(limit);
    if ended.is_err() {
        // Not reaped yet, so the pid is still the peer's.
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    }
    let output = waiter
        .join()
        .map_err(|_| format!("waiting for {program} failed"))?
        .map_err(|e| format!("waiting for {program} failed ({e})"))?;
    let Ok(ended) = ended else {
        return Err(format!(
            "{program} did not finish within {} s",
            limit.as_secs()
        ));
    };
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        // Some peers (sysbench) print their fatal error on standard output.
        let why = [err.trim(), out.trim()]
            .into_iter()
            .find_map(|t| t.lines().last().filter(|l| !l.is_empty()))
            .unwrap_or("");
        return Err(format!("{program} failed ({}): {why}", output.status));
    }
    Ok(PeerRun {
        text: format!("{out}{err}"),
        cpu_ns: crate::sys::cpu::children_cpu_ns().saturating_sub(cpu0) as f64,
        wall_ns: ended.duration_since(start).as_nanos() as f64,
    })
}

/// The number before `unit` on the first line that has it (`7.84 usecs/op`).
pub fn number_before(text: &str, unit: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let at = l.find(unit)?;
        l[..at]
            .split_whitespace()
            .last()?
            .trim_start_matches('(')
            .parse()
            .ok()
    })
}

/// perf bench mem memcpy: "12.98 GB/sec" (perf's GB is 2^30 bytes), or MB/sec.
pub fn perf_rate(text: &str) -> Option<f64> {
    number_before(text, "GB/sec")
        .map(|g| g * 1073741824.0)
        .or_else(|| number_before(text, "MB/sec").map(|m| m * 1048576.0))
}

/// sysbench memory: "102400.00 MiB transferred (10155.46 MiB/sec)".
pub fn sysbench_rate(text: &str) -> Option<f64> {
    number_before(text, "MiB/sec").map(|m| m * 1048576.0)
}

/// sysbench threads: total time over events × yields per event, in ns per yield.
pub fn sysbench_yield_ns(text: &str, yields: u64) -> Option<f64> {
    let total_s = text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("total time:")?;
        rest.trim().trim_end_matches('s').parse::<f64>().ok()
    })?;
    let events: f64 = text.lines().find_map(|l| {
        l.trim()
            .strip_prefix("total number of events:")?
            .trim()
            .parse()
            .ok()
    })?;
    (events > 0.0).then(|| total_s * 1e9 / (events * yields as f64))
}

/// Measures `names` again (ours, right after the peer) and returns them.
fn ours_again(ctx: &Context, names: &[&'static str]) -> Vec<Measurement> {
    let mut sub = ctx.subset(names);
    let mut sink = Sink::default();
    suite::run_selected(&mut sub, &mut sink);
    sink.measurements
}

fn figure(ms: &[Measurement], name: &str, detail: Option<&str>) -> Option<f64> {
    let m = ms.iter().find(|m| m.name == name)?;
    match detail {
        Some(d) => m.details.get(d).copied(),
        None => m.median(),
    }
}

/// One comparison: what it is, how to run the peer, how to read its figure.
struct Spec {
    what: &'static str,
    ours_name: &'static str,
    unit: Unit,
    explanation: String,
    program: &'static str,
    args: Vec<String>,
    /// Pin the peer (and ours) to this CPU.
    pin: Option<usize>,
    /// CPUs the peer keeps busy when it has them to itself.
    busy_cpus: usize,
    read: fn(&str) -> Option<f64>,
}

impl Spec {
    fn command(&self) -> String {
        let pin = self
            .pin
            .map(|c| format!("taskset -c {c} "))
            .unwrap_or_default();
        format!("{pin}{} {}", self.program, self.args.join(" "))
    }

    /// Runs the peer: its printed figure, its share of the CPUs it keeps busy, and its figure
    /// for the time it ran.
    fn run(&self, limit: Duration) -> Result<(f64, f64, Option<f64>), String> {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let run = {
            let _pin = self.pin.map(|c| Pinned::to(&[c]));
            run_peer(self.program, &args, limit)?
        };
        let printed =
            (self.read)(&run.text).ok_or("could not read the peer's figure from its output")?;
        let share = (run.cpu_ns / (run.wall_ns * self.busy_cpus as f64)).clamp(0.01, 1.0);
        Ok((
            printed,
            share,
            for_time_ran(self.unit, printed, share, self.busy_cpus),
        ))
    }
}

/// Below this share of its CPU the peer mostly waited for other processes: a figure scaled up
/// more than fourfold tells the machine's load, not the peer's cost.
const LEAST_SHARE: f64 = 0.25;

/// A figure timed by the clock, scaled to the time the peer actually ran: below a 90% share
/// of its CPU, the peer waited while other processes ran and counted that as its own cost.
/// Only a peer on one CPU can be scaled so: the threads of a peer on several CPUs share the
/// memory bus, and one running alone gets more than its part, so no scaling is right (None);
/// nor is any below `LEAST_SHARE`.
pub fn for_time_ran(unit: Unit, printed: f64, share: f64, busy_cpus: usize) -> Option<f64> {
    if share >= 0.9 {
        return Some(printed);
    }
    if busy_cpus > 1 || share < LEAST_SHARE {
        return None;
    }
    Some(match unit {
        Unit::Ns => printed * share,
        Unit::BytesPerS => printed / share,
    })
}

fn compare(
    spec: &Spec,
    peer: Result<(f64, f64, Option<f64>), String>,
    ours: Option<f64>,
) -> Comparison {
    let (printed, share, peer, mut missing) = match peer {
        Ok((printed, share, Some(ran))) => (Some(printed), Some(share), Some(ran), None),
        Ok((printed, share, None)) => (
            Some(printed),
            Some(share),
            None,
            Some(if spec.busy_cpus > 1 {
                format!(
                    "the peer had only {:.0}% of its {} CPUs (other processes ran meanwhile), \
                     and the rate of threads sharing the memory bus cannot be scaled to the \
                     time they ran; compare on a quieter machine",
                    share * 100.0,
                    spec.busy_cpus
                )
            } else {
                format!(
                    "the peer had only {:.0}% of its CPU (other processes ran meanwhile): its \
                     figure for the time it ran would be scaled more than fourfold, which tells \
                     the machine's load rather than the peer's cost; compare on a quieter machine",
                    share * 100.0
                )
            }),
        ),
        Err(e) => (None, None, None, Some(e)),
    };
    if ours.is_none() && missing.is_none() {
        missing = Some(format!("{} was not measured", spec.ours_name));
    }
    let over = |b: Option<f64>| ours.zip(b).filter(|(_, b)| *b > 0.0).map(|(a, b)| a / b);
    let ratio = over(peer);
    // The time the peer did not run may have been other processes' (then the scaled figure is
    // right) or its own waits that no process used (an idle CPU, the hypervisor: then the
    // printed one is): the truth lies between the two, and agreement is judged over that range.
    let printed_ratio = over(printed).filter(|_| peer != printed);
    let within_factor_2 = ratio.map(|r| {
        let (lo, hi) = printed_ratio.map_or((r, r), |p| (r.min(p), r.max(p)));
        hi >= 0.5 && lo <= 2.0
    });
    let mut explanation = spec.explanation.clone();
    if let Some(sh) = share.filter(|&sh| sh < 0.9) {
        explanation.push_str(&format!(
            "; the peer had {:.0}% of its CPU time while it ran (other processes took turns), \
             so its figure is taken for the time it ran",
            sh * 100.0
        ));
        if let Some(p) = printed_ratio {
            explanation.push_str(&format!(
                " (if that time was its own waiting, with no other process running, the \
                 printed figure stands: ratio {p:.2})"
            ));
        }
    }
    Comparison {
        what: spec.what.into(),
        ours_name: spec.ours_name.into(),
        ours,
        peer_command: spec.command(),
        peer_printed: printed,
        peer_cpu_share: share,
        peer,
        unit: spec.unit,
        ratio,
        within_factor_2,
        explanation,
        missing,
    }
}

/// Runs the peer, then `again` of ours right after it, and compares the peer's figure with
/// what `ours` reads from our fresh measurements.
fn side_by_side(
    ctx: &Context,
    spec: &Spec,
    limit: Duration,
    again: &[&'static str],
    ours: impl Fn(&[Measurement]) -> Option<f64>,
) -> Comparison {
    let pair = || {
        let peer = spec.run(limit);
        let fresh = ours_again(ctx, again);
        compare(spec, peer, ours(&fresh))
    };
    let first = pair();
    if first.within_factor_2 != Some(false) {
        return first;
    }
    // A pair more than a factor of 2 apart is measured once more and the second is kept,
    // whatever it says, with the first stated: on a shared VM one of a pair's two figures is
    // now and then twice the other's usual (a thread switch plus getppid of 0.7 or 1.6 µs).
    let mut second = pair();
    second.explanation.push_str(&format!(
        "; measured twice, the first pair was {:.2} apart",
        first.ratio.unwrap_or(f64::NAN)
    ));
    second
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn usecs_per_op(t: &str) -> Option<f64> {
    number_before(t, "usecs/op").map(|us| us * 1e3)
}

/// How long a peer may run.
const PEER_LIMIT: Duration = Duration::from_secs(120);

/// Runs every comparison; `buffer_bytes` is the bandwidth buffer size our suite uses.
pub fn run(ctx: &mut Context, buffer_bytes: u64) -> Vec<Comparison> {
    let mut out = context_switches(ctx);
    out.push(system_call(ctx));
    out.push(memcpy_bandwidth(ctx, buffer_bytes));
    out.extend(memory_bandwidth(ctx, buffer_bytes));
    out.push(thread_yield(ctx));
    ctx.end_progress();
    out
}

/// Context switches: perf bench sched pipe, both ends on one CPU as ours.
fn context_switches(ctx: &Context) -> Vec<Comparison> {
    let quick = ctx.quick();
    let cpu = ctx.cpus[0];
    let mut out = Vec::new();
    let loops = if quick { "20000" } else { "100000" };
    for (threads, what, name) in [
        (
            false,
            "pipe round trip, processes, one CPU",
            "tasks.switch.process.same_cpu",
        ),
        (
            true,
            "pipe round trip, threads, one CPU",
            "tasks.switch.thread.same_cpu",
        ),
    ] {
        let mut args = strings(&["bench", "sched", "pipe", "-l", loops]);
        if threads {
            args.push("-T".into());
        }
        let spec = Spec {
            what,
            ours_name: name,
            unit: Unit::Ns,
            explanation: format!(
                "both time a round trip of two tasks over two pipes (2 switches, 2 writes, 2 \
                 reads) on CPU {cpu}; ours is the median round trip (details.round_trip_ns), \
                 perf's the mean of {loops}"
            ),
            program: "perf",
            args,
            pin: Some(cpu),
            busy_cpus: 1,
            read: usecs_per_op,
        };
        out.push(side_by_side(
            ctx,
            &spec,
            PEER_LIMIT,
            &["tasks.pipe", name],
            |ours| figure(ours, name, Some("round_trip_ns")),
        ));
    }
    out
}

/// System call: perf bench syscall basic (a getppid loop).
fn system_call(ctx: &Context) -> Comparison {
    let quick = ctx.quick();
    let cpu = ctx.cpus[0];
    let spec = Spec {
        what: "minimal system call (getppid)",
        ours_name: "cpu.syscall.getppid",
        unit: Unit::Ns,
        explanation: "both call getppid(2) in a loop; ours is the median of batches of 10 with \
                      the timer and loop costs subtracted, perf's the mean of the whole loop"
            .into(),
        program: "perf",
        args: strings(&[
            "bench",
            "syscall",
            "basic",
            "-l",
            if quick { "1000000" } else { "10000000" },
        ]),
        pin: Some(cpu),
        busy_cpus: 1,
        read: usecs_per_op,
    };
    side_by_side(ctx, &spec, PEER_LIMIT, &["cpu.syscall.getppid"], |ours| {
        figure(ours, "cpu.syscall.getppid", None)
    })
}

/// memcpy bandwidth: perf bench mem memcpy of the same size, the C library's memcpy.
fn memcpy_bandwidth(ctx: &Context, buffer_bytes: u64) -> Comparison {
    let quick = ctx.quick();
    let cpu = ctx.cpus[0];
    let half = ((buffer_bytes / 2) >> 20).max(1);
    let spec = Spec {
        what: "memcpy bandwidth, one CPU",
        ours_name: "memory.bandwidth.memcpy.1cpu",
        unit: Unit::BytesPerS,
        explanation: format!(
            "both copy {half} MiB with the C library's memcpy and count bytes copied per \
             second; ours is the median pass, perf's the mean over its loops"
        ),
        program: "perf",
        args: strings(&[
            "bench",
            "mem",
            "memcpy",
            "-f",
            "default",
            "-s",
            &format!("{half}MB"),
            "-l",
            if quick { "5" } else { "20" },
        ]),
        pin: Some(cpu),
        busy_cpus: 1,
        read: perf_rate,
    };
    side_by_side(
        ctx,
        &spec,
        PEER_LIMIT,
        &["memory.bandwidth.memcpy.1cpu"],
        |ours| figure(ours, "memory.bandwidth.memcpy.1cpu", None),
    )
}

/// Memory read and write bandwidth: sysbench memory, one block about the size of our buffer.
/// sysbench takes only a power of two: the next one up from ours (both above the last cache
/// level; a 48 MiB L3 makes ours 96 MiB in --quick).
fn memory_bandwidth(ctx: &Context, buffer_bytes: u64) -> Vec<Comparison> {
    let quick = ctx.quick();
    let cpu = ctx.cpus[0];
    let mut out = Vec::new();
    let block = (buffer_bytes >> 20).max(1).next_power_of_two();
    let n = ctx.cpus.len();
    for (oper, what, name, all) in [
        (
            "read",
            "memory read bandwidth, one CPU",
            "memory.bandwidth.read.1cpu",
            false,
        ),
        (
            "write",
            "memory write bandwidth, one CPU",
            "memory.bandwidth.write.1cpu",
            false,
        ),
        (
            "read",
            "memory read bandwidth, all CPUs",
            "memory.bandwidth.read.all_cpus",
            true,
        ),
    ] {
        let threads = if all { n } else { 1 };
        let spec = Spec {
            what,
            ours_name: name,
            unit: Unit::BytesPerS,
            explanation: if oper == "read" {
                "both read a buffer above the last cache level sequentially; sysbench loads one \
                 word per loop iteration, ours sums eight independent words per iteration \
                 (vectorised)"
                    .into()
            } else {
                "both write a buffer above the last cache level sequentially; sysbench stores \
                 one word per loop iteration, ours calls memset (wide stores)"
                    .into()
            },
            program: "sysbench",
            args: vec![
                "memory".into(),
                format!("--threads={threads}"),
                format!("--memory-block-size={block}M"),
                format!(
                    "--memory-total-size={}M",
                    block * if quick { 8 } else { 32 }
                ),
                format!("--memory-oper={oper}"),
                "--memory-access-mode=seq".into(),
                "run".into(),
            ],
            pin: (!all).then_some(cpu),
            busy_cpus: threads,
            read: sysbench_rate,
        };
        out.push(side_by_side(ctx, &spec, PEER_LIMIT, &[name], |ours| {
            figure(ours, name, None)
        }));
    }
    out
}

/// Threads: sysbench threads, two threads on one CPU taking turns with sched_yield.
fn thread_yield(ctx: &Context) -> Comparison {
    let quick = ctx.quick();
    let cpu = ctx.cpus[0];
    let spec = Spec {
        what: "yield to another thread, one CPU",
        ours_name: "tasks.switch.thread.same_cpu",
        unit: Unit::Ns,
        explanation: format!(
            "sysbench's two threads on CPU {cpu} take turns by sched_yield (each with a mutex \
             of its own), so each yield is one system call and one switch: compared with our \
             thread switch plus our minimal system call (cpu.syscall.getppid)"
        ),
        program: "sysbench",
        args: strings(&[
            "threads",
            "--threads=2",
            "--thread-yields=100",
            "--thread-locks=2",
            if quick { "--time=1" } else { "--time=3" },
            "run",
        ]),
        pin: Some(cpu),
        busy_cpus: 1,
        read: |t| sysbench_yield_ns(t, 100),
    };
    let again = [
        "tasks.pipe",
        "tasks.switch.thread.same_cpu",
        "cpu.syscall.getppid",
    ];
    side_by_side(ctx, &spec, PEER_LIMIT, &again, |ours| {
        let switch = figure(ours, "tasks.switch.thread.same_cpu", None)?;
        Some(switch + figure(ours, "cpu.syscall.getppid", None)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_outputs_are_read() {
        let pipe = "# Running 'sched/pipe' benchmark:\n# Executed 20000 pipe operations between two processes\n\n     Total time: 0.156 [sec]\n\n       7.841250 usecs/op\n         127530 ops/sec\n";
        assert_eq!(number_before(pipe, "usecs/op"), Some(7.84125));
        let memcpy = "# function 'default' (Default memcpy() provided by glibc)\n# Copying 64MB bytes ...\n\n      12.981955 GB/sec\n";
        assert!((perf_rate(memcpy).unwrap() - 12.981955 * 1073741824.0).abs() < 1.0);
        let sb =
            "Total operations: 8 ( 9.97 per second)\n\n512.00 MiB transferred (10155.46 MiB/sec)\n";
        assert!((sysbench_rate(sb).unwrap() - 10155.46 * 1048576.0).abs() < 1.0);
        let th = "General statistics:\n    total time:                          1.0012s\n    total number of events:              5000\n";
        assert!((sysbench_yield_ns(th, 100).unwrap() - 1.0012e9 / 500000.0).abs() < 1e-6);
    }

    #[test]
    fn a_ratio_outside_two_is_flagged_and_a_waiting_peer_is_scaled() {
        let spec = Spec {
            what: "x",
            ours_name: "cpu.syscall.getppid",
            unit: Unit::Ns,
            explanation: String::new(),
            program: "perf",
            args: Vec::new(),
            pin: None,
            busy_cpus: 1,
            read: usecs_per_op,
        };
        assert_eq!(
            compare(&spec, Ok((100.0, 1.0, Some(100.0))), Some(150.0)).within_factor_2,
            Some(true)
        );
        assert_eq!(
            compare(&spec, Ok((100.0, 1.0, Some(100.0))), Some(250.0)).within_factor_2,
            Some(false)
        );
        let missing = compare(&spec, Err("perf is not available".into()), Some(1.0));
        assert_eq!(missing.ratio, None);
        assert!(missing.missing.unwrap().contains("perf"));
        // A peer that had half its CPU: a time per operation halves, a rate doubles.
        assert_eq!(for_time_ran(Unit::Ns, 600.0, 0.5, 1), Some(300.0));
        assert_eq!(for_time_ran(Unit::BytesPerS, 2e9, 0.5, 1), Some(4e9));
        assert_eq!(for_time_ran(Unit::Ns, 600.0, 0.95, 1), Some(600.0));
        assert_eq!(for_time_ran(Unit::BytesPerS, 2e9, 0.5, 2), None);
        assert_eq!(for_time_ran(Unit::Ns, 600.0, 0.3, 1), Some(180.0));
        assert_eq!(
            for_time_ran(Unit::Ns, 600.0, 0.2, 1),
            None,
            "mostly waiting"
        );
        let c = compare(&spec, Ok((600.0, 0.5, Some(300.0))), Some(280.0));
        assert!(
            c.explanation.contains("50% of its CPU time"),
            "{}",
            c.explanation
        );
        // Seen on an idle Intel VM: perf's pipe round trip printed 3583 ns at a 52% share,
        // ours 4117 ns. 2.20 against the scaled figure, 1.15 against the printed one: the
        // truth lies between, so the two agree; at 9000 ns ours is off either way.
        let c = compare(&spec, Ok((3583.2, 0.52, Some(1871.5))), Some(4117.2));
        assert_eq!(c.within_factor_2, Some(true));
        assert!(c.explanation.contains("ratio 1.15"), "{}", c.explanation);
        let c = compare(&spec, Ok((3583.2, 0.52, Some(1871.5))), Some(9000.0));
        assert_eq!(c.within_factor_2, Some(false));
    }
}
