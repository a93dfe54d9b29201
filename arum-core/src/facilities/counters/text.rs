//! The text of the counters section: the original report's per-CPU table (Event, CPU, Count),
//! then totals, metrics and ratios.

use std::fmt::Write;

use arum_events::metrics::MetricValue;
use arum_units::duration;

use super::model::{Breakdown, CountersReport, EventCounts, EventStatus};
use crate::render::fold;
use crate::render::text::indented;
use arum_grid::Grid;

/// The original report's per-CPU table (Event, CPU, Count), then totals and ratios. The software
/// clocks count nanoseconds: they are shown as times, with the CPUs they kept busy over the
/// program's `wall_ns` beside the total (as perf stat's "CPUs utilized"). Beyond `cpu_rows`
/// CPUs the per-CPU table is folded into each event's spread over the CPUs.
pub fn render(out: &mut String, c: &CountersReport, wall_ns: u64, cpu_rows: Option<usize>) {
    title(out, c);
    let folded = fold::folds(c.cpus.len(), cpu_rows);
    let (per_cpu, totals) = event_tables(c, wall_ns, folded);
    for (i, b) in [per_cpu, totals].into_iter().enumerate() {
        // A table with nothing under its headers is left out.
        if b.count_records() <= 1 {
            continue;
        }
        let t = b.align_right(1..if folded && i == 0 { 6 } else { 3 });
        let _ = writeln!(out);
        indented(out, &t);
        if folded && i == 0 {
            let _ = writeln!(out, "{}", fold::folded_note("per-CPU counts", c.cpus.len()));
        }
    }
    if !c.metrics.is_empty() {
        metrics_table(out, &c.metrics);
    }
    if !c.ratios.is_empty() {
        let _ = writeln!(out);
        for r in &c.ratios {
            let _ = writeln!(
                out,
                "  {:<34} {:.4}  ({} / {})",
                r.name, r.value, r.numerator, r.denominator
            );
        }
    }
    let _ = writeln!(out, " opened as: {}", c.opened_as);
}

/// An event's counts over `cpus` CPUs in one row: how many counted, min, median, max, and the
/// busiest CPUs. CPUs without a row (not counted there) count as zero.
fn spread_row(label: &str, e: &EventCounts, cpus: usize) -> Option<[String; 6]> {
    let mut values: Vec<(u32, f64)> = e.per_cpu.iter().map(|p| (p.cpu, p.scaled as f64)).collect();
    values.extend((values.len()..cpus).map(|_| (u32::MAX, 0.0)));
    let s = fold::spread(&values, fold::BUSIEST)?;
    let count = |v: f64| e.format_count(v.round() as u64);
    let busiest: Vec<String> = s
        .busiest
        .iter()
        .map(|&(cpu, v)| format!("{cpu}: {}", count(v)))
        .collect();
    Some([
        label.to_string(),
        format!("{} of {}", s.nonzero, s.cpus),
        count(s.min),
        count(s.median),
        count(s.max),
        busiest.join(", "),
    ])
}

/// The back-end, scope, CPUs and event table, then what limited the counting.
fn title(out: &mut String, c: &CountersReport) {
    let cpus = crate::system::cpulist::format(&c.cpus);
    let cpus = match c.breakdown {
        Breakdown::PerCpu => format!("CPUs {cpus}"),
        Breakdown::Totals => format!("totals on CPUs {cpus}"),
    };
    let _ = writeln!(
        out,
        "\nPerformance counters ({}, {} scope, {cpus}; {})",
        c.backend.name(),
        c.scope.name(),
        c.microarchitecture.as_deref().unwrap_or(&c.cpu_key)
    );
    if let Some(why) = &c.hardware_off_reason {
        let _ = writeln!(out, " hardware counting off: {why}");
    }
    if let Some(why) = &c.user_only_reason {
        let _ = writeln!(out, " user space only: {why}");
    }
    if let (Some(start), Some(stop)) = (c.start_spread_ns, c.stop_spread_ns) {
        let _ = writeln!(
            out,
            " the CPUs started counting within {} of each other, and stopped within {}",
            duration::format_ns(start as f64),
            duration::format_ns(stop as f64)
        );
    }
    for note in &c.notes {
        let _ = writeln!(out, " note: {note}");
    }
    if !c.core_types.is_empty() {
        let types: Vec<String> = c
            .core_types
            .iter()
            .map(|t| format!("{} {}", t.cpu, t.core_type))
            .collect();
        let _ = writeln!(out, " core types: {}", types.join(", "));
    }
}

