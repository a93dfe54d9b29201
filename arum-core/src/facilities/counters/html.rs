//! Performance-counter events: how they were counted, their totals, a heat map of events ×
//! CPUs, ratios and derived metrics.

use super::model::CountersReport;
use crate::facilities::counters::model::EventStatus;
use crate::render::html::page::{facts, figure, list, para, section, table};
use crate::render::html::plot;

pub fn render(c: &CountersReport) -> String {
    let mut body = facts(&[
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
    ]);
    if c.user_only {
        body.push_str(&para(&format!(
            "User space only: {}",
            c.user_only_reason
                .as_deref()
                .unwrap_or("kernel counting not allowed")
        )));
    }
    let rows: Vec<Vec<String>> = c
        .events
        .iter()
        .map(|e| {
            vec![
                e.alias.clone().unwrap_or_else(|| e.name.clone()),
                e.status.describe().into(),
                e.total_scaled.to_string(),
                e.total_raw.to_string(),
                format!("{:.1}", e.percent_running),
                if e.multiplexed { "yes" } else { "no" }.into(),
                e.encoding.clone(),
            ]
        })
        .collect();
    body.push_str(&table(
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
    ));
    let counted: Vec<_> = c
        .events
        .iter()
        .filter(|e| e.status == EventStatus::Counted)
        .collect();
    if !counted.is_empty() && !c.cpus.is_empty() {
        let names: Vec<String> = counted
            .iter()
            .map(|e| e.alias.clone().unwrap_or_else(|| e.name.clone()))
            .collect();
        let cpus: Vec<String> = c.cpus.iter().map(|n| format!("CPU {n}")).collect();
        let values: Vec<Vec<f64>> = counted
            .iter()
            .map(|e| {
                c.cpus
                    .iter()
                    .map(|cpu| {
                        e.per_cpu
                            .iter()
                            .find(|p| p.cpu == *cpu)
                            .map_or(0.0, |p| p.scaled as f64)
                    })
                    .collect()
            })
            .collect();
        body.push_str(&figure(plot::heatmap(
            "Events per CPU (each row shaded against its largest count)",
            &names,
            &cpus,
            &values,
        )));
        let mut headers = vec!["event"];
        headers.extend(cpus.iter().map(String::as_str));
        let rows: Vec<Vec<String>> = names
            .iter()
            .zip(&values)
            .map(|(n, v)| {
                std::iter::once(n.clone())
                    .chain(v.iter().map(|x| format!("{x:.0}")))
                    .collect()
            })
            .collect();
        body.push_str(&table(&headers, &rows));
    }
    if !c.ratios.is_empty() {
        let rows: Vec<Vec<String>> = c
            .ratios
            .iter()
            .map(|x| {
                vec![
                    x.name.clone(),
                    format!("{:.4}", x.value),
                    format!("{} / {}", x.numerator, x.denominator),
                ]
            })
            .collect();
        body.push_str(&table(&["ratio", "value", "of"], &rows));
    }
    if !c.metrics.is_empty() {
        let rows: Vec<Vec<String>> = c
            .metrics
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
        body.push_str(&table(&["metric", "value", "why none"], &rows));
    }
    let not: Vec<String> = c
        .not_counted
        .iter()
        .map(|n| format!("{} not counted: {}", n.spec, n.reason))
        .chain(
            c.events
                .iter()
                .filter_map(|e| Some(format!("{}: {}", e.name, e.reason.as_ref()?))),
        )
        .collect();
    body.push_str(&list("notes warn", &not));
    section("counters", "Performance counters", &body)
}
