//! A scripted back-end for tests of the counters facility's orchestration: what is started,
//! read, stopped and reported, without a kernel.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arum_events::cpu::CpuIdent;
use arum_events::plan::{self, Plan};
use nix::unistd::Pid;

use super::backend::{Backend, EventSetup, Opened, Snapshot};
use super::opening::{Grouping, Multiplexing, Opening};
use super::{Counters, Request, Settings};
use crate::error::ArumError;
use crate::facilities::counters::model::{BackendKind, EventStatus, Scope};
use crate::facility::{Armed, Facility, Stopped};
use crate::header::{CommandInfo, LaunchHow};
use crate::launch::{Exit, Reaped};
use crate::perf::sys::Reading;
use crate::report::model::Report;
use crate::tree::Tree;
use crate::warnings::Warnings;

/// What the fake does; one per test, set through `SCRIPT` (the opener is a plain fn).
#[derive(Default, Clone)]
struct Script {
    start_failures: Vec<(usize, String)>,
    stop_error: Option<String>,
    own_readings: Option<Vec<Snapshot>>,
}

struct Fake {
    script: Script,
    reads: AtomicU64,
    ncpus: usize,
    nevents: usize,
}

impl Backend for Fake {
    fn start(&self) -> Result<Vec<(usize, String)>, ArumError> {
        Ok(self.script.start_failures.clone())
    }
    /// Each read returns 10 × (reads so far) on every event and CPU: a counter that advances.
    fn read(&self) -> Vec<Vec<Option<Reading>>> {
        let n = self.reads.fetch_add(1, Ordering::SeqCst) + 1;
        let r = Reading {
            value: 10 * n,
            enabled_ns: 1000,
            running_ns: 1000,
        };
        vec![vec![Some(r); self.ncpus]; self.nevents]
    }
    fn stop(&self) -> Result<(), String> {
        self.script.stop_error.clone().map_or(Ok(()), Err)
    }
    fn reference(&self) -> Option<Vec<Reading>> {
        None
    }
    fn takes_own_readings(&self) -> bool {
        self.script.own_readings.is_some()
    }
    fn own_readings(&self) -> Vec<Snapshot> {
        self.script.own_readings.clone().unwrap_or_default()
    }
}

static SCRIPT: Mutex<Option<Script>> = Mutex::new(None);
static LAST: Mutex<Option<Arc<Fake>>> = Mutex::new(None);
/// Tests share SCRIPT/LAST: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());
/// How long the last lifecycle's program "ran" (the sleep may overrun on a busy machine).
static RAN_FOR: Mutex<Duration> = Mutex::new(Duration::ZERO);

fn open_fake(plan: &Plan, req: &Request, _pid: Pid) -> Result<Opened, ArumError> {
    let fake = Arc::new(Fake {
        script: SCRIPT.lock().unwrap().clone().unwrap_or_default(),
        reads: AtomicU64::new(0),
        ncpus: req.cpus.len(),
        nevents: plan.events.len(),
    });
    *LAST.lock().unwrap() = Some(fake.clone());
    Ok(Opened {
        backend: fake,
        events: EventSetup::from_plan(plan),
        user_only_reason: None,
        opening: Opening {
            grouping: Grouping::PerCpuGroups,
            multiplexing: Multiplexing::EnabledVsRunning,
            scope: req.scope,
            per_cpu: true,
        },
    })
}

fn settings(interval_ms: Option<u64>, strict: bool) -> Settings {
    let cpu = CpuIdent {
        vendor: "GenuineIntel".into(),
        family: 6,
        model: 0x55,
        stepping: 4,
        model_name: String::new(),
    };
    let specs = ["task-clock".to_string(), "page-faults".to_string()];
    Settings {
        plan: plan::plan(&specs, &cpu, None, None),
        facts: Default::default(),
        request: Request {
            scope: Scope::App,
            cpus: vec![0, 1],
            breakdown: crate::facilities::counters::model::Breakdown::PerCpu,
            no_multiplex: false,
            strict,
            backend: BackendKind::PerfEventOpen,
            interval_ms,
            print_intervals: false,
        },
        left_out: Vec::new(),
    }
}

