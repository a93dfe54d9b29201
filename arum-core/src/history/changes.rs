//! `arum history changes METRIC`: where a series of saved runs changed level, found by
//! E-divisive means with a permutation test (`arum_stats::changepoint`) over the median of each
//! commit, each with the commits between which it happened, the shift and its p-value;
//! `--fail-if-worse` makes a change for the worse a failed exit status, for CI.

use serde::Serialize;

use crate::error::ArumError;
use crate::fields::Better;
use crate::history::query::{self, HistoryFormat, HistoryRequest};
use crate::history::trend::{self, Point, Series};
use crate::report::metrics;
use crate::report::sink::Sink;
use arum_stats::{change_points, ChangePointOptions};

/// Exit status when `--fail-if-worse` finds a change for the worse (as `compare`'s gate).
pub const EXIT_WORSE: i32 = 1;

/// Shifts smaller than this share of the level before are not reported (`--min-change`).
pub const DEFAULT_MIN_CHANGE: f64 = 0.01;

/// The search `arum history changes` makes without options, and the HTML page shows.
pub fn default_options() -> ChangePointOptions {
    ChangePointOptions {
        min_relative_shift: DEFAULT_MIN_CHANGE,
        ..ChangePointOptions::default()
    }
}

#[derive(Debug, Clone)]
pub struct ChangesRequest {
    /// The store, the filters and the metric (its one entry in `query.metrics`).
    pub query: HistoryRequest,
    /// Significance level of each change point's permutation test.
    pub significance: f64,
    /// Smallest shift reported, a fraction of the level before it.
    pub min_change: f64,
    pub fail_if_worse: bool,
}

/// The change points of one series.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesChanges {
    pub series: String,
    pub command: String,
    pub labels: Vec<(String, String)>,
    pub host: String,
    pub cpu_key: String,
    pub cpus: u32,
    /// Commits (points) in the series.
    pub commits: usize,
    /// Whether there were enough to search: a change point needs `min_segment` commits on
    /// each side (6 in all by default).
    pub searched: bool,
    pub changes: Vec<Change>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// The last commit before the change and the first after it: it happened between them.
    pub before_commit: String,
    pub commit: String,
    /// The position of `commit` in the series, from 1.
    pub position: usize,
    pub mean_before: f64,
    pub mean_after: f64,
    /// (after - before) / before.
    pub relative_shift: f64,
    pub p_value: f64,
    /// Whether the metric got worse, by the direction its table of fields declares.
    pub worse: bool,
}

#[derive(Serialize)]
struct Rendered<'a> {
    schema: &'static str,
    metric: &'a str,
    significance: f64,
    min_change: f64,
    series: &'a [SeriesChanges],
}

/// The options of the search for `r`.
pub fn options(r: &ChangesRequest) -> ChangePointOptions {
    ChangePointOptions {
        significance: r.significance,
        min_relative_shift: r.min_change,
        ..ChangePointOptions::default()
    }
}

/// The change points of `metric` in each series of `series`.
pub fn find(series: &[Series], metric: &str, options: &ChangePointOptions) -> Vec<SeriesChanges> {
    let better = metrics::better(metric);
    series
        .iter()
        .map(|s| {
            let points = trend::points(s, metric);
            SeriesChanges {
                series: s.key.title(),
                command: s.key.command.clone(),
                labels: s.key.labels.clone(),
                host: s.key.host.clone(),
                cpu_key: s.key.cpu_key.clone(),
                cpus: s.key.cpus,
                commits: points.len(),
                searched: points.len() >= 2 * options.min_segment.max(2),
                changes: changes_of(&points, options, better),
            }
        })
        .collect()
}

fn changes_of(points: &[Point], options: &ChangePointOptions, better: Better) -> Vec<Change> {
    let medians: Vec<f64> = points.iter().map(|p| p.median).collect();
    change_points(&medians, options)
        .into_iter()
        .map(|c| Change {
            before_commit: points[c.index - 1].short(),
            commit: points[c.index].short(),
            position: c.index + 1,
            mean_before: c.mean_before,
            mean_after: c.mean_after,
            relative_shift: c.relative_shift,
            p_value: c.p_value,
            worse: match better {
                Better::Lower => c.mean_after > c.mean_before,
                Better::Higher => c.mean_after < c.mean_before,
                Better::Neither => false,
            },
        })
        .collect()
}

