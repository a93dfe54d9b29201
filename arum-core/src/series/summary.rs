//! Statistics of a benchmark's runs: every metric summarised, and the runs that stood out, with
//! what the machine was doing in them.

use super::result::{MetricSummary, OutlierRun, Run};
use crate::report::metrics;
use crate::series::samples::Samples;

/// The statistics of every metric over `runs`, and the outlier runs of the metrics a person
/// reads (per-CPU breakdowns and arum's own timing are summarised but not warned about).
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
        if metrics::shown(name, false) {
            for &run in &outlier_runs {
                match flagged.iter_mut().find(|o| o.run == run) {
                    Some(o) => o.metrics.push(name.clone()),
                    None => flagged.push(OutlierRun {
                        run,
                        metrics: vec![name.clone()],
                        notes: notes_of(runs, run),
                    }),
                }
            }
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
