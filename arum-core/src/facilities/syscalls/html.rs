//! `--syscalls`: the per-category and per-call tables (calls, errors by errno, durations,
//! bytes), the total time of each call as bars, and what tracing cost.

use crate::facilities::syscalls::model::{SyscallStats, SyscallsReport};
use crate::render::html::page::{facts, figure, para, section, table};
use crate::render::html::plot::{self, YAxis};
use arum_units::quantity::grouped;
use arum_units::{duration, size};

/// Calls drawn in the bar plot (the table has them all).
const BARS: usize = 30;

pub fn render(s: &SyscallsReport) -> String {
    let title = format!(
        "System calls (--syscalls: {})",
        if s.selection.is_empty() {
            "all".to_string()
        } else {
            s.selection.join(", ")
        }
    );
    let mut body = String::new();
    if let Some(why) = &s.off_reason {
        body.push_str(&para(&format!("No system call was traced: {why}")));
        return section("syscalls", &title, &body);
    }
    body.push_str(&facts(&overview(s)));
    body.push_str(&stats_table("category", &s.categories));
    if !s.calls.is_empty() {
        let shown = &s.calls[..s.calls.len().min(BARS)];
        let names: Vec<String> = shown.iter().map(|c| c.name.clone()).collect();
        let totals: Vec<f64> = shown.iter().map(|c| c.total_ns as f64).collect();
        let scale = scale_of(&totals);
        body.push_str(&figure(plot::bars(
            &format!(
                "Total time per system call{}{}",
                if s.calls.len() > BARS {
                    format!(" (the {BARS} largest)")
                } else {
                    String::new()
                },
                if scale == YAxis::Log {
                    ", log scale"
                } else {
                    ""
                }
            ),
            "ns from entry to exit, summed",
            &names,
            &totals,
            scale,
        )));
    }
    body.push_str(&stats_table("call", &s.calls));
    section("syscalls", &title, &body)
}

/// Log scale when the bars span more than two orders of magnitude, so the small ones show.
fn scale_of(values: &[f64]) -> YAxis {
    let top = values.iter().copied().fold(0.0, f64::max);
    let low = values
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    if top > 0.0 && low.is_finite() && top / low > 100.0 {
        YAxis::Log
    } else {
        YAxis::Linear
    }
}

fn overview(s: &SyscallsReport) -> Vec<(&'static str, String)> {
    let ns = |v: f64| duration::format_ns(v);
    let unfinished: u64 = s.unfinished.iter().map(|c| c.count).sum();
    let mut out = Vec::new();
    if s.engine.as_deref() == Some("bpf") {
        out.push((
            "engine",
            format!(
                "counted in the kernel by BPF: {} calls not counted (full maps), {} exits without an entry, {} calls unfinished at the end",
                s.uncounted, s.orphan_exits, unfinished
            ),
        ));
        if s.records > 0 || s.lost > 0 {
            out.push((
                "records for the views",
                format!("{} read, {} lost by the kernel", s.records, s.lost),
            ));
        }
    } else {
        out.push((
            "records",
            format!(
                "{} read, {} lost by the kernel, {} exits without an entry, {} calls unfinished at the end",
                s.records, s.lost, s.orphan_exits, unfinished
            ),
        ));
    }
    if let Some(note) = &s.engine_note {
        out.push(("note", note.clone()));
    }
    if let Some(f) = &s.filter {
        out.push(("kernel filter", f.clone()));
    }
    if s.private_tracefs {
        out.push((
            "tracefs",
            "mounted nowhere: read through a private mount".into(),
        ));
    }
    if let Some(cost) = s.probe_cost_ns {
        out.push(("cost of a traced call", ns(cost)));
    }
    if let Some(inside) = s.probe_inside_ns {
        out.push(("taken out of each duration", ns(inside)));
    }
    if let Some(total) = s.overhead_ns {
        out.push(("tracing overhead (estimate)", ns(total as f64)));
    }
    out
}