/// Runs the facility's lifecycle around a program that runs for `runs_for`.
fn lifecycle(
    settings: &Settings,
    script: Script,
    runs_for: Duration,
) -> (Result<Report, ArumError>, Warnings, u64) {
    *SCRIPT.lock().unwrap() = Some(script);
    let mut facility = Box::new(Counters {
        open: open_fake,
        ..Counters::new(settings)
    });
    let tree = Arc::new(Tree::detached(Pid::this()));
    let mut warnings = Warnings::default();
    let armed = facility.arm(&mut Armed {
        pid: Pid::this(),
        tree: &tree,
        warnings: &mut warnings,
    });
    let fake = LAST.lock().unwrap().take().expect("opened");
    if let Err(e) = armed {
        return (Err(e), warnings, fake.reads.load(Ordering::SeqCst));
    }
    facility.released();
    let started = std::time::Instant::now();
    std::thread::sleep(runs_for);
    // A sampler starved by a busy machine may not have read yet: the "program" runs on (up to
    // 5 s) until it has, so the test sees readings taken while it ran.
    while runs_for > Duration::from_millis(20)
        && fake.reads.load(Ordering::SeqCst) < 2
        && started.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    *RAN_FOR.lock().unwrap() = started.elapsed();
    let reaped = Reaped {
        exit: Exit::Code(0),
        wall: runs_for,
        released_at: std::time::Duration::ZERO,
        reaped_at: std::time::Instant::now(),
        // SAFETY: rusage is plain old data (integers and timevals); all-zero is a valid value
        // of every field.
        rusage: unsafe { std::mem::zeroed() },
        pre_exec_maxrss_bytes: 0,
    };
    facility.stop(&mut Stopped {
        reaped: &reaped,
        warnings: &mut warnings,
    });
    let command = CommandInfo {
        argv: vec!["true".into()],
        how: LaunchHow::Argv,
        launch: None,
    };
    let mut report = Report::new(
        crate::system::metadata(std::time::SystemTime::now()),
        command,
        reaped.exit.info(),
    );
    report.counters = facility.finish(&reaped);
    (Ok(report), warnings, fake.reads.load(Ordering::SeqCst))
}

#[test]
fn events_that_fail_to_start_are_reported_and_strict_refuses_them() {
    let _one = SERIAL.lock().unwrap();
    let script = Script {
        start_failures: vec![(1, "the module refused it".into())],
        ..Script::default()
    };
    let (report, warnings, _) = lifecycle(&settings(None, false), script.clone(), Duration::ZERO);
    let c = report.unwrap().counters.expect("a counters section");
    assert_eq!(c.events[0].status, EventStatus::Counted);
    assert_eq!(c.events[1].status, EventStatus::NotSupported);
    assert_eq!(c.events[1].reason.as_deref(), Some("the module refused it"));
    // Said in the event's own line, not repeated among the warnings.
    assert!(warnings.lines().is_empty(), "{:?}", warnings.lines());

    let (report, _, _) = lifecycle(&settings(None, true), script, Duration::ZERO);
    assert!(matches!(
        report,
        Err(ArumError::NotCounted { ref event, .. }) if event == "page-faults"
    ));
}

#[test]
fn interval_readings_are_taken_while_the_program_runs_and_end_with_the_final_one() {
    let _one = SERIAL.lock().unwrap();
    let (report, _, reads) = lifecycle(
        &settings(Some(10), false),
        Script::default(),
        Duration::from_millis(65),
    );
    let c = report.unwrap().counters.unwrap();
    assert_eq!(c.interval_ms, Some(10));
    // At most one reading per 10 ms while it ran (a starved sampler skips some), plus the final.
    let ran = RAN_FOR.lock().unwrap().as_millis() as u64;
    assert_eq!(c.intervals.len() as u64, reads);
    assert!(
        reads >= 2 && reads <= ran / 10 + 2,
        "{reads} reads in {ran} ms"
    );
    // Every interval of an advancing counter adds 10 (10 × reads, differenced).
    assert!(c.intervals.iter().all(|i| i.counts[0] == [10, 10]));
    assert_eq!(c.events[0].total_raw, 2 * 10 * reads);
}

#[test]
fn a_backend_that_reads_itself_gets_no_sampler_and_its_own_series_is_used() {
    let _one = SERIAL.lock().unwrap();
    let own = vec![
        Snapshot {
            t_ns: 5,
            values: vec![vec![3, 4], vec![1, 1]],
        },
        Snapshot {
            t_ns: 9,
            values: vec![vec![7, 4], vec![2, 5]],
        },
    ];
    let script = Script {
        own_readings: Some(own),
        ..Script::default()
    };
    let (report, _, reads) =
        lifecycle(&settings(Some(1), false), script, Duration::from_millis(20));
    let c = report.unwrap().counters.unwrap();
    assert_eq!(reads, 1, "only the final read: no sampler thread");
    assert_eq!(c.intervals.len(), 2);
    assert_eq!(c.intervals[1].counts, [[4, 0], [1, 4]]);
}

#[test]
fn a_failed_stop_becomes_a_warning_of_the_report() {
    let _one = SERIAL.lock().unwrap();
    let script = Script {
        stop_error: Some("reading /dev/arum: Input/output error".into()),
        ..Script::default()
    };
    let (report, warnings, _) = lifecycle(&settings(None, false), script, Duration::ZERO);
    assert!(report.unwrap().counters.is_some());
    assert_eq!(warnings.lines(), ["reading /dev/arum: Input/output error"]);
}
