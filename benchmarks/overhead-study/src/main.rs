//! The original ARUM paper's overhead study, regenerated for arum and `perf stat` side by side,
//! in the same run on the same machine:
//!
//! - Table 1, set-up costs for 0-4 events: arum's own phases 1 and 2 (its self-timing) and, for
//!   both tools, the set-up seen from outside (tool started → program started, less what a bare
//!   launch takes);
//! - Table 2, post-processing costs: arum's phases 1 and 2, and for both tools the time from the
//!   program's end to the tool's exit, less a bare launch's;
//! - Table 3, a pointer-chasing benchmark (pchase, 2 threads) timed by itself, without a tool and
//!   under each tool with 0-4 events, trials interleaved (so drift in the machine reaches every
//!   configuration alike), with confidence intervals and Welch's t-test against the run without.
//!
//! Each trial of Tables 1 and 2 is a separate invocation of the tool, as in the paper (arum's
//! own series, `arum -r`, parses its command line once, so its phase 1 would not vary).
//! Usage: `cargo run --release -p overhead-study -- --out docs/overhead.md` (see --help).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::Parser;

mod tables;

#[derive(Debug, Parser)]
#[command(about = "The original ARUM overhead study (Tables 1-3) for arum and perf stat")]
struct Args {
    /// The arum binary to study (a release build measures what users run).
    #[arg(long, default_value = "target/x86_64-unknown-linux-gnu/release/arum")]
    arum: PathBuf,
    /// Trials of each configuration for Table 3 (the paper: 15).
    #[arg(long, default_value_t = 15)]
    trials: usize,
    /// Trials of each configuration for Tables 1 and 2 (the paper: 10).
    #[arg(long, default_value_t = 10)]
    setup_trials: usize,
    /// Confidence level of intervals and tests (the paper: 90%).
    #[arg(long, default_value_t = 0.9)]
    confidence: f64,
    /// pchase: threads, MiB per thread, loads per thread.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    #[arg(long, default_value_t = 32)]
    mib: usize,
    #[arg(long, default_value_t = 4_000_000)]
    steps: u64,
    /// Seed of the order of configurations in each round (default: a random one, printed in
    /// the tables so that a run can be repeated in the same order).
    #[arg(long)]
    seed: Option<u64>,
    /// Write the Markdown here (default: stdout).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Who runs the program.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tool {
    Bare,
    Arum,
    Perf,
}

#[derive(Debug, Clone)]
struct Config {
    tool: Tool,
    /// Events counted (0-4).
    k: usize,
}