/// A row per call or category. A call's row names its category; a category's would repeat its
/// own name, so the category table has no such column.
fn stats_table(first: &str, rows: &[SyscallStats]) -> String {
    let ns = |v: u64| duration::format_ns(v as f64);
    let by_category = first == "category";
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|s| {
            let mut row = vec![s.name.clone()];
            if !by_category {
                row.push(s.category.clone());
            }
            row.extend([
                grouped(s.calls),
                grouped(s.errors),
                ns(s.total_ns),
                duration::format_ns(s.mean_ns),
                ns(s.p50_ns),
                ns(s.p99_ns),
                ns(s.max_ns),
                s.bytes.map_or_else(String::new, |b| size::format(b as f64)),
                s.errnos
                    .iter()
                    .map(|e| format!("{} {}", e.errno, grouped(e.count)))
                    .collect::<Vec<_>>()
                    .join(", "),
            ]);
            row
        })
        .collect();
    let mut headers = vec![first];
    if !by_category {
        headers.push("category");
    }
    headers.extend([
        "calls", "errors", "total", "mean", "p50", "p99", "max", "bytes", "errno",
    ]);
    table(&headers, &cells)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facilities::syscalls::model::ErrnoCount;
    use crate::report::testing::report;

    fn stats(name: &str, calls: u64, total_ns: u64) -> SyscallStats {
        SyscallStats {
            name: name.into(),
            category: "file".into(),
            calls,
            total_ns,
            mean_ns: total_ns as f64 / calls as f64,
            ..SyscallStats::default()
        }
    }

    #[test]
    fn calls_and_categories_are_tabled_and_their_times_drawn_on_a_log_axis() {
        let mut openat = stats("openat", 1200, 2_400_000);
        openat.errors = 300;
        openat.errnos = vec![ErrnoCount {
            errno: "ENOENT".into(),
            count: 300,
        }];
        let mut read = stats("read<x>", 4, 400);
        read.bytes = Some(4096);
        let mut r = report(1_000_000_000, 0);
        r.syscalls = Some(SyscallsReport {
            selection: vec!["all".into()],
            calls: vec![openat.clone(), read],
            categories: vec![SyscallStats {
                name: "file".into(),
                ..openat
            }],
            records: 2408,
            lost: 7,
            probe_cost_ns: Some(1000.0),
            overhead_ns: Some(1_204_000),
            ..SyscallsReport::default()
        });
        let html = render(r.syscalls.as_ref().expect("a section"));
        assert!(html.contains("id=\"syscalls\""), "{html}");
        assert!(html.contains("ENOENT 300"), "{html}");
        // Counts grouped by thousands; the call table names each call's category, the category
        // table does not repeat its own name.
        assert!(
            html.contains("<td>file</td><td>1,200</td><td>300</td>"),
            "{html}"
        );
        assert!(
            html.contains("<td class=\"l\">file</td><td>1,200</td>"),
            "{html}"
        );
        assert_eq!(html.matches("<th>category</th>").count(), 1, "{html}");
        assert!(html.contains("read&lt;x&gt;") && !html.contains("read<x>"));
        assert!(html.contains("4 KiB"), "{html}");
        assert!(html.contains("7 lost"), "{html}");
        // 2.4 ms against 400 ns: more than two orders of magnitude, so a log axis.
        assert!(html.contains("log scale"), "{html}");
        assert_eq!(html.matches("<svg").count(), 1, "one bar plot");
        assert!(!html.contains("plot not drawn"), "{html}");
    }

    #[test]
    fn tracing_off_says_why_and_draws_nothing() {
        let mut r = report(1_000_000_000, 0);
        r.syscalls = Some(SyscallsReport {
            off_reason: Some("needs CAP_PERFMON & <tracefs>".into()),
            ..SyscallsReport::default()
        });
        let html = render(r.syscalls.as_ref().expect("a section"));
        assert!(
            html.contains("needs CAP_PERFMON &amp; &lt;tracefs&gt;"),
            "{html}"
        );
        assert!(!html.contains("<svg") && !html.contains("<table"), "{html}");
    }

    #[test]
    fn close_values_keep_a_linear_axis() {
        assert!(scale_of(&[10.0, 50.0, 900.0]) == YAxis::Linear);
        assert!(scale_of(&[10.0, 0.0, 1001.0]) == YAxis::Log);
        assert!(scale_of(&[]) == YAxis::Linear);
    }
}
