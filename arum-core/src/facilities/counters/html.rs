//! Performance-counter events: how they were counted, their totals, a heat map of events ×
//! CPUs, ratios and derived metrics.

use arum_events::metrics::MetricValue;

use super::model::{Breakdown, CountersReport, EventCounts, EventStatus, Ratio};
use crate::render::html::page::{facts, figure, list, para, section, table};
use crate::render::html::plot;

pub fn render(c: &CountersReport) -> String {
    let mut body = how_counted(c);
    if c.user_only {
        body.push_str(&para(&format!(
            "User space only: {}",
            c.user_only_reason
                .as_deref()
                .unwrap_or("kernel counting not allowed")
        )));
    }
    body.push_str(&events_table(&c.events));
    let counted: Vec<_> = c
        .events
        .iter()
        .filter(|e| e.status == EventStatus::Counted)
        .collect();
    if !counted.is_empty() && !c.cpus.is_empty() && c.breakdown == Breakdown::PerCpu {
        body.push_str(&per_cpu(&counted, &c.cpus));
    }
    if !c.ratios.is_empty() {
        body.push_str(&ratios_table(&c.ratios));
    }
    if !c.metrics.is_empty() {
        body.push_str(&metrics_table(&c.metrics));
    }
    body.push_str(&list("notes warn", &notes(c)));
    section("counters", "Performance counters", &body)
}

/// The back-end, scope, CPU, event table, and how the counters were opened.
fn how_counted(c: &CountersReport) -> String {
    facts(&[
        ("back-end", c.backend.name().into()),
        ("scope", c.scope.name().into()),
        (
            "CPU",
            match &c.microarchitecture {
                Some(m) => format!("{} ({m})", c.cpu_key),
                None => c.cpu_key.clone(),
            },
        ),
        (
            "event table",
            c.table.clone().unwrap_or_else(|| "none".into()),
        ),
        (
            "hardware counting",
            match (&c.hardware_counting, &c.hardware_off_reason) {
                (true, _) => "on".into(),
                (false, Some(why)) => format!("off: {why}"),
                (false, None) => "off".into(),
            },
        ),
        ("opened as", c.opened_as.clone()),
        ("multiplexing detection", c.multiplexing_detection.clone()),
    ])
}

/// Every event: its status, totals, share of time running and encoding.
fn events_table(events: &[EventCounts]) -> String {
    let rows: Vec<Vec<String>> = events
        .iter()
        .map(|e| {
            vec![
                name(e),
                e.status.describe().into(),
                e.format_count(e.total_scaled),
                e.format_count(e.total_raw),
                format!("{:.1}", e.percent_running),
                if e.multiplexed { "yes" } else { "no" }.into(),
                e.encoding.clone(),
            ]
        })
        .collect();
    table(
        &[
            "event",
            "status",
            "total",
            "raw",
            "% running",
            "multiplexed",
            "encoding",
        ],
        &rows,
    )
}

fn name(e: &EventCounts) -> String {
    e.alias.clone().unwrap_or_else(|| e.name.clone())
}

/// The counted events on each of `cpus`: a heat map, and up to `fold::CPU_ROWS` CPUs the same
/// counts as a table (beyond, its columns would not fit; the JSON report has them).
fn per_cpu(counted: &[&EventCounts], cpus: &[u32]) -> String {
    let names: Vec<String> = counted.iter().map(|e| name(e)).collect();
    let columns: Vec<String> = cpus.iter().map(|n| format!("CPU {n}")).collect();
    let values: Vec<Vec<f64>> = counted
        .iter()
        .map(|e| {
            cpus.iter()
                .map(|cpu| {
                    e.per_cpu
                        .iter()
                        .find(|p| p.cpu == *cpu)
                        .map_or(0.0, |p| p.scaled as f64)
                })
                .collect()
        })
        .collect();
    let mut out = figure(plot::heatmap(
        "Events per CPU (each row shaded against its largest count)",
        &names,
        &columns,
        &values,
        plot::Shade::PerRow,
    ));
    if cpus.len() > crate::render::fold::CPU_ROWS {
        return out;
    }
    let mut headers = vec!["event"];
    headers.extend(columns.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = counted
        .iter()
        .zip(&names)
        .zip(&values)
        .map(|((e, n), v)| {
            std::iter::once(n.clone())
                .chain(v.iter().map(|x| e.format_count(*x as u64)))
                .collect()
        })
        .collect();
    out.push_str(&table(&headers, &rows));
    out
}

fn ratios_table(ratios: &[Ratio]) -> String {
    let rows: Vec<Vec<String>> = ratios
        .iter()
        .map(|x| {
            vec![
                x.name.clone(),
                format!("{:.4}", x.value),
                format!("{} / {}", x.numerator, x.denominator),
            ]
        })
        .collect();
    table(&["ratio", "value", "of"], &rows)
}

fn metrics_table(metrics: &[MetricValue]) -> String {
    let rows: Vec<Vec<String>> = metrics
        .iter()
        .map(|m| {
            vec![
                m.name.clone(),
                m.value
                    .map_or_else(String::new, |v| format!("{v:.4} {}", m.unit_label)),
                m.why_not.clone().unwrap_or_default(),
            ]
        })
        .collect();
    table(&["metric", "value", "why none"], &rows)
}

/// Events not counted, and the kernel's reason for each event that has one.
fn notes(c: &CountersReport) -> Vec<String> {
    c.not_counted
        .iter()
        .map(|n| format!("{} not counted: {}", n.spec, n.reason))
        .chain(
            c.events
                .iter()
                .filter_map(|e| Some(format!("{}: {}", e.name, e.reason.as_ref()?))),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::fixture;

    // The fixture's task-clock counted 808,635 ns: a time on the page, and page faults a count
    // with separators, never raw nanoseconds.
    #[test]
    fn clocks_are_times_and_counts_are_grouped() {
        let mut c = fixture().counters.expect("the fixture counted events");
        let page = render(&c);
        assert!(page.contains("<td>808.6 µs</td>"), "{page}");
        assert!(!page.contains("808635"), "{page}");
        c.events[1].total_scaled = 1_234_567;
        assert!(render(&c).contains("<td>1,234,567</td>"));
    }
}
