//! Statistics of a benchmark's runs: every metric summarised, and the runs that stood out, with
//! what the machine was doing in them. A run stands out by its wall time, as in hyperfine: at a
//! modified z-score of 3.5, a hundred metrics would flag a third of all runs in something, so the
//! other metrics' outliers are counted per metric (`outlier_runs`) and summarised in one line.

use super::result::{MetricSummary, OutlierRun, Run};
use crate::series::samples::Samples;

/// The metric a run is judged an outlier by.
pub const PRIMARY: &str = "usage.wall_ns";

/// The statistics of every metric over `runs`, and the runs that are outliers in wall time.
pub fn summarise(runs: &[Run], level: f64) -> (Vec<MetricSummary>, Vec<OutlierRun>) {
    let samples = Samples::of(runs.iter().map(|r| (r.index, &r.report)));
    let mut summaries = Vec::new();
    let mut flagged: Vec<OutlierRun> = Vec::new();
    for name in samples.names() {
        let numbered = samples.numbered(name);
        let values: Vec<f64> = numbered.iter().map(|(_, v)| *v).collect();
        let Some(stats) = arum_stats::Summary::of(&values, level) else {
            continue;
        };
        let outlier_runs: Vec<u64> = arum_stats::outliers(&values)
            .into_iter()
            .map(|i| numbered[i].0)
            .collect();
        if name == PRIMARY {
            flagged.extend(outlier_runs.iter().map(|&run| OutlierRun {
                run,
                metrics: vec![name.clone()],
                notes: notes_of(runs, run),
            }));
        }
        summaries.push(MetricSummary {
            metric: name.clone(),
            stats,
            outlier_runs,
        });
    }
    flagged.sort_by_key(|o| o.run);
    (summaries, flagged)
}

/// What explains a run: its ambient interference notes, or why there are none.
fn notes_of(runs: &[Run], index: u64) -> Vec<String> {
    let Some(run) = runs.iter().find(|r| r.index == index) else {
        return Vec::new();
    };
    match &run.report.ambient {
        Some(a) if a.notes.is_empty() => {
            vec!["the ambient sampler saw no interference".into()]
        }
        Some(a) => a.notes.clone(),
        None => vec!["no ambient data: add --ambient to see what the machine was doing".into()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::report;

    fn runs(walls: &[u64], switches: &[u64]) -> Vec<Run> {
        walls
            .iter()
            .zip(switches)
            .enumerate()
            .map(|(i, (&w, &s))| {
                let mut r = report(w, 0);
                r.usage.involuntary_context_switches = s;
                Run {
                    index: i as u64 + 1,
                    exit_status: 0,
                    report: r,
                }
            })
            .collect()
    }

    // Ten runs of a steady program: a run whose switches stand out is counted in that metric's
    // outlier runs but warned about only when its wall time stands out.
    #[test]
    fn only_wall_time_makes_a_run_an_outlier() {
        let walls = [100, 101, 99, 100, 102, 100, 98, 100, 101, 100];
        let switches = [0, 0, 0, 0, 9, 0, 0, 0, 0, 0];
        let (metrics, flagged) = summarise(&runs(&walls, &switches), 0.9);
        assert!(flagged.is_empty(), "{flagged:?}");
        let sw = metrics
            .iter()
            .find(|m| m.metric == "usage.involuntary_context_switches")
            .unwrap();
        assert_eq!(sw.outlier_runs, vec![5]);

        let walls = [100, 101, 99, 100, 102, 100, 98, 100, 101, 400];
        let (_, flagged) = summarise(&runs(&walls, &switches), 0.9);
        assert_eq!(flagged.len(), 1);
        assert_eq!(
            (flagged[0].run, flagged[0].metrics.as_slice()),
            (10, &[PRIMARY.to_string()][..])
        );
    }
}