/// The events for k = 1..4: counters where the machine has a PMU, else software events, which
/// both tools count through the same kernel interface.
struct Events {
    hardware: bool,
    arum: [&'static str; 4],
    perf: [&'static str; 4],
}

fn events() -> Events {
    let probe = Command::new("perf")
        .args(["stat", "-x,", "-e", "cycles", "true"])
        .stdout(Stdio::null())
        .output();
    let hardware = probe
        .is_ok_and(|o| o.status.success() && !String::from_utf8_lossy(&o.stderr).contains("<not"));
    if hardware {
        Events {
            hardware,
            arum: ["cycles", "instructions", "branches", "branch_misses"],
            perf: ["cycles", "instructions", "branches", "branch-misses"],
        }
    } else {
        let sw = [
            "task-clock",
            "page-faults",
            "context-switches",
            "cpu-migrations",
        ];
        Events {
            hardware,
            arum: sw,
            perf: sw,
        }
    }
}

fn monotonic_ns() -> f64 {
    let ts = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .expect("CLOCK_MONOTONIC is always available on Linux");
    ts.tv_sec() as f64 * 1e9 + ts.tv_nsec() as f64
}

/// The command that runs `program` under `config`'s tool, its report going to `report`.
fn command(args: &Args, ev: &Events, c: &Config, report: &Path, program: &[String]) -> Command {
    let mut cmd = match c.tool {
        Tool::Bare => Command::new(&program[0]),
        Tool::Arum => {
            let mut cmd = Command::new(&args.arum);
            cmd.args(["--format", "json", "-o"]).arg(report);
            if c.k > 0 {
                cmd.arg("-e").arg(ev.arum[..c.k].join(","));
            }
            cmd.arg("--").arg(&program[0]);
            cmd
        }
        Tool::Perf => {
            let mut cmd = Command::new("perf");
            cmd.args(["stat", "-x,", "-o"]).arg(report);
            // Zero counters: perf's own timing (duration_time) only, no kernel counter.
            let list = if c.k == 0 {
                "duration_time".to_string()
            } else {
                ev.perf[..c.k].join(",")
            };
            cmd.args(["-e", &list, "--"]).arg(&program[0]);
            cmd
        }
    };
    cmd.args(&program[1..])
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Runs `cmd` and returns (start, its stdout, end) on the monotonic clock.
fn timed(mut cmd: Command) -> (f64, String, f64) {
    let start = monotonic_ns();
    let out = cmd.output().expect("the tool runs");
    let end = monotonic_ns();
    assert!(out.status.success(), "{cmd:?} failed with {:?}", out.status);
    (
        start,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        end,
    )
}

/// One trial of Tables 1 and 2 for a configuration.
#[derive(Debug, Default, Clone)]
struct SetupTrial {
    /// Tool started → program started (ns).
    outside_setup: f64,
    /// Program ended → tool exited (ns).
    outside_post: f64,
    /// arum's self-timing (µs): set-up phases 1, 2; post-processing phases 1, 2.
    phases: Option<[f64; 4]>,
}

fn setup_trial(args: &Args, ev: &Events, c: &Config, dir: &Path, stamp: &str) -> SetupTrial {
    let report = dir.join("report");
    let (t0, out, t1) = timed(command(args, ev, c, &report, &[stamp.to_string()]));
    let mut words = out
        .split_whitespace()
        .map(|w| w.parse::<f64>().expect("stamp prints ns"));
    let (start, end) = (words.next().unwrap(), words.next().unwrap());
    let phases = (c.tool == Tool::Arum).then(|| {
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        let t = &r["self_timing"];
        let f = |k: &str| t[k].as_f64().unwrap();
        [
            f("setup_phase1_us"),
            f("setup_phase2_us"),
            f("post_phase1_us"),
            f("post_phase2_us"),
        ]
    });
    SetupTrial {
        outside_setup: start - t0,
        outside_post: t1 - end,
        phases,
    }
}

fn sibling(name: &str) -> String {
    let exe = std::env::current_exe().expect("own path");
    exe.with_file_name(name).to_string_lossy().into_owned()
}

fn configs() -> Vec<Config> {
    let mut all = vec![Config {
        tool: Tool::Bare,
        k: 0,
    }];
    for tool in [Tool::Arum, Tool::Perf] {
        all.extend((0..=4).map(|k| Config { tool, k }));
    }
    all
}

fn version(cmd: &str, arg: &str) -> String {
    Command::new(cmd)
        .arg(arg)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn main() {
    let args = Args::parse();
    assert!(
        args.arum.exists(),
        "{} is missing: build it with `cargo build --release -p arum`, or give --arum PATH",
        args.arum.display()
    );
    let ev = events();
    let dir = tempfile::Builder::new()
        .prefix("arum-overhead-study-")
        .tempdir()
        .expect("a scratch directory for the tools' reports");
    let (stamp, pchase) = (sibling("stamp"), sibling("pchase"));
    let configs = configs();
    let load_before = loadavg();

    // Every round runs each configuration once, in an order shuffled anew for each round: in a
    // fixed order, a configuration would always follow the same one (warm caches, a page cache
    // just filled) and drift within a round would fall on the same configurations.
    let seed = args.seed.unwrap_or_else(|| fastrand::u64(..));
    let mut rng = fastrand::Rng::with_seed(seed);

    // Tables 1 and 2: one warm-up round first.
    let mut setup: Vec<Vec<SetupTrial>> = vec![Vec::new(); configs.len()];
    for (trial, order) in rounds(&mut rng, configs.len(), args.setup_trials + 1)
        .into_iter()
        .enumerate()
    {
        for i in order {
            let t = setup_trial(&args, &ev, &configs[i], dir.path(), &stamp);
            if trial > 0 {
                setup[i].push(t);
            }
        }
    }

    // Table 3: pchase timed by itself in every configuration, interleaved.
    let program: Vec<String> = vec![
        pchase,
        args.threads.to_string(),
        args.mib.to_string(),
        args.steps.to_string(),
    ];
    let mut chase: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    for order in rounds(&mut rng, configs.len(), args.trials) {
        for i in order {
            let report = dir.path().join("report");
            let (_, out, _) = timed(command(&args, &ev, &configs[i], &report, &program));
            let ns: f64 = out.trim().parse().expect("pchase prints its elapsed ns");
            chase[i].push(ns / 1e9);
        }
    }

    let facts = tables::Facts {
        command: std::env::args()
            .map(|a| shell_quote(&a))
            .collect::<Vec<_>>()
            .join(" "),
        arum_version: version(args.arum.to_str().unwrap_or("arum"), "--version"),
        perf_version: version("perf", "--version"),
        cpu: cpu_model(),
        kernel: version("uname", "-r"),
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_before,
        load_after: loadavg(),
        hardware: ev.hardware,
        events_arum: ev.arum.join(", "),
        events_perf: ev.perf.join(", "),
        trials: args.trials,
        setup_trials: args.setup_trials,
        level: args.confidence,
        seed,
        pchase: format!(
            "{} threads, {} MiB each, {} loads each",
            args.threads, args.mib, args.steps
        ),
    };
    let md = tables::render(&facts, &configs_view(&configs), &setup_view(&setup), &chase);
    match &args.out {
        Some(p) => std::fs::write(p, md).expect("writing the tables"),
        None => print!("{md}"),
    }
}

/// The order of `n` configurations in each of `count` rounds: each a permutation, shuffled anew.
fn rounds(rng: &mut fastrand::Rng, n: usize, count: usize) -> Vec<Vec<usize>> {
    (0..count)
        .map(|_| {
            let mut order: Vec<usize> = (0..n).collect();
            rng.shuffle(&mut order);
            order
        })
        .collect()
}

fn configs_view(c: &[Config]) -> Vec<(tables::Who, usize)> {
    c.iter()
        .map(|c| {
            (
                match c.tool {
                    Tool::Bare => tables::Who::Bare,
                    Tool::Arum => tables::Who::Arum,
                    Tool::Perf => tables::Who::Perf,
                },
                c.k,
            )
        })
        .collect()
}

fn setup_view(s: &[Vec<SetupTrial>]) -> Vec<tables::SetupSamples> {
    s.iter()
        .map(|trials| tables::SetupSamples {
            outside_setup_us: trials.iter().map(|t| t.outside_setup / 1e3).collect(),
            outside_post_us: trials.iter().map(|t| t.outside_post / 1e3).collect(),
            phases_us: (0..4)
                .map(|p| {
                    trials
                        .iter()
                        .filter_map(|t| t.phases.map(|x| x[p]))
                        .collect()
                })
                .collect(),
        })
        .collect()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=:".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Every round runs each configuration once; the orders vary between rounds (15 rounds of 15
    // configurations: all alike has probability (1/15!)^14), and a seed repeats them.
    #[test]
    fn each_round_is_a_permutation_in_its_own_order() {
        let mut rng = fastrand::Rng::with_seed(7);
        let r = rounds(&mut rng, 15, 15);
        for order in &r {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..15).collect::<Vec<_>>());
        }
        assert!(r.windows(2).any(|w| w[0] != w[1]));
        assert!(r.iter().any(|o| o[0] != r[0][0]));
        assert_eq!(rounds(&mut fastrand::Rng::with_seed(7), 15, 15), r);
    }
}
