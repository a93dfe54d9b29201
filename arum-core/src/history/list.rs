//! `arum history`: the selected runs, one table per series (command, labels, machine) with the
//! chosen metrics per run; as CSV or JSON for scripts; and the page of trend plots (`--html`).

use std::time::{Duration, UNIX_EPOCH};

use arum_grid::Grid;
use arum_history::StoredRun;
use serde::Serialize;

use crate::error::ArumError;
use crate::history::html;
use crate::history::query::{self, HistoryFormat, HistoryRequest};
use crate::history::trend::{self, Series};
use crate::report::metrics;
use crate::report::sink::{self, Sink};

pub fn run(r: &HistoryRequest) -> Result<i32, ArumError> {
    let sink = Sink::open_or_stdout(r.output.as_deref())?;
    let page = r
        .html
        .as_deref()
        .map(|p| Sink::open(Some(p)).map_err(sink::failed("--html")))
        .transpose()?;
    let (runs, metrics) = query::select(r)?;
    let series = trend::series_of(runs);
    let rendered = match r.format {
        HistoryFormat::Text => text(&series, &metrics),
        HistoryFormat::Csv => csv(&series, &metrics),
        HistoryFormat::Json => json(&series),
    };
    sink.write_report(&rendered)?;
    if let Some(page) = page {
        page.write_report(&html::render(&series, &metrics))
            .map_err(sink::failed("--html"))?;
    }
    Ok(0)
}

/// When a run was saved, to the second (UTC).
pub fn saved_at(run: &StoredRun) -> String {
    let t = UNIX_EPOCH + Duration::from_nanos(u64::try_from(run.saved_unix_ns).unwrap_or(0));
    humantime::format_rfc3339_seconds(t).to_string()
}

fn commit_of(run: &StoredRun) -> String {
    run.commit.as_ref().map_or(String::new(), |c| {
        trend::short_commit(&c.id, c.dirty == Some(true))
    })
}

fn text(series: &[Series], metrics_shown: &[String]) -> String {
    let runs: usize = series.iter().map(|s| s.runs.len()).sum();
    let mut out = format!("{runs} saved run(s) in {} series\n", series.len());
    for s in series {
        out.push_str(&format!("\n{}\n", s.key.title()));
        let mut t = Grid::new();
        let mut header = vec![
            "run".to_string(),
            "saved (UTC)".into(),
            "commit".into(),
            "index".into(),
            "status".into(),
        ];
        header.extend(metrics_shown.iter().cloned());
        t.push_record(header);
        for run in &s.runs {
            let mut row = vec![
                run.id.to_string(),
                saved_at(run),
                commit_of(run),
                run.run_index.to_string(),
                run.exit_status.to_string(),
            ];
            for m in metrics_shown {
                row.push(
                    run.metric(m)
                        .map_or("-".into(), |v| metrics::unit_of(m).format(v)),
                );
            }
            t.push_record(row);
        }
        crate::render::text::right_aligned(&mut out, t.align_right(3..));
    }
    if series.iter().any(|s| {
        s.runs
            .iter()
            .any(|r| r.commit.as_ref().is_some_and(|c| c.dirty == Some(true)))
    }) {
        out.push_str("\n+: measured on a work tree with changes beside the commit\n");
    }
    out
}

/// The CSV columns before the metrics'.
const CSV_HEADER: [&str; 12] = [
    "run",
    "saved_utc",
    "host",
    "cpu_key",
    "kernel",
    "cpus",
    "command",
    "labels",
    "commit",
    "dirty",
    "index",
    "exit_status",
];

fn csv(series: &[Series], metrics_shown: &[String]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = CSV_HEADER
        .iter()
        .map(|s| s.to_string())
        .chain(metrics_shown.iter().cloned());
    w.write_record(header).expect("writing to memory");
    for run in series.iter().flat_map(|s| &s.runs) {
        let labels: Vec<String> = run.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut row = vec![
            run.id.to_string(),
            saved_at(run),
            run.machine.host.clone(),
            run.machine.cpu_key.clone(),
            run.machine.kernel.clone(),
            run.machine.cpus.to_string(),
            run.command.clone(),
            labels.join(" "),
            run.commit.as_ref().map_or(String::new(), |c| c.id.clone()),
            run.commit
                .as_ref()
                .and_then(|c| c.dirty)
                .map_or(String::new(), |d| d.to_string()),
            run.run_index.to_string(),
            run.exit_status.to_string(),
        ];
        row.extend(
            metrics_shown
                .iter()
                .map(|m| run.metric(m).map_or(String::new(), |v| v.to_string())),
        );
        w.write_record(row).expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("CSV of UTF-8 text")
}

#[derive(Serialize)]
struct JsonRun<'a> {
    run: i64,
    batch: &'a str,
    saved_utc: String,
    host: &'a str,
    cpu_key: &'a str,
    cpu_name: &'a str,
    kernel: &'a str,
    cpus: u32,
    arum_version: &'a str,
    command: &'a str,
    labels: serde_json::Map<String, serde_json::Value>,
    commit: Option<&'a str>,
    dirty: Option<bool>,
    index: u64,
    exit_status: i32,
    metrics: serde_json::Map<String, serde_json::Value>,
}

fn json(series: &[Series]) -> String {
    let runs: Vec<JsonRun<'_>> = series
        .iter()
        .flat_map(|s| &s.runs)
        .map(|r| JsonRun {
            run: r.id,
            batch: &r.batch,
            saved_utc: saved_at(r),
            host: &r.machine.host,
            cpu_key: &r.machine.cpu_key,
            cpu_name: &r.machine.cpu_name,
            kernel: &r.machine.kernel,
            cpus: r.machine.cpus,
            arum_version: &r.arum_version,
            command: &r.command,
            labels: r
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().into()))
                .collect(),
            commit: r.commit.as_ref().map(|c| c.id.as_str()),
            dirty: r.commit.as_ref().and_then(|c| c.dirty),
            index: r.run_index,
            exit_status: r.exit_status,
            metrics: r
                .metrics
                .iter()
                .map(|(k, v)| (k.clone(), (*v).into()))
                .collect(),
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&serde_json::json!({
        "schema": "arum.history/1",
        "runs": runs,
    }))
    .expect("runs always serialise");
    s.push('\n');
    s
}
