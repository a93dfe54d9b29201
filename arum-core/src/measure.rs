//! One measured run: the facilities around the launch, in the order of the run lifecycle (see
//! `facility`), with arum's own phases timed here and nowhere else. `measure_once` parses no
//! arguments and writes no output: it can be called for every run of a series.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::error::ArumError;
use crate::facility::{Armed, Stopped};
use crate::header::{SamplerCost, SelfTiming};
use crate::launch;
use crate::report::model::Report;
use crate::report::sections::{Running, Shared, SECTIONS};
use crate::settings::Settings;
use crate::system;
use crate::tree;
use crate::warnings::Warnings;

/// How long a program must run before watchers of the running program start (`released`): the
/// launch of a shorter program costs no thread and no /proc scan.
pub const GRACE: Duration = Duration::from_millis(2);

/// The facilities the run asks for, in the order of the report's sections: the order they are
/// armed and finished.
fn facilities<'a>(s: &'a Settings) -> Vec<Box<dyn Running + 'a>> {
    let shared = Shared::of(s);
    SECTIONS
        .iter()
        .filter_map(|section| section.start.and_then(|start| start(s, &shared)))
        .collect()
}

/// Runs the program once under every facility and returns the run's report.
pub fn measure_once(settings: &Settings) -> Result<Report, ArumError> {
    let mut warnings = Warnings::new(settings.echo_warnings);
    warnings.extend_quietly(&settings.warnings);
    // What a killed arum left is removed while the child just made gets ready (below, as the
    // machine's description), unless the run reads delay accounting (`--per-task`): the
    // setting a dead arum left on would already hold for the child, so that run cleans first.
    let clean_first = settings.tasks.is_some();
    if clean_first {
        clean_leftovers(&mut warnings);
    }
    let mut facilities = facilities(settings);

    let ballast = test_ballast();
    let unborn = tree::Unborn::prepare(facilities.iter().any(|f| f.lists_the_tree()));
    for f in &mut facilities {
        f.prepare()?;
    }
    debug_assert_single_threaded();
    let pending = launch::spawn(&settings.executable, unborn.cgroup_fd())?;
    drop(ballast);
    let tree = Arc::new(unborn.attach(pending.pid(), pending.in_cgroup()));
    if !clean_first {
        clean_leftovers(&mut warnings);
    }
    // The machine's description is read here, while the child just made gets ready to exec:
    // where the scheduler starts it on another CPU (on a VM whose idle CPUs halt, that CPU
    // must first be woken, tens of µs), the reads fill that wait instead of following the
    // program's exit; where it queues the child on arum's own CPU (as on one CPU, and on some
    // VMs' scheduler topology), the order changes nothing (docs/launch-overhead.md measures
    // both). The program's wall time starts at its release either way.
    let described_at = Instant::now();
    let machine = system::machine();
    let describing_us = micros(described_at);
    // Set-up phase 2: counter configuration (event verification was timed in Settings).
    let armed_at = Instant::now();
    for f in &mut facilities {
        f.arm(&mut Armed {
            pid: pending.pid(),
            tree: &tree,
            warnings: &mut warnings,
        })?;
    }
    let mut timing = SelfTiming {
        setup_phase1_us: settings.timing.phase1_us + describing_us,
        setup_phase2_us: settings.timing.events_us + micros(armed_at),
        ..SelfTiming::default()
    };

    let start_time = SystemTime::now();
    let running = pending.release()?;
    if running.still_running_after(GRACE) {
        for f in &mut facilities {
            f.released();
        }
    }
    let reaped = running.wait()?;

    // Post-processing phase 1, from the reap: restoring arum's signal dispositions, stopping
    // the facilities and collecting their readings.
    let post1 = reaped.reaped_at;
    for f in &mut facilities {
        f.stop(&mut Stopped {
            reaped: &reaped,
            warnings: &mut warnings,
        });
    }
    timing.post_phase1_us = micros(post1);
    timing.samplers = crate::periodic::take_loads()
        .into_iter()
        .map(|(name, l)| SamplerCost {
            name,
            ticks: l.ticks,
            cpu_ns: l.cpu_ns,
            stretched_to_ns: l.stretched_to.map(|d| d.as_nanos() as u64),
            budget_percent: l.budget_percent,
        })
        .collect();

    // Post-processing phase 2: each facility's section, then the report around them.
    let post2 = Instant::now();
    let mut report = Report::new(
        machine.started_at(start_time),
        settings.program.command_info(),
        reaped.exit.info(),
    );
    for f in facilities {
        f.finish(&reaped, &mut report);
    }
    report.warnings = warnings.into_vec();
    report.rank = crate::placement::from_env();
    // The tree's last holder: its group is removed here, within the phase.
    drop(tree);
    timing.post_phase2_us = micros(post2);
    report.self_timing = timing;
    Ok(report)
}

fn clean_leftovers(warnings: &mut Warnings) {
    if let Some(w) = crate::leftovers::warning(&crate::leftovers::clean()) {
        warnings.add(w);
    }
}

fn micros(since: Instant) -> u64 {
    since.elapsed().as_micros() as u64
}

/// The launcher may fork: a facility must not have started a thread before (see `facility`).
/// Checked in debug builds (every test run); a release run does not pay the /proc read.
/// The previous run of a series joined its threads, but the kernel lists a thread until it has
/// finished exiting, which can be a little after the join returns (a test running beside
/// others saw one): such a thread gets 100 ms to go; one a facility started stays.
fn debug_assert_single_threaded() {
    if cfg!(debug_assertions) {
        let others = || -> Vec<std::path::PathBuf> {
            let own = std::process::id().to_string();
            std::fs::read_dir("/proc/self/task")
                .into_iter()
                .flatten()
                .flatten()
                .filter(|t| t.file_name() != own.as_str())
                .map(|t| t.path())
                .collect()
        };
        let deadline = Instant::now() + Duration::from_millis(100);
        let mut threads = others();
        while !threads.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
            threads = others();
        }
        let names: Vec<String> = threads
            .iter()
            .map(|t| std::fs::read_to_string(t.join("comm")).unwrap_or_default())
            .map(|comm| comm.trim().to_string())
            .collect();
        assert!(
            threads.is_empty(),
            "threads besides the main one before the launch: {names:?}; a facility started one in prepare, or did not join it"
        );
    }
}

/// For the test suite only: `ARUM_TEST_BALLAST_MIB=N` makes arum touch N MiB before it forks,
/// so tests can show that the reported peak of the program does not include arum's own memory.
fn test_ballast() -> Option<Vec<u8>> {
    let mib: usize = std::env::var("ARUM_TEST_BALLAST_MIB").ok()?.parse().ok()?;
    Some(vec![1u8; mib << 20])
}
