//! ALMT's views of a run's probe records (`records::event::Journal`): the overview (the session on
//! a time line), the hierarchical and percentage views of tasks delimited by probes the user names,
//! and the table of elapsed time per process and probe in µs and TSC cycles.

mod overview;
mod table;
mod tasks;

use std::collections::HashMap;

use crate::records::event::Journal;
use crate::records::stats::Durations;
use crate::report::model::{SpanSummary, ViewsReport};

/// `--task-begin` / `--task-end`: the probes (by name) that delimit a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskProbes {
    pub begin: String,
    pub end: String,
}

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
    }
}

fn summary(d: &Durations) -> SpanSummary {
    SpanSummary {
        count: d.count,
        total_ns: d.total_ns,
        mean_ns: d.mean_ns(),
        p50_ns: d.quantile_ns(0.5),
        p99_ns: d.quantile_ns(0.99),
        max_ns: d.max_ns,
    }
}

/// The TSC's rate where it is a clock (invariant), measured against CLOCK_MONOTONIC.
pub fn tsc_hz() -> Option<f64> {
    arum_tsc::is_invariant()
        .then(|| arum_tsc::Calibration::measure(std::time::Duration::from_millis(5), 3).hz)
}

#[cfg(test)]
pub(crate) mod testing {
    use crate::records::event::{Journal, ProbeEvent};

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
}
