//! The ALMT views of `--syscalls`: the overview (system calls per second over the run, the
//! processes, the busiest probes), the hierarchy of tasks delimited by `--task-begin` and
//! `--task-end` (task → nested probes, each collapsible), the percentage view of the tasks'
//! time, and the elapsed time per process and probe in µs and TSC cycles.

use crate::facilities::views::model::{
    NestedProbe, OverviewView, SpanSummary, TaskLine, TasksView, ViewsReport,
};
use crate::render::html::page::{branch, facts, figure, item, para, section, table};
use crate::render::html::plot::{self, Series, YAxis};
use arum_units::duration;
use arum_units::quantity::grouped;

fn ns(v: f64) -> String {
    duration::format_ns(v)
}

pub fn render(v: &ViewsReport) -> String {
    let mut body = overview(v);
    if let Some(t) = &v.tasks {
        body.push_str(&tasks(t));
    }
    body.push_str(&elapsed_table(v));
    section(
        "views",
        "ALMT views: overview, tasks, shares, elapsed time",
        &body,
    )
}

fn overview(v: &ViewsReport) -> String {
    let o = &v.overview;
    let mut pairs = vec![
        ("probe events over", ns(o.duration_ns as f64)),
        ("interval of the rate", ns(o.interval_ns as f64)),
        (
            "TSC rate (cycle column)",
            v.tsc_hz.map_or("the TSC is not a clock here".into(), |hz| {
                format!("{:.3} GHz", hz / 1e9)
            }),
        ),
    ];
    if v.dropped_events > 0 {
        pairs.push((
            "events not kept (memory limit), not in the views",
            v.dropped_events.to_string(),
        ));
    }
    if v.missing_calls > 0 {
        pairs.push((
            "system calls counted, records lost, not in the views",
            v.missing_calls.to_string(),
        ));
    }
    let mut out = facts(&pairs);
    if let Some((line, unit)) = rate_series(o) {
        out.push_str(&figure(plot::lines(
            "System calls completed per second, per interval",
            &format!("{unit} since the first probe event"),
            "calls per second",
            &[line],
            None,
            YAxis::Linear,
        )));
    }
    let processes: Vec<Vec<String>> = o
        .processes
        .iter()
        .map(|p| {
            vec![
                format!("{} {}", p.pid, p.name),
                p.threads.to_string(),
                p.events.to_string(),
                ns(p.first_ns as f64),
                ns(p.last_ns as f64),
            ]
        })
        .collect();
    out.push_str(&table(
        &["process", "threads", "events", "first", "last"],
        &processes,
    ));
    let busiest: Vec<Vec<String>> = o
        .busiest
        .iter()
        .map(|b| vec![b.probe.clone(), grouped(b.calls), ns(b.total_ns as f64)])
        .collect();
    out.push_str(&table(&["busiest probe", "calls", "total"], &busiest));
    out
}

/// The rate as a line: each interval's count per second, at the interval's middle, on a time
/// axis in seconds, ms or µs (whichever keeps the labels readable), named by the second value.
fn rate_series(o: &OverviewView) -> Option<(Series, &'static str)> {
    if o.rate.is_empty() || o.interval_ns == 0 {
        return None;
    }
    let (scale, unit) = match o.duration_ns {
        d if d >= 10_000_000_000 => (1e9, "s"),
        d if d >= 10_000_000 => (1e6, "ms"),
        _ => (1e3, "µs"),
    };
    let dt = o.interval_ns as f64;
    let line = Series {
        name: "system calls".into(),
        points: o
            .rate
            .iter()
            .enumerate()
            .map(|(i, &n)| ((i as f64 + 0.5) * dt / scale, n as f64 * 1e9 / dt))
            .collect(),
    };
    Some((line, unit))
}

fn span(d: &SpanSummary) -> String {
    format!(
        "mean {}, p50 {}, p99 {}, max {}",
        ns(d.mean_ns),
        ns(d.p50_ns as f64),
        ns(d.p99_ns as f64),
        ns(d.max_ns as f64)
    )
}

/// The hierarchical view (a task, its nested probes, its slowest instances) and the
/// percentage view.
fn tasks(t: &TasksView) -> String {
    let mut inner = para(&format!(
        "A task runs from {} to {}, keyed by {}; {} still open at the end. Tasks: {}.",
        t.begin,
        t.end,
        t.keyed_by,
        t.open,
        span(&t.duration)
    ));
    for n in &t.nested {
        inner.push_str(&nested_probe(n));
    }
    if !t.slowest.is_empty() {
        let slow: String = t.slowest.iter().map(slow_task).collect();
        inner.push_str(&branch("The slowest tasks", &slow));
    }
    let mut out = branch(
        &format!(
            "Tasks {} → {}: {} tasks, mean {}, p99 {}",
            t.begin,
            t.end,
            t.tasks,
            ns(t.duration.mean_ns),
            ns(t.duration.p99_ns as f64)
        ),
        &inner,
    );
    out.push_str(&shares(t));
    out
}

/// A probe nested in the tasks: its calls and durations in one line, the figures inside.
fn nested_probe(n: &NestedProbe) -> String {
    let d = &n.duration;
    let detail = facts(&[
        ("tasks calling it", n.tasks.to_string()),
        ("calls", n.calls.to_string()),
        ("calls per task", format!("{:.2}", n.calls_per_task)),
        ("total", ns(d.total_ns as f64)),
        ("durations", span(d)),
        ("share of the tasks' time", format!("{:.1}%", n.share_pct)),
    ]);
    item(
        &format!(
            "{}: {} calls, mean {}, p99 {}, {:.1}% of the time",
            n.probe,
            n.calls,
            ns(d.mean_ns),
            ns(d.p99_ns as f64),
            n.share_pct
        ),
        &detail,
    )
}