/// The per-CPU counts of the counted events (folded: their spread over the CPUs), and every
/// event's total or why it has none.
fn event_tables(c: &CountersReport, wall_ns: u64, folded: bool) -> (Grid, Grid) {
    let mut per_cpu = Grid::new();
    if folded {
        per_cpu.push_record([
            "Event",
            "CPUs counting",
            "min",
            "median",
            "max",
            "busiest CPUs",
        ]);
    } else {
        per_cpu.push_record(["Event", "CPU", "Count", "% running"]);
    }
    let mut totals = Grid::new();
    totals.push_record(["Event", "Total", "% running", "Encoding", ""]);
    for e in &c.events {
        let mut label = label(e);
        if !e.requested {
            label.push_str(" [for metrics]");
        }
        if e.status != EventStatus::Counted {
            totals.push_record([
                label,
                e.status.describe().into(),
                String::new(),
                e.encoding.clone(),
                e.reason.clone().unwrap_or_default(),
            ]);
            continue;
        }
        if folded {
            if let Some(row) = spread_row(&label, e, c.cpus.len()) {
                per_cpu.push_record(row);
            }
        }
        for p in e.per_cpu.iter().filter(|_| !folded) {
            per_cpu.push_record([
                label.clone(),
                p.cpu.to_string(),
                e.format_count(p.scaled),
                format!("{:.1}", p.percent_running),
            ]);
        }
        let mut note = if e.multiplexed {
            "multiplexed, scaled".to_string()
        } else {
            String::new()
        };
        if e.is_clock() && wall_ns > 0 {
            let cpus = format!(
                "{:.3} CPUs utilized",
                e.total_scaled as f64 / wall_ns as f64
            );
            note = if note.is_empty() {
                cpus
            } else {
                format!("{note}; {cpus}")
            };
        }
        totals.push_record([
            label,
            e.format_count(e.total_scaled),
            format!("{:.1}", e.percent_running),
            e.encoding.clone(),
            note,
        ]);
    }
    for n in &c.not_counted {
        totals.push_record([
            n.spec.clone(),
            "not counted".into(),
            String::new(),
            String::new(),
            "hardware counting is off (see above)".into(),
        ]);
    }
    (per_cpu, totals)
}

/// Each metric's value and unit, or why it has none; a value above its threshold is flagged.
fn metrics_table(out: &mut String, metrics: &[MetricValue]) {
    let mut m = Grid::new();
    m.push_record(["Metric", "Value", "Unit", ""]);
    for v in metrics {
        let (value, why) = match (v.value, &v.why_not) {
            (Some(x), _) => (format!("{x:.4}"), String::new()),
            (None, why) => ("-".into(), why.clone().unwrap_or_default()),
        };
        let flag = if v.above_threshold == Some(true) {
            "above its threshold".to_string()
        } else {
            why
        };
        m.push_record([v.name.clone(), value, v.unit_label.clone(), flag]);
    }
    let t = m.align_right(1..2);
    let _ = writeln!(out);
    indented(out, &t);
}

