//! `arum history --html FILE`: one self-contained page with, for each chosen metric and each
//! series, the trend over commits (each commit's median and every run) and the change points
//! found in it, with the same defaults as `arum history changes`.

use crate::history::changes::{self, SeriesChanges};
use crate::history::trend::{self, Series};
use crate::render::html::page::{self, branch, figure, para, section, table};
use crate::render::html::plot;
use crate::report::metrics;

/// Commits named under the x axis at most; beyond, positions are numbered.
const NAMED_COMMITS: usize = 24;

pub fn render(series: &[Series], metrics_shown: &[String]) -> String {
    let runs: usize = series.iter().map(|s| s.runs.len()).sum();
    let lead = para(&format!(
        "{runs} saved run(s) in {} series (a command with its labels on one machine). Each \
         commit is one point, the median of its runs; change points by E-divisive means with a \
         permutation test (significance {}).",
        series.len(),
        changes::default_options().significance
    ));
    let options = changes::default_options();
    let body: String = metrics_shown
        .iter()
        .map(|m| {
            let found = changes::find(series, m, &options);
            let items: String = series
                .iter()
                .zip(&found)
                .map(|(s, c)| trend_of(s, c, m))
                .collect();
            section(&format!("metric-{m}"), m, &items)
        })
        .collect();
    page::document("arum: run history", &lead, &body)
}

fn trend_of(s: &Series, found: &SeriesChanges, metric: &str) -> String {
    let points = trend::points(s, metric);
    if points.is_empty() {
        return branch(&s.key.title(), &para("no saved run has this metric"));
    }
    let unit = metrics::unit_of(metric);
    let all: Vec<f64> = points.iter().flat_map(|p| p.values.clone()).collect();
    let (scale, axis) = plot::axis(unit, &all);
    let medians = plot::Series {
        name: "median of the commit's runs".into(),
        points: points
            .iter()
            .enumerate()
            .map(|(i, p)| (i as f64, p.median / scale))
            .collect(),
    };
    let each = plot::Series {
        name: "runs".into(),
        points: points
            .iter()
            .enumerate()
            .flat_map(|(i, p)| p.values.iter().map(move |v| (i as f64, v / scale)))
            .collect(),
    };
    let names: Vec<String> = points.iter().map(|p| p.short()).collect();
    let mut lines = vec![medians];
    if points.iter().any(|p| p.values.len() > 1) {
        lines.push(each);
    }
    let mut body = figure(plot::lines(
        &format!("{metric} by commit"),
        "commit",
        axis,
        &lines,
        (names.len() <= NAMED_COMMITS).then_some(names.as_slice()),
        plot::YAxis::Linear,
    ));
    if !found.searched {
        body.push_str(&para(
            "Too few commits to search: a change needs 3 on each side.",
        ));
    } else if found.changes.is_empty() {
        body.push_str(&para("No change point."));
    } else {
        let rows: Vec<Vec<String>> = found
            .changes
            .iter()
            .map(|c| {
                vec![
                    format!("{} → {}", c.before_commit, c.commit),
                    c.position.to_string(),
                    unit.format(c.mean_before),
                    unit.format(c.mean_after),
                    format!("{:+.1}%", c.relative_shift * 100.0),
                    format!("{:.3}", c.p_value),
                    if c.worse {
                        "worse".into()
                    } else {
                        String::new()
                    },
                ]
            })
            .collect();
        body.push_str(&table(
            &["between", "at commit", "before", "after", "shift", "p", ""],
            &rows,
        ));
    }
    branch(&s.key.title(), &body)
}
