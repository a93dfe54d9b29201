//! `--html` of a series of runs (`arum -r N`, several commands, parameters; the set exported as
//! arum.runs/1): each benchmark's summary, the distribution of every metric that varied, the
//! parameter sweep, and the comparisons with the first benchmark.

use crate::render::html::page::{self, esc, figure, item, list, para, section, table};
use crate::render::html::plot::{self, Series};
use crate::report::metrics;
use crate::series::compare::cells;
use crate::series::result::{Benchmark, RunSet};
use crate::series::samples::Samples;

/// Histograms drawn per benchmark; the other varying metrics are in its table.
const MAX_PLOTS: usize = 80;

type SetSection = fn(&RunSet) -> Option<String>;

/// The page's sections, in order: adding one is one function here (or a module) and one line.
const SECTIONS: &[SetSection] = &[benchmarks, sweep, distributions, comparisons, outliers];

pub fn render(set: &RunSet) -> String {
    let runs: usize = set.benchmarks.iter().map(|b| b.runs.len()).sum();
    let lead = para(&format!(
        "{} benchmark(s), {runs} measured run(s) ({} warm-up run(s) each not recorded); \
         intervals at {} confidence.{}",
        set.benchmarks.len(),
        set.warmup_runs,
        arum_units::percent::format_level(set.confidence_level),
        set.stopped_early
            .as_ref()
            .map_or(String::new(), |s| format!(" Stopped early: {s}."))
    ));
    let body: String = SECTIONS.iter().filter_map(|s| s(set)).collect();
    page::document("arum: repeated runs", &lead, &body)
}

fn shown(set: &RunSet) -> impl Fn(&str) -> bool + '_ {
    let _ = set;
    |name: &str| metrics::shown(name, false)
}

fn benchmarks(set: &RunSet) -> Option<String> {
    let keep = shown(set);
    let mut body = String::new();
    for b in &set.benchmarks {
        let rows: Vec<Vec<String>> = b
            .metrics
            .iter()
            .filter(|m| keep(&m.metric))
            .map(|m| {
                let u = metrics::unit_of(&m.metric);
                let s = &m.stats;
                vec![
                    m.metric.clone(),
                    s.n.to_string(),
                    u.format(s.mean),
                    u.format(s.median),
                    u.format(s.std_dev),
                    u.format(s.min),
                    u.format(s.max),
                    s.ci.as_ref()
                        .map_or(String::new(), |ci| cells::interval(u, ci)),
                    m.outlier_runs.len().to_string(),
                ]
            })
            .collect();
        let mut inner = describe(b);
        inner.push_str(&table(
            &[
                "metric", "runs", "mean", "median", "σ", "min", "max", "interval", "outliers",
            ],
            &rows,
        ));
        body.push_str(&item(
            &format!("{} ({} runs)", b.label, b.runs.len()),
            &inner,
        ));
    }
    Some(section(
        "benchmarks",
        "Benchmarks",
        &(overview(set) + &body),
    ))
}

/// One row per benchmark: its parameters and the headline metrics' means with their intervals.
fn overview(set: &RunSet) -> String {
    const HEADLINE: [&str; 4] = [
        "usage.wall_ns",
        "usage.user_ns",
        "usage.system_ns",
        "usage.peak_memory.peak_rss_bytes",
    ];
    let names: Vec<String> = set
        .benchmarks
        .first()
        .map(|b| b.parameters.iter().map(|p| p.name.clone()).collect())
        .unwrap_or_default();
    let rows: Vec<Vec<String>> = set
        .benchmarks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let mut row = vec![format!("#{}", i + 1)];
            row.extend(b.parameters.iter().map(|p| p.value.clone()));
            row.push(b.runs.len().to_string());
            for h in HEADLINE {
                let u = metrics::unit_of(h);
                row.push(
                    b.metrics
                        .iter()
                        .find(|m| m.metric == h)
                        .map_or(String::new(), |m| match &m.stats.ci {
                            Some(ci) => {
                                format!("{} [{}]", u.format(m.stats.mean), cells::interval(u, ci))
                            }
                            None => u.format(m.stats.mean),
                        }),
                );
            }
            row
        })
        .collect();
    let mut headers = vec!["benchmark"];
    headers.extend(names.iter().map(String::as_str));
    headers.extend([
        "runs",
        "wall time",
        "user time",
        "system time",
        "peak memory",
    ]);
    let commands: Vec<String> = set
        .benchmarks
        .iter()
        .enumerate()
        .map(|(i, b)| format!("#{}: {}", i + 1, b.label))
        .collect();
    table(&headers, &rows) + &list("notes", &commands)
}

fn describe(b: &Benchmark) -> String {
    let mut lines: Vec<String> = b
        .parameters
        .iter()
        .map(|p| format!("parameter {} = {}", p.name, p.value))
        .collect();
    lines.extend(
        b.env
            .iter()
            .map(|e| format!("{}={} in the environment", e.name, e.value)),
    );
    let failed = b.runs.iter().filter(|r| r.exit_status != 0).count();
    if failed > 0 {
        lines.push(format!("{failed} run(s) ended with a non-zero status"));
    }
    list("notes", &lines)
}

/// Metrics whose values varied, with the benchmark's values of each.
fn varying(b: &Benchmark) -> Vec<(String, Vec<f64>)> {
    let samples = Samples::of(b.runs.iter().map(|r| (r.index, &r.report)));
    b.metrics
        .iter()
        .filter(|m| metrics::shown(&m.metric, false) && m.stats.max > m.stats.min)
        .map(|m| (m.metric.clone(), samples.values(&m.metric)))
        .collect()
}

