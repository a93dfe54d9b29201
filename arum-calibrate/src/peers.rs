//! Peers side by side (`--peers`): perf bench (Debian's linux-perf) and sysbench measure some of
//! the same costs. Each peer runs, and the matching measurement of ours is taken again right
//! after it, so both see the same machine; the output gives the ratio, whether it is within a
//! factor of 2, and how the two methods differ.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::model::{Measurement, Unit};
use crate::suite::{self, Context, Sink};
use crate::sys::cpu::Pinned;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// What is compared, e.g. "context switch round trip, processes, one CPU".
    pub what: String,
    /// Our measurement and figure (in `unit`).
    pub ours_name: String,
    pub ours: Option<f64>,
    /// The peer's command line and figure (in `unit`).
    pub peer_command: String,
    pub peer: Option<f64>,
    pub unit: Unit,
    /// Ours over the peer's.
    pub ratio: Option<f64>,
    pub within_factor_2: Option<bool>,
    /// How the two methods differ, and so what the ratio should be.
    pub explanation: String,
    /// Why there is no figure, if there is none.
    pub missing: Option<String>,
}

/// Output of a peer run within `limit`, or why not.
fn run_peer(program: &str, args: &[&str], limit: Duration) -> Result<String, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{program} is not available ({e})"))?;
    let end = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut out = String::new();
                let mut err = String::new();
                if let Some(mut o) = child.stdout.take() {
                    let _ = o.read_to_string(&mut out);
                }
                if let Some(mut e) = child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                return if status.success() {
                    Ok(out + &err)
                } else {
                    Err(format!("{program} failed ({status}): {}", err.trim()))
                };
            }
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{program} did not finish within {} s",
                    limit.as_secs()
                ));
            }
        }
    }
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
    for g in suite::groups() {
        if g.entries.iter().any(|e| names.contains(&e.name)) {
            (g.run)(&mut sub, &mut sink);
        }
    }
    sink.measurements
}

fn figure(ms: &[Measurement], name: &str, detail: Option<&str>) -> Option<f64> {
    let m = ms.iter().find(|m| m.name == name)?;
    match detail {
        Some(d) => m.details.get(d).copied(),
        None => m.median(),
    }
}

struct Pending {
    what: &'static str,
    ours_name: &'static str,
    unit: Unit,
    explanation: String,
    command: Vec<String>,
}

fn compare(p: Pending, peer: Result<Option<f64>, String>, ours: Option<f64>) -> Comparison {
    let (peer, mut missing) = match peer {
        Ok(Some(v)) => (Some(v), None),
        Ok(None) => (
            None,
            Some("could not read the peer's figure from its output".to_string()),
        ),
        Err(e) => (None, Some(e)),
    };
    if ours.is_none() && missing.is_none() {
        missing = Some(format!("{} was not measured", p.ours_name));
    }
    let ratio = ours.zip(peer).filter(|(_, b)| *b > 0.0).map(|(a, b)| a / b);
    Comparison {
        what: p.what.into(),
        ours_name: p.ours_name.into(),
        ours,
        peer_command: p.command.join(" "),
        peer,
        unit: p.unit,
        ratio,
        within_factor_2: ratio.map(|r| (0.5..=2.0).contains(&r)),
        explanation: p.explanation,
        missing,
    }
}