/// An event as the report names it: as the user wrote it (with `:u`/`:k`), and what it
/// resolved to where that differs.
fn label(e: &EventCounts) -> String {
    let bare = e
        .spec
        .strip_suffix(":u")
        .or_else(|| e.spec.strip_suffix(":k"))
        .unwrap_or(&e.spec);
    if bare.eq_ignore_ascii_case(&e.name) {
        e.spec.clone()
    } else {
        format!("{} ({})", e.spec, e.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facilities::counters::model::{CpuCount, NotCounted, Ratio};
    use crate::render::testing::{has_line, line, line_number};
    use crate::report::testing::fixture;

    fn counters() -> CountersReport {
        fixture().counters.expect("the fixture counted events")
    }

    fn text(c: &CountersReport) -> String {
        let mut out = String::new();
        render(
            &mut out,
            c,
            2_000_000_000,
            Some(crate::render::fold::CPU_ROWS),
        );
        out
    }

    #[test]
    fn the_fixture_shows_per_cpu_counts_totals_and_a_metric_without_a_value() {
        let out = text(&counters());
        assert_eq!(
            line(&out, "Performance counters"),
            "Performance counters (perf_event_open, app scope, CPUs 0,1; AMD Zen 3 (family 19h))"
        );
        // The per-CPU table, then the totals: counts grouped by thousands, the software clocks'
        // nanoseconds as times with the CPUs they kept busy over the (test's 2 s) wall time.
        assert_eq!(line(&out, "task-clock 1"), "task-clock 1 808.6 µs 100.0");
        assert_eq!(
            line(&out, "task-clock 808.6"),
            "task-clock 808.6 µs 100.0 software 0.000 CPUs utilized"
        );
        let totals = line_number(&out, "Event Total");
        assert!(line_number(&out, "Event CPU") < totals, "{out}");
        assert_eq!(
            line(&out, "page-faults 74"),
            "page-faults 74 100.0 software"
        );
        assert_eq!(line(&out, "page-faults 1"), "page-faults 1 74 100.0");
        // An event counted only for a metric says so, and why it has no count.
        let instructions = line(&out, "instructions (ex_ret_instr)");
        assert!(
            instructions.starts_with("instructions (ex_ret_instr) [for metrics] not supported"),
            "{instructions}"
        );
        assert!(instructions.contains("(ENOENT)"), "{instructions}");
        let metric = line(&out, "insn_per_cycle");
        assert!(
            metric.starts_with("insn_per_cycle - instructions cpu-cycles was not counted"),
            "{metric}"
        );
        assert!(out
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with(" opened as: hardware events in one group per CPU"));
    }

    // 64 CPUs, the task-clock on CPU c counting c µs (none on CPU 0): one row per event with its
    // spread and busiest CPUs, and every row again with --per-cpu (no limit).
    #[test]
    fn many_cpus_fold_into_each_events_spread() {
        let mut c = counters();
        c.cpus = (0..64).collect();
        let template = c.events[0].per_cpu[0].clone();
        c.events[0].per_cpu = (0..64)
            .map(|cpu| CpuCount {
                cpu,
                scaled: u64::from(cpu) * 1000,
                ..template.clone()
            })
            .collect();
        // page-faults was counted on two CPUs only.
        let out = text(&c);
        assert_eq!(
            line(&out, "Performance counters"),
            "Performance counters (perf_event_open, app scope, CPUs 0-63; AMD Zen 3 (family 19h))"
        );
        assert_eq!(
            line(&out, "Event CPUs counting"),
            "Event CPUs counting min median max busiest CPUs"
        );
        assert_eq!(
            line(&out, "task-clock 63 of 64"),
            "task-clock 63 of 64 0 ns 31.5 µs 63 µs 63: 63 µs, 62: 62 µs, 61: 61 µs"
        );
        assert_eq!(
            line(&out, "page-faults 1 of 64"),
            "page-faults 1 of 64 0 0 74 1: 74"
        );
        assert!(
            has_line(&out, "per-CPU counts of 64 CPUs folded: --per-cpu"),
            "{out}"
        );
        assert!(out.lines().count() < 25, "{out}");
        let mut all = String::new();
        render(&mut all, &c, 2_000_000_000, None);
        assert_eq!(line(&all, "task-clock 40 "), "task-clock 40 40 µs 100.0");
    }

    #[test]
    fn totals_only_say_so_in_the_title_and_have_no_per_cpu_table() {
        let mut c = counters();
        c.breakdown = Breakdown::Totals;
        c.events.iter_mut().for_each(|e| e.per_cpu.clear());
        let out = text(&c);
        assert_eq!(
            line(&out, "Performance counters"),
            "Performance counters (perf_event_open, app scope, totals on CPUs 0,1; AMD Zen 3 (family 19h))"
        );
        assert!(!has_line(&out, "Event CPU"), "{out}");
        assert!(
            has_line(&out, "task-clock 808.6 µs 100.0 software"),
            "{out}"
        );
    }

    #[test]
    fn hardware_off_leaves_events_uncounted_and_drops_empty_tables() {
        let mut c = counters();
        c.microarchitecture = None;
        c.hardware_off_reason = Some("perf_event_paranoid is 3; run as root".into());
        c.events.retain(|e| e.status != EventStatus::Counted);
        c.metrics.clear();
        c.not_counted = vec![NotCounted {
            spec: "cache-misses".into(),
            reason: "hardware counting is off".into(),
        }];
        let out = text(&c);
        assert!(
            out.contains("; AuthenticAMD-25-1)\n"),
            "the CPU key stands for an unknown microarchitecture: {out}"
        );
        assert_eq!(
            line(&out, "hardware counting off"),
            "hardware counting off: perf_event_paranoid is 3; run as root"
        );
        assert!(
            !has_line(&out, "Event CPU"),
            "no per-CPU rows, no table: {out}"
        );
        assert!(!has_line(&out, "Metric"), "{out}");
        assert_eq!(
            line(&out, "cache-misses"),
            "cache-misses not counted hardware counting is off (see above)"
        );
    }

    #[test]
    fn multiplexing_thresholds_and_ratios_are_flagged() {
        let mut c = counters();
        c.events[0].multiplexed = true;
        c.events[0].percent_running = 50.0;
        c.metrics[0].value = Some(2.5);
        c.metrics[0].above_threshold = Some(true);
        c.ratios = vec![Ratio {
            name: "faults per task-clock".into(),
            value: 0.000_091_5,
            numerator: "page-faults".into(),
            denominator: "task-clock".into(),
        }];
        c.user_only_reason = Some("perf_event_paranoid is 2".into());
        let out = text(&c);
        assert_eq!(
            line(&out, "task-clock 808.6 µs"),
            "task-clock 808.6 µs 50.0 software multiplexed, scaled; 0.000 CPUs utilized"
        );
        assert_eq!(
            line(&out, "insn_per_cycle"),
            "insn_per_cycle 2.5000 instructions above its threshold"
        );
        assert_eq!(
            line(&out, "faults per"),
            "faults per task-clock 0.0001 (page-faults / task-clock)"
        );
        assert_eq!(
            line(&out, "user space only"),
            "user space only: perf_event_paranoid is 2"
        );
    }
}