/// One of the slowest tasks, with its nested calls.
fn slow_task(s: &TaskLine) -> String {
    let calls: Vec<Vec<String>> = s
        .nested
        .iter()
        .map(|c| {
            vec![
                c.probe.clone(),
                ns(c.offset_ns as f64),
                ns(c.duration_ns as f64),
            ]
        })
        .collect();
    item(
        &format!(
            "pid {} tid {}{}: {} at {}, {} nested calls",
            s.pid,
            s.tid,
            s.fd.map_or_else(String::new, |fd| format!(" fd {fd}")),
            ns(s.duration_ns as f64),
            ns(s.start_ns as f64),
            s.nested.len()
        ),
        &table(
            &["nested call", "from the task's start", "duration"],
            &calls,
        ),
    )
}

/// The percentage view: where the tasks' time went, or why there is none to show.
fn shares(t: &TasksView) -> String {
    if t.tasks == 0 {
        return para(&format!(
            "No task ended ({} → {}): no shares to show.",
            t.begin, t.end
        ));
    }
    let mut names: Vec<String> = t.nested.iter().map(|n| n.probe.clone()).collect();
    let mut shares: Vec<f64> = t.nested.iter().map(|n| n.share_pct).collect();
    names.push("(in no nested probe)".into());
    shares.push(t.unaccounted_pct);
    let mut out = figure(plot::bars(
        "Share of the tasks' time",
        "% of the tasks' total time",
        &names,
        &shares,
        YAxis::Linear,
    ));
    let rows: Vec<Vec<String>> = names
        .iter()
        .zip(&shares)
        .map(|(n, s)| vec![n.clone(), format!("{s:.1}%")])
        .collect();
    out.push_str(&table(&["where the tasks' time went", "share"], &rows));
    out
}

fn elapsed_table(v: &ViewsReport) -> String {
    let rows: Vec<Vec<String>> = v
        .table
        .iter()
        .map(|r| {
            vec![
                format!("{} {}", r.pid, r.process),
                r.probe.clone(),
                r.calls.to_string(),
                format!("{:.1}", r.elapsed_us),
                r.elapsed_cycles
                    .map_or_else(|| "-".into(), |c| c.to_string()),
            ]
        })
        .collect();
    table(&["process", "probe", "calls", "µs", "TSC cycles"], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facilities::views::testing::views;
    use crate::report::testing::report;

    #[test]
    fn the_views_have_the_rate_the_hierarchy_the_shares_and_the_table() {
        let mut r = report(1_000_000_000, 0);
        r.views = Some(views());
        let html = render(r.views.as_ref().expect("a section"));
        assert!(html.contains("id=\"views\""));
        // The rate line and the share bars.
        assert_eq!(html.matches("<svg").count(), 2, "{html}");
        assert!(!html.contains("plot not drawn"), "{html}");
        // Task → nested probe → its figures, nested details; names escaped.
        let task = html
            .find("Tasks accept4 → close: 10 tasks")
            .expect("the task");
        let probe = html
            .find("send&lt;file&gt;: 20 calls, mean 2.5 µs, p99 9 µs, 12.5% of the time")
            .unwrap_or_else(|| panic!("the nested probe with count, mean, p99 and share: {html}"));
        assert!(task < probe);
        assert!(!html.contains("send<file>"));
        let opened = html[..probe].matches("<details").count();
        let closed = html[..probe].matches("</details>").count();
        assert!(opened - closed >= 3, "section → task → probe: {html}");
        assert!(html.contains("pid 7 tid 8 fd 6"), "{html}");
        assert!(html.contains("87.5%") && html.contains("12.5%"), "{html}");
        // µs and cycles.
        assert!(
            html.contains("<td>sendfile</td><td>10</td><td>25.0</td><td>60000</td>"),
            "{html}"
        );
    }

    #[test]
    fn the_rate_is_per_second_at_each_interval_middle() {
        let (s, unit) = rate_series(&views().overview).expect("a line");
        // 3 ms of events: the axis in µs.
        assert_eq!(unit, "µs");
        let want = [(500.0, 0.0), (1500.0, 40_000.0), (2500.0, 80_000.0)];
        assert_eq!(s.points.len(), want.len());
        for (got, want) in s.points.iter().zip(want) {
            assert!(
                (got.0 - want.0).abs() < 1e-9 && (got.1 - want.1).abs() < 1e-6,
                "{got:?} vs {want:?}"
            );
        }
        let long = OverviewView {
            duration_ns: 20_000_000_000,
            interval_ns: 1_000_000_000,
            rate: vec![5, 7],
            ..OverviewView::default()
        };
        let (s, unit) = rate_series(&long).expect("a line");
        assert_eq!((unit, s.points[1]), ("s", (1.5, 7.0)));
        let none = OverviewView::default();
        assert!(rate_series(&none).is_none());
    }

    #[test]
    fn no_ended_task_is_said_and_not_drawn() {
        let mut v = views();
        if let Some(t) = v.tasks.as_mut() {
            t.tasks = 0;
            t.nested.clear();
            t.slowest.clear();
            t.open = 2;
        }
        v.tsc_hz = None;
        v.table[0].elapsed_cycles = None;
        let mut r = report(1_000_000_000, 0);
        r.views = Some(v);
        let html = render(r.views.as_ref().expect("a section"));
        assert!(html.contains("No task ended"), "{html}");
        assert_eq!(html.matches("<svg").count(), 1, "the rate only");
        assert!(html.contains("the TSC is not a clock here"));
        assert!(html.contains("<td>25.0</td><td>-</td>"), "{html}");
    }
}
