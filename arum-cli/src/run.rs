//! One measured run: arm the facilities → release the program → reap → collect → report.

use std::time::{Instant, SystemTime};

use crate::cli::RunArgs;
use crate::error::ArumError;
use crate::launch::{self, Executable};
use crate::report::model::{CommandInfo, ExitInfo, Report, SelfTiming, SCHEMA};
use crate::report::{self, sink::Sink};
use crate::{system, usage};

/// Runs the program under measurement and returns arum's exit status (the program's).
pub fn run(args: &RunArgs, started: Instant) -> Result<i32, ArumError> {
    let spec = args.program()?;
    let exe = Executable::new(&spec.argv)?;
    let sink = Sink::open(args.output.as_deref())?;
    let ballast = test_ballast();
    let mut timing = SelfTiming {
        setup_phase1_us: micros(started),
        ..SelfTiming::default()
    };

    let mut tree = usage::TreeWatch::prepare();
    let pending = launch::spawn(&exe, tree.cgroup_fd())?;
    tree.attach(pending.pid(), pending.in_cgroup());
    drop(ballast);

    // Set-up phase 2: event verification and counter configuration, while the child waits.
    let phase2 = Instant::now();
    timing.setup_phase2_us = micros(phase2);

    let start_time = SystemTime::now();
    let running = pending.release()?;
    tree.start();
    let reaped = running.wait()?;

    let post1 = Instant::now();
    timing.post_phase1_us = micros(post1);

    let post2 = Instant::now();
    let mut usage = usage::from_rusage(&reaped.rusage, reaped.wall);
    usage.peak_memory = Some(tree.finish(usage.rusage_maxrss_bytes));
    let exit = reaped.exit;
    let mut report = Report {
        schema: SCHEMA.into(),
        metadata: system::metadata(start_time),
        command: CommandInfo {
            argv: spec.argv,
            how: spec.how,
            launch: spec.line,
        },
        exit: ExitInfo {
            status: exit.status(),
            code: match exit {
                launch::Exit::Code(c) => Some(c),
                launch::Exit::Signal { .. } => None,
            },
            signal: match exit {
                launch::Exit::Signal { signal, .. } => Some(signal),
                launch::Exit::Code(_) => None,
            },
            signal_name: exit.signal_name().map(str::to_string),
            core_dumped: matches!(
                exit,
                launch::Exit::Signal {
                    core_dumped: true,
                    ..
                }
            ),
        },
        usage,
        self_timing: timing,
        warnings: Vec::new(),
    };
    report.self_timing.post_phase2_us = micros(post2);
    let rendered = report::render(&report, args.format, args.self_timing);
    if let Err(e) = sink.write(&rendered) {
        // The report went to stderr instead; the program's status still passes through.
        eprintln!("arum: {e}");
    }
    Ok(exit.status())
}

fn micros(since: Instant) -> u64 {
    since.elapsed().as_micros() as u64
}

/// For the test suite only: `ARUM_TEST_BALLAST_MIB=N` makes arum touch N MiB before it forks,
/// so tests can show that the reported peak of the program does not include arum's own memory.
fn test_ballast() -> Option<Vec<u8>> {
    let mib: usize = std::env::var("ARUM_TEST_BALLAST_MIB").ok()?.parse().ok()?;
    Some(vec![1u8; mib << 20])
}