fn distributions(set: &RunSet) -> Option<String> {
    let mut body = para(
        "Every metric whose value varied between runs; the mean in red, the median in green. \
         Metrics that did not vary are in the benchmarks' tables.",
    );
    for b in &set.benchmarks {
        let all = varying(b);
        let mut inner = String::new();
        for (name, values) in all.iter().take(MAX_PLOTS) {
            let u = metrics::unit_of(name);
            let (scale, unit) = plot::axis(u, values);
            let scaled: Vec<f64> = values.iter().map(|v| v / scale).collect();
            let mean = arum_stats::mean(&scaled);
            let Some(median) = arum_stats::median(&scaled) else {
                continue;
            };
            inner.push_str(&item(
                &format!("{name}: mean {}", u.format(mean * scale)),
                &figure(plot::histogram(
                    &format!("{name}, {} runs", values.len()),
                    unit,
                    &scaled,
                    &[("mean", mean), ("median", median)],
                )),
            ));
        }
        if all.len() > MAX_PLOTS {
            inner.push_str(&para(&format!(
                "{} more metrics varied; their statistics are in the table above.",
                all.len() - MAX_PLOTS
            )));
        }
        if all.is_empty() {
            inner.push_str(&para("No metric varied between the runs."));
        }
        body.push_str(&format!("<h3>{}</h3>\n{inner}", esc(&b.label)));
    }
    Some(section("distributions", "Distributions", &body))
}

/// With parameters: the mean wall time of each command against each parameter's values (when
/// they are numbers).
fn sweep(set: &RunSet) -> Option<String> {
    let first = set.benchmarks.first()?;
    let mut body = String::new();
    for p in &first.parameters {
        let mut by_command: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for b in &set.benchmarks {
            let Some(x) = b
                .parameters
                .iter()
                .find(|q| q.name == p.name)
                .and_then(|q| q.value.parse::<f64>().ok())
            else {
                continue;
            };
            let Some(wall) = b.metrics.iter().find(|m| m.metric == "usage.wall_ns") else {
                continue;
            };
            // One line per command and values of the other parameters.
            let others: Vec<String> = b
                .parameters
                .iter()
                .filter(|q| q.name != p.name)
                .map(|q| format!("{}={}", q.name, q.value))
                .collect();
            let programs = set
                .benchmarks
                .iter()
                .any(|o| o.command.first() != b.command.first());
            let command = match (programs, others) {
                (_, o) if o.is_empty() => b.command.first().cloned().unwrap_or_default(),
                (false, o) => o.join(" "),
                (true, o) => format!(
                    "{} {}",
                    b.command.first().cloned().unwrap_or_default(),
                    o.join(" ")
                ),
            };
            let point = (x, wall.stats.mean / 1e6);
            match by_command.iter_mut().find(|(c, _)| *c == command) {
                Some((_, pts)) => pts.push(point),
                None => by_command.push((command, vec![point])),
            }
        }
        let series: Vec<Series> = by_command
            .into_iter()
            .filter(|(_, pts)| pts.len() >= 2)
            .map(|(name, mut points)| {
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series { name, points }
            })
            .collect();
        if !series.is_empty() {
            body.push_str(&figure(plot::lines(
                &format!("Mean wall time by {}", p.name),
                &p.name,
                "ms",
                &series,
                None,
                plot::YAxis::Linear,
            )));
        }
    }
    (!body.is_empty()).then(|| section("sweep", "Parameter sweep", &body))
}

fn comparisons(set: &RunSet) -> Option<String> {
    if set.comparisons.is_empty() {
        return None;
    }
    let mut body = String::new();
    for c in &set.comparisons {
        let rows: Vec<Vec<String>> = c
            .metrics
            .iter()
            .map(|m| {
                let u = metrics::unit_of(&m.metric);
                vec![
                    m.metric.clone(),
                    u.format(m.base_mean),
                    u.format(m.new_mean),
                    m.percent().map_or(String::new(), |p| format!("{p:+.2}%")),
                    cells::ratio(m),
                    cells::p(m.p_value),
                    cells::p(m.p_adjusted),
                    cells::verdict(m),
                ]
            })
            .collect();
        let mut inner = para(&format!(
            "{} ({} runs) against {} ({} runs){}.",
            c.new,
            c.new_runs,
            c.base,
            c.base_runs,
            if c.tested {
                let family = c.metrics.iter().filter(|m| m.p_value.is_some()).count();
                format!(
                    ". {}",
                    cells::legend(
                        &arum_units::percent::format_level(c.confidence_level),
                        family
                    )
                )
            } else {
                "; too few runs to test significance".into()
            }
        ));
        inner.push_str(&table(
            &[
                "metric",
                "base mean",
                "new mean",
                "change",
                "ratio [interval]",
                "p",
                "p adj.",
                "verdict",
            ],
            &rows,
        ));
        body.push_str(&format!("<h3>{}</h3>\n{inner}", esc(&c.new)));
    }
    Some(section(
        "comparisons",
        "Comparisons with the first benchmark",
        &body,
    ))
}

fn outliers(set: &RunSet) -> Option<String> {
    let lines: Vec<String> = set
        .benchmarks
        .iter()
        .flat_map(|b| {
            b.outliers.iter().map(move |o| {
                format!(
                    "{}: run {} stood out in wall time; {}",
                    b.label,
                    o.run,
                    o.notes.join("; ")
                )
            })
        })
        .collect();
    let body = if lines.is_empty() {
        para("No run stood out in wall time.")
    } else {
        list("notes warn", &lines)
    };
    Some(section("outliers", "Outlier runs", &body))
}
