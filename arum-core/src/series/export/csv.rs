//! One row per command and metric, numbers in the metric's own unit, which the `unit` column
//! names (as the model's tables of fields declare it).

use crate::report::metrics;
use crate::series::result::RunSet;

pub const HEADER: [&str; 15] = [
    "command",
    "parameters",
    "metric",
    "unit",
    "n",
    "mean",
    "median",
    "std_dev",
    "min",
    "max",
    "ci_level",
    "ci_low",
    "ci_high",
    "outlier_runs",
    "failed_runs",
];

pub fn render(set: &RunSet) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER).expect("writing to memory");
    for b in &set.benchmarks {
        let params = b
            .parameters
            .iter()
            .map(|p| format!("{}={}", p.name, p.value))
            .collect::<Vec<_>>()
            .join(" ");
        let failed = b.runs.iter().filter(|r| r.exit_status != 0).count();
        for m in &b.metrics {
            let s = &m.stats;
            let (lo, hi) = s.ci.map_or((String::new(), String::new()), |c| {
                (c.low.to_string(), c.high.to_string())
            });
            w.write_record([
                b.label.clone(),
                params.clone(),
                m.metric.clone(),
                metrics::unit_of(&m.metric).name().to_string(),
                s.n.to_string(),
                s.mean.to_string(),
                s.median.to_string(),
                s.std_dev.to_string(),
                s.min.to_string(),
                s.max.to_string(),
                set.confidence_level.to_string(),
                lo,
                hi,
                m.outlier_runs
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(" "),
                failed.to_string(),
            ])
            .expect("writing to memory");
        }
    }
    String::from_utf8(w.into_inner().expect("flushing to memory")).expect("CSV of UTF-8 input")
}
