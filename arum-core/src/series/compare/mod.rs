//! `arum compare BASE.json NEW.json`: every metric of two reports or run series compared, with
//! Welch's t-test, and `--fail-if-worse` gates for CI.

pub mod analysis;
pub mod cells;
pub mod gate;
pub mod input;
pub mod text;

use std::path::PathBuf;

use serde::Serialize;

pub use analysis::{compare, Change, Comparison, MetricComparison};

use crate::error::ArumError;
use crate::report::metrics;
use crate::report::sink::Sink;

/// Exit status when a --fail-if-worse gate fails.
pub const EXIT_WORSE: i32 = 1;

#[derive(Debug, Clone)]
pub struct CompareRequest {
    /// The baseline: a report (`arum --format json -o FILE`) or a series (`--export-json FILE`).
    pub base: PathBuf,

    /// What is compared with it, of the same kinds.
    pub new: PathBuf,

    /// Compare only this metric (full name such as usage.wall_ns, a unique tail such as wall_ns,
    /// or wall, user, sys, memory); repeatable.
    pub metrics: Vec<String>,

    /// Compare every metric, not only the headline ones (time, CPU, memory and what was asked
    /// to be measured).
    pub all: bool,

    /// Exit with status 1 when METRIC is significantly worse by more than PCT percent
    /// (e.g. wall:5); repeatable.
    pub fail_if_worse: Vec<String>,

    /// Confidence level of intervals and tests: 0.9 or 90% (default).
    pub confidence: f64,

    /// In a series of several commands, the base one (its label, or its number from 1).
    pub base_name: Option<String>,

    /// In a series of several commands, the new one (its label, or its number from 1).
    pub new_name: Option<String>,

    /// Output format.
    pub format: CompareFormat,

    /// Write the comparison to FILE instead of stdout.
    pub output: Option<PathBuf>,

    /// Where `history:LABELS` sides come from.
    pub history: input::FromHistory,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareFormat {
    Text,
    Json,
}

#[derive(Serialize)]
struct Rendered<'a> {
    schema: &'static str,
    #[serde(flatten)]
    comparison: &'a Comparison,
    gates: &'a [gate::GateResult],
}

/// Runs `arum compare`; returns 0, or 1 when a gate failed.
pub fn run(args: &CompareRequest) -> Result<i32, ArumError> {
    let gates: Vec<gate::Gate> = args
        .fail_if_worse
        .iter()
        .map(|g| gate::parse(g))
        .collect::<Result<_, _>>()?;
    let sink = Sink::open_or_stdout(args.output.as_deref())?;
    let base = input::load(&args.base, args.base_name.as_deref(), &args.history)?;
    let new = input::load(&args.new, args.new_name.as_deref(), &args.history)?;

    let names: Vec<&str> = base.samples.names().iter().map(String::as_str).collect();
    let chosen: Vec<String> = args
        .metrics
        .iter()
        .map(|m| {
            metrics::resolve(m, &names)
                .map(str::to_string)
                .map_err(|why| ArumError::Usage(format!("--metric {m}: {why}")))
        })
        .collect::<Result<_, _>>()?;
    let gates: Vec<gate::Gate> = gates
        .iter()
        .map(|g| gate::resolve(g, &names))
        .collect::<Result<_, _>>()?;
    let wanted = |name: &str| {
        if chosen.is_empty() {
            args.all || metrics::headline(name)
        } else {
            chosen.iter().any(|c| c == name)
        }
    };
    let comparison = compare(
        (&base.label, &base.samples),
        (&new.label, &new.samples),
        args.confidence,
        &wanted,
    );
    // The gates' metrics are judged even when not shown.
    let gated = compare(
        (&base.label, &base.samples),
        (&new.label, &new.samples),
        args.confidence,
        &|name| gates.iter().any(|g| g.metric == name),
    );
    let results: Vec<gate::GateResult> = gates.iter().map(|g| gate::judge(g, &gated)).collect();
    let rendered = match args.format {
        CompareFormat::Text => text::render(&comparison, &results),
        CompareFormat::Json => {
            let mut s = serde_json::to_string_pretty(&Rendered {
                schema: "arum.compare/1",
                comparison: &comparison,
                gates: &results,
            })
            .expect("a comparison always serialises");
            s.push('\n');
            s
        }
    };
    sink.write_report(&rendered)?;
    Ok(if results.iter().any(|r| r.failed) {
        EXIT_WORSE
    } else {
        0
    })
}