pub fn run(r: &ChangesRequest) -> Result<i32, ArumError> {
    let options = options(r);
    // The smallest p-value the permutations can give: below it nothing could ever be found.
    let floor = 1.0 / (options.permutations as f64 + 1.0);
    if !(r.significance >= floor && r.significance < 1.0) {
        return Err(ArumError::Usage(format!(
            "--significance {}: give a level from {floor:.3} (the smallest p-value of {} \
             permutations) to below 1, e.g. 0.01",
            r.significance, options.permutations
        )));
    }
    let sink = Sink::open_or_stdout(r.query.output.as_deref())?;
    let (runs, metrics_chosen) = query::select(&r.query)?;
    let metric = &metrics_chosen[0];
    if r.fail_if_worse && metrics::better(metric) == Better::Neither {
        return Err(ArumError::Usage(format!(
            "--fail-if-worse: {metric} is better neither higher nor lower; gate a time, a count \
             of work or a rate"
        )));
    }
    let found = find(&trend::series_of(runs), metric, &options);
    let rendered = match r.query.format {
        HistoryFormat::Json => {
            let mut s = serde_json::to_string_pretty(&Rendered {
                schema: "arum.changes/1",
                metric,
                significance: r.significance,
                min_change: r.min_change,
                series: &found,
            })
            .expect("change points always serialise");
            s.push('\n');
            s
        }
        _ => text(metric, r, &found),
    };
    sink.write_report(&rendered)?;
    let worse = found.iter().flat_map(|s| &s.changes).any(|c| c.worse);
    Ok(if r.fail_if_worse && worse {
        EXIT_WORSE
    } else {
        0
    })
}

fn text(metric: &str, r: &ChangesRequest, found: &[SeriesChanges]) -> String {
    let unit = metrics::unit_of(metric);
    let mut out = format!(
        "change points of {metric} (significance {}, shifts of at least {}), {} series\n",
        r.significance,
        arum_units::percent::format_fraction(r.min_change),
        found.len()
    );
    for s in found {
        out.push_str(&format!("{}: {} commits\n", s.series, s.commits));
        if !s.searched {
            out.push_str("  too few commits to search: a change needs 3 on each side\n");
        } else if s.changes.is_empty() {
            out.push_str("  no change point\n");
        }
        for c in &s.changes {
            out.push_str(&format!(
                "  between {} and {} (commit {}): {} -> {} ({:+.1}%), p = {:.3}{}\n",
                c.before_commit,
                c.commit,
                c.position,
                unit.format(c.mean_before),
                unit.format(c.mean_after),
                c.relative_shift * 100.0,
                c.p_value,
                if c.worse { ", worse" } else { "" }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(values: &[f64]) -> Vec<Point> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| Point {
                commit: format!("c{}", i + 1),
                dirty: false,
                values: vec![*v],
                median: *v,
            })
            .collect()
    }

    /// A level that rises is worse for a time and better for a rate; a metric that goes
    /// neither way is never worse.
    #[test]
    fn a_change_is_worse_by_the_metric_s_direction() {
        let mut values = vec![100.0; 12];
        values.extend([120.0; 12]);
        let p = points(&values);
        let options = ChangePointOptions::default();
        for (better, worse) in [
            (Better::Lower, true),
            (Better::Higher, false),
            (Better::Neither, false),
        ] {
            let found = changes_of(&p, &options, better);
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0].commit, "c13");
            assert_eq!(found[0].before_commit, "c12");
            assert_eq!(found[0].position, 13);
            assert_eq!(found[0].worse, worse, "{better:?}");
        }
        assert!(changes_of(&points(&[100.0; 24]), &options, Better::Lower).is_empty());
    }
}
