//! One measured run: arm the facilities → release the program → reap → collect → report.

use std::time::{Instant, SystemTime};

use crate::cli::{BackendChoice, RunArgs, Scope};
use crate::counters::{self, IntervalSampler};
use crate::error::ArumError;
use crate::launch::{self, Executable};
use crate::report::model::{CommandInfo, ExitInfo, Report, SelfTiming, SCHEMA};
use crate::report::{self, sink::Sink};
use crate::{events, system, usage};

/// Runs the program under measurement and returns arum's exit status (the program's).
pub fn run(args: &RunArgs, started: Instant) -> Result<i32, ArumError> {
    let spec = args.program()?;
    let exe = Executable::new(&spec.argv)?;
    let sink = Sink::open(args.output.as_deref())?;
    let ambient_interval = args
        .ambient
        .as_deref()
        .map(crate::ambient::parse_interval)
        .transpose()
        .map_err(ArumError::Events)?;
    let ballast = test_ballast();
    let mut warnings = Warnings::default();
    let mut timing = SelfTiming {
        setup_phase1_us: micros(started),
        ..SelfTiming::default()
    };

    // Set-up phase 2: event verification here, counter configuration while the child waits.
    let phase2 = Instant::now();
    let plan = events::plan(args)?;
    if let Some(reason) = plan.as_ref().and_then(|p| p.hardware_off.as_ref()) {
        warnings.add(format!("hardware counting is off: {reason}"));
    }
    let request = match &plan {
        Some(_) => Some(counter_request(args, &mut warnings)?),
        None => None,
    };
    let mut phase2_us = micros(phase2);

    let mut tree = usage::TreeWatch::prepare();
    let pending = launch::spawn(&exe, tree.cgroup_fd())?;
    tree.attach(pending.pid(), pending.in_cgroup());
    drop(ballast);

    let arming = Instant::now();
    let armed = match (&plan, &request) {
        (Some(p), Some(r)) => Some(counters::arm(p, r, pending.pid())?),
        _ => None,
    };
    if let Some(a) = &armed {
        for e in &a.events {
            if let Some(why) = &e.error {
                warnings.add(format!("{} not counted: {why}", e.planned.event.name));
            }
        }
        a.backend.start()?;
    }
    phase2_us += micros(arming);
    timing.setup_phase2_us = phase2_us;

    let start_time = SystemTime::now();
    let ambient = ambient_interval
        .map(|i| crate::ambient::Sampler::start(i, tree.procs_file(), pending.pid().as_raw()));
    let running = pending.release()?;
    tree.start();
    // The module takes its own readings; perf_event_open counters are read from here.
    let sampler = match (&armed, args.interval) {
        (Some(a), Some(ms)) if a.name != "kmod" => Some(IntervalSampler::start(
            a.backend.clone(),
            ms,
            a.events
                .iter()
                .map(|e| e.planned.event.name.clone())
                .collect(),
            args.format == crate::cli::ReportFormat::Text,
        )),
        _ => None,
    };
    let reaped = running.wait()?;

    // Post-processing phase 1: reading the counters.
    let post1 = Instant::now();
    let counters_report = match (&armed, &plan, &request) {
        (Some(a), Some(p), Some(r)) => {
            a.backend.stop();
            let finals = a.backend.read_all();
            let intervals = match (sampler, args.interval) {
                (Some(s), _) => Some(s.finish(&finals)),
                (None, Some(ms)) => a.backend.intervals().map(|v| (ms, v)),
                (None, None) => None,
            };
            Some(counters::report(a, p, r, &finals, intervals))
        }
        _ => None,
    };
    timing.post_phase1_us = micros(post1);

    let post2 = Instant::now();
    let mut usage = usage::from_rusage(&reaped.rusage, reaped.wall);
    let ambient_report = match (ambient, ambient_interval) {
        (Some(sampler), Some(interval)) => sampler.finish().map(|capture| {
            crate::ambient::analyse(capture, interval, usage.user_ns + usage.system_ns)
        }),
        _ => None,
    };
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
        exit: ExitInfo::from(exit),
        usage,
        counters: counters_report,
        ambient: ambient_report,
        self_timing: timing,
        warnings: warnings.0,
    };
    report.self_timing.post_phase2_us = micros(post2);
    let rendered = report::render(&report, args.format, args.self_timing);
    if let Err(e) = sink.write(&rendered) {
        // The report went to stderr instead; the program's status still passes through.
        eprintln!("arum: {e}");
    }
    Ok(exit.status())
}

/// Warnings, printed when they arise and kept for the report.
#[derive(Default)]
struct Warnings(Vec<String>);

impl Warnings {
    fn add(&mut self, line: String) {
        eprintln!("arum: warning: {line}");
        self.0.push(line);
    }
}

/// Where and how to count, from the command line.
fn counter_request(
    args: &RunArgs,
    warnings: &mut Warnings,
) -> Result<counters::Request, ArumError> {
    let online = system::cpulist::online().unwrap_or_default();
    let cpus = match &args.cpus {
        None => online,
        Some(list) => {
            let wanted = system::cpulist::parse(list)
                .map_err(|why| ArumError::Events(format!("bad -C/--cpus {list:?}: {why}")))?;
            if let Some(bad) = wanted.iter().find(|c| !online.contains(c)) {
                return Err(ArumError::Events(format!(
                    "CPU {bad} in -C/--cpus is not online; online CPUs: {}",
                    online
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                )));
            }
            wanted
        }
    };
    let kmod = match args.backend {
        BackendChoice::Perf => false,
        BackendChoice::Kmod => true,
        // The module counts whole CPUs: it serves system scope, never app scope.
        BackendChoice::Auto => args.scope() == Scope::System && kmod_usable(),
    };
    if kmod && args.scope() == Scope::App {
        warnings.add(
            "the kmod back-end counts everything on the CPUs (system scope), not only the program"
                .into(),
        );
    }
    Ok(counters::Request {
        scope: if kmod { Scope::System } else { args.scope() },
        cpus,
        no_multiplex: args.no_multiplex,
        strict: args.strict,
        kmod,
        interval_ms: args.interval,
    })
}

/// /dev/arum exists and this user may open it (the open is closed again at once).
fn kmod_usable() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(counters::kmod::DEVICE)
        .is_ok()
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