/// Runs every comparison; `llc_buffer` is the bandwidth buffer size our suite used.
pub fn run(ctx: &mut Context, buffer_bytes: u64) -> Vec<Comparison> {
    let quick = ctx.quick();
    let limit = Duration::from_secs(120);
    let cpu = ctx.cpus[0];
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut out = Vec::new();

    // Context switches: perf bench sched pipe, both ends on one CPU as ours.
    let loops = if quick { "20000" } else { "100000" };
    for (threads, what, name) in [
        (
            false,
            "pipe ping-pong round trip, processes, one CPU",
            "tasks.switch.process.same_cpu",
        ),
        (
            true,
            "pipe ping-pong round trip, threads, one CPU",
            "tasks.switch.thread.same_cpu",
        ),
    ] {
        let mut args = vec!["bench", "sched", "pipe", "-l", loops];
        if threads {
            args.push("-T");
        }
        let peer = {
            let _pin = Pinned::to(&[cpu]);
            run_peer("perf", &args, limit).map(|t| number_before(&t, "usecs/op").map(|us| us * 1e3))
        };
        let ours = ours_again(ctx, &["tasks.pipe", name]);
        out.push(compare(
            Pending {
                what,
                ours_name: name,
                unit: Unit::Ns,
                explanation: format!(
                    "both time a round trip of two tasks over two pipes (2 switches, 2 writes, 2 \
                     reads), both pinned to CPU {cpu}; ours is the median round trip \
                     (details.round_trip_ns), perf's the mean of {loops}"
                ),
                command: [vec![format!("taskset -c {cpu}"), "perf".into()], s(&args)].concat(),
            },
            peer,
            figure(&ours, name, Some("round_trip_ns")),
        ));
    }

    // System call: perf bench syscall basic (a getppid loop).
    let args = [
        "bench",
        "syscall",
        "basic",
        "-l",
        if quick { "1000000" } else { "10000000" },
    ];
    let peer =
        run_peer("perf", &args, limit).map(|t| number_before(&t, "usecs/op").map(|us| us * 1e3));
    let ours = ours_again(ctx, &["cpu.syscall.getppid"]);
    out.push(compare(
        Pending {
            what: "minimal system call (getppid)",
            ours_name: "cpu.syscall.getppid",
            unit: Unit::Ns,
            explanation:
                "both call getppid(2) in a loop; ours is the median of batches of 10 with the \
                          timer and loop costs subtracted, perf's the mean of the whole loop"
                    .into(),
            command: [vec!["perf".to_string()], s(&args)].concat(),
        },
        peer,
        figure(&ours, "cpu.syscall.getppid", None),
    ));

    // memcpy bandwidth: perf bench mem memcpy of the same size, the C library's memcpy.
    let half = (buffer_bytes / 2 >> 20).max(1);
    let size = format!("{half}MB");
    let args = [
        "bench",
        "mem",
        "memcpy",
        "-f",
        "default",
        "-s",
        &size,
        "-l",
        if quick { "3" } else { "10" },
    ];
    let peer = {
        let _pin = Pinned::to(&[cpu]);
        run_peer("perf", &args, limit).map(|t| perf_rate(&t))
    };
    let ours = ours_again(ctx, &["memory.bandwidth.memcpy.1cpu"]);
    out.push(compare(
        Pending {
            what: "memcpy bandwidth, one CPU",
            ours_name: "memory.bandwidth.memcpy.1cpu",
            unit: Unit::BytesPerS,
            explanation: format!(
                "both copy {half} MiB with the C library's memcpy and count bytes copied per \
                 second; ours is the median pass, perf's the mean over its loops"
            ),
            command: [vec![format!("taskset -c {cpu}"), "perf".into()], s(&args)].concat(),
        },
        peer,
        figure(&ours, "memory.bandwidth.memcpy.1cpu", None),
    ));

    // Memory read and write bandwidth: sysbench memory, one block the size of our buffer.
    let block = format!("{}M", buffer_bytes >> 20);
    let total = format!("{}M", (buffer_bytes >> 20) * if quick { 8 } else { 32 });
    let threads = ctx.cpus.len().to_string();
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
        let block_arg = format!("--memory-block-size={block}");
        let total_arg = format!("--memory-total-size={total}");
        let oper_arg = format!("--memory-oper={oper}");
        let threads_arg = format!("--threads={}", if all { threads.as_str() } else { "1" });
        let args = [
            "memory",
            threads_arg.as_str(),
            &block_arg,
            &total_arg,
            &oper_arg,
            "--memory-access-mode=seq",
            "run",
        ];
        let peer = if all {
            run_peer("sysbench", &args, limit).map(|t| sysbench_rate(&t))
        } else {
            let _pin = Pinned::to(&[cpu]);
            run_peer("sysbench", &args, limit).map(|t| sysbench_rate(&t))
        };
        let ours = ours_again(ctx, &[name]);
        out.push(compare(
            Pending {
                what,
                ours_name: name,
                unit: Unit::BytesPerS,
                explanation: match oper {
                    "read" => {
                        "both read a buffer above the last cache level sequentially; sysbench \
                               loads one word per loop iteration into a volatile, ours sums eight \
                               independent words per iteration (vectorised), so ours can issue \
                               loads faster when one core cannot saturate memory"
                            .into()
                    }
                    _ => "both write a buffer above the last cache level sequentially; sysbench \
                          stores one word per loop iteration, ours calls memset (wide stores, and \
                          non-temporal ones for large buffers)"
                        .into(),
                },
                command: [vec!["sysbench".to_string()], s(&args)].concat(),
            },
            peer,
            figure(&ours, name, None),
        ));
    }

    // Threads: sysbench threads, two threads on one CPU taking turns with sched_yield.
    let yields = 100u64;
    let time = if quick { "1" } else { "3" };
    let args = [
        "threads",
        "--threads=2",
        "--thread-yields=100",
        "--thread-locks=2",
        &format!("--time={time}"),
        "run",
    ]
    .map(str::to_string);
    let peer = {
        let _pin = Pinned::to(&[cpu]);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        run_peer("sysbench", &a, limit).map(|t| sysbench_yield_ns(&t, yields))
    };
    let ours = ours_again(
        ctx,
        &[
            "tasks.pipe",
            "tasks.switch.thread.same_cpu",
            "cpu.syscall.getppid",
        ],
    );
    let ours_yield = figure(&ours, "tasks.switch.thread.same_cpu", None)
        .zip(figure(&ours, "cpu.syscall.getppid", None))
        .map(|(sw, sc)| sw + sc);
    out.push(compare(
        Pending {
            what: "switch between two threads on one CPU",
            ours_name: "tasks.switch.thread.same_cpu",
            unit: Unit::Ns,
            explanation: format!(
                "sysbench's two threads on CPU {cpu} take turns by sched_yield (each with a mutex \
                 of its own), so each yield is one system call and one switch: compared with our \
                 thread switch plus our minimal system call (cpu.syscall.getppid)"
            ),
            command: [
                vec![format!("taskset -c {cpu}"), "sysbench".into()],
                args.to_vec(),
            ]
            .concat(),
        },
        peer,
        ours_yield,
    ));
    ctx.end_progress();
    out
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
    fn a_ratio_outside_two_is_flagged() {
        let p = || Pending {
            what: "x",
            ours_name: "cpu.syscall.getppid",
            unit: Unit::Ns,
            explanation: String::new(),
            command: vec!["perf".into()],
        };
        assert_eq!(
            compare(p(), Ok(Some(100.0)), Some(150.0)).within_factor_2,
            Some(true)
        );
        assert_eq!(
            compare(p(), Ok(Some(100.0)), Some(250.0)).within_factor_2,
            Some(false)
        );
        let missing = compare(p(), Err("perf is not available".into()), Some(1.0));
        assert_eq!(missing.ratio, None);
        assert!(missing.missing.unwrap().contains("perf"));
    }
}
