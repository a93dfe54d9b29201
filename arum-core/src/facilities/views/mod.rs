//! ALMT's views of a run's probe records (`records::event::Journal`): the overview (the session on
//! a time line), the hierarchical and percentage views of tasks delimited by probes the user names,
//! and the table of elapsed time per process and probe in µs and TSC cycles.

pub mod html;
pub mod model;
mod overview;
mod settings;
mod table;
mod tasks;
pub mod text;

use std::collections::HashMap;

pub use settings::TaskProbes;

use crate::facilities::views::model::ViewsReport;
use crate::perf::records::event::Journal;

/// Builds every view. `names`: pid → process name; `tsc_hz`: TSC ticks per second, where the
/// TSC is a clock.
pub fn build(
    journal: &Journal,
    names: &HashMap<u32, String>,
    task: Option<&TaskProbes>,
    tsc_hz: Option<f64>,
) -> ViewsReport {
    let mut events = journal.events.clone();
    events.sort_by_key(|e| (e.start, e.tid));
    ViewsReport {
        overview: overview::build(&events, &journal.names, names),
        tasks: task.map(|t| tasks::build(&events, &journal.names, t)),
        table: table::build(&events, &journal.names, names, tsc_hz),
        tsc_hz,
        dropped_events: journal.dropped,
        missing_calls: 0,
    }
}

/// The TSC's rate where it is a clock (invariant), measured against CLOCK_MONOTONIC.
pub fn tsc_hz() -> Option<f64> {
    arum_tsc::is_invariant()
        .then(|| arum_tsc::Calibration::measure(std::time::Duration::from_millis(5), 3).hz)
}

#[cfg(test)]
pub(crate) mod testing {
    use crate::facilities::views::model::{
        NestedCall, NestedProbe, OverviewView, ProbeLine, SpanSummary, TableRow, TaskLine,
        TasksView, ViewsReport,
    };
    use crate::perf::records::event::{Journal, ProbeEvent};

    /// A journal from (probe, pid, tid, start, duration, arg, ret).
    pub fn journal(names: &[&str], ev: &[(u32, u32, u32, u64, u64, u64, i64)]) -> Journal {
        let mut j = Journal::default();
        for n in names {
            j.probe(n);
        }
        for &(probe, pid, tid, start, duration, arg, ret) in ev {
            j.push(ProbeEvent {
                probe,
                pid,
                tid,
                start,
                duration,
                arg,
                ret,
                syscall: true,
            });
        }
        j
    }

    /// Views of a small server run: a rate, one task kind with a nested probe (a name to escape),
    /// a slow task, a table row with cycles.
    pub fn views() -> ViewsReport {
        ViewsReport {
            overview: OverviewView {
                duration_ns: 3_000_000,
                interval_ns: 1_000_000,
                rate: vec![0, 40, 80],
                busiest: vec![ProbeLine {
                    probe: "sendfile".into(),
                    calls: 10,
                    total_ns: 50_000,
                }],
                ..OverviewView::default()
            },
            tasks: Some(TasksView {
                begin: "accept4".into(),
                end: "close".into(),
                keyed_by: "descriptor".into(),
                tasks: 10,
                nested: vec![NestedProbe {
                    probe: "send<file>".into(),
                    tasks: 10,
                    calls: 20,
                    calls_per_task: 2.0,
                    duration: SpanSummary {
                        count: 20,
                        total_ns: 50_000,
                        mean_ns: 2500.0,
                        p50_ns: 2000,
                        p99_ns: 9000,
                        max_ns: 9100,
                    },
                    share_pct: 12.5,
                }],
                unaccounted_pct: 87.5,
                slowest: vec![TaskLine {
                    pid: 7,
                    tid: 8,
                    fd: Some(6),
                    duration_ns: 40_000,
                    nested: vec![NestedCall {
                        probe: "send<file>".into(),
                        offset_ns: 1000,
                        duration_ns: 9100,
                    }],
                    ..TaskLine::default()
                }],
                ..TasksView::default()
            }),
            table: vec![TableRow {
                pid: 7,
                process: "nginx".into(),
                probe: "sendfile".into(),
                calls: 10,
                elapsed_us: 25.0,
                elapsed_cycles: Some(60_000),
            }],
            tsc_hz: Some(2.4e9),
            dropped_events: 0,
            missing_calls: 0,
        }
    }
}
