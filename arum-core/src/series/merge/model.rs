//! The merged view of a job's ranks (JSON schema `arum.merge/1`), computed from their reports.

use serde::{Deserialize, Serialize};

use crate::report::metrics;
use crate::report::model::Report;
use crate::series::samples::Samples;

pub const SCHEMA: &str = "arum.merge/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Merged {
    pub schema: String,
    pub job_id: Option<String>,
    /// Ranks in the job, as the launcher said (the largest size any report gives).
    pub size: Option<u32>,
    pub hosts: Vec<String>,
    pub ranks: Vec<RankRow>,
    /// Every metric over the ranks.
    pub metrics: Vec<Spread>,
    pub slowest: Option<Slowest>,
    /// Missing or repeated ranks, reports without a rank, differing commands.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    pub rank: u32,
    pub host: String,
    pub file: String,
    pub exit_status: i32,
    pub wall_ns: u64,
    pub user_ns: u64,
    pub system_ns: u64,
    pub peak_rss_bytes: Option<u64>,
}

/// One metric over the ranks: the total (sum), the mean, the extremes and where they were.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub metric: String,
    pub ranks: usize,
    pub total: f64,
    pub mean: f64,
    pub min: f64,
    pub min_rank: u32,
    pub max: f64,
    pub max_rank: u32,
    /// max / mean: 1 is perfect balance (none when the mean is 0).
    pub imbalance: Option<f64>,
}

/// The rank that took longest, and what might explain it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slowest {
    pub rank: u32,
    pub host: String,
    pub wall_ns: u64,
    /// How much longer than the mean of the ranks, in percent.
    pub above_mean_percent: f64,
    /// Its ambient interference notes, or why there are none.
    pub notes: Vec<String>,
}

/// A report with its rank and its file's name.
type Ranked<'a> = (u32, &'a String, &'a Report);

/// Merges `(file name, report)` pairs. A report without rank information takes its position
/// among the files as its rank (and a note says so).
pub fn merge(reports: &[(String, Report)]) -> Merged {
    let mut notes = Vec::new();
    let ranked = by_rank(reports, &mut notes);
    let size = reports
        .iter()
        .filter_map(|(_, r)| r.rank.as_ref()?.size)
        .max();
    if let Some(n) = size {
        notes.extend(missing_ranks(n, &ranked));
    }
    notes.extend(failed_ranks(&ranked));
    let mut commands: Vec<&Vec<String>> = ranked.iter().map(|(_, _, r)| &r.command.argv).collect();
    commands.dedup();
    if commands.len() > 1 {
        notes.push("the ranks ran different commands (MPMD)".into());
    }
    let job_id = reports
        .iter()
        .find_map(|(_, r)| r.rank.as_ref()?.job_id.clone());
    let mut hosts: Vec<String> = ranked
        .iter()
        .map(|(_, _, r)| r.metadata.host.clone())
        .collect();
    hosts.sort();
    hosts.dedup();

    let rows: Vec<RankRow> = ranked
        .iter()
        .map(|&(rank, file, r)| rank_row(rank, file, r))
        .collect();

    let samples = Samples::of(ranked.iter().map(|(rank, _, r)| (u64::from(*rank), *r)));
    let spreads = samples
        .names()
        .iter()
        .filter_map(|name| spread(name, samples.numbered(name)))
        .collect();

    Merged {
        schema: SCHEMA.into(),
        job_id,
        size,
        hosts,
        ranks: rows,
        metrics: spreads,
        slowest: slowest(&ranked),
        notes,
    }
}

/// The reports in the order of their ranks (a report without one takes its position), with a
/// note for each report without a rank and each rank that appears twice.
fn by_rank<'a>(reports: &'a [(String, Report)], notes: &mut Vec<String>) -> Vec<Ranked<'a>> {
    let mut ranked: Vec<Ranked<'a>> = Vec::new();
    for (i, (file, r)) in reports.iter().enumerate() {
        let rank = match &r.rank {
            Some(info) => info.rank,
            None => {
                notes.push(format!(
                    "{file} has no rank (not started by mpirun or srun): taken as rank {i}"
                ));
                i as u32
            }
        };
        ranked.push((rank, file, r));
    }
    ranked.sort_by_key(|(rank, _, _)| *rank);
    for w in ranked.windows(2) {
        if w[0].0 == w[1].0 {
            notes.push(format!(
                "rank {} appears twice ({} and {})",
                w[0].0, w[0].1, w[1].1
            ));
        }
    }
    ranked
}

/// The note naming the ranks of a job of `n` that have no report, if any.
fn missing_ranks(n: u32, ranked: &[Ranked<'_>]) -> Option<String> {
    let missing: Vec<String> = (0..n)
        .filter(|k| !ranked.iter().any(|(r, _, _)| r == k))
        .map(|k| k.to_string())
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "the job had {n} ranks; no report for rank {}",
            missing.join(", ")
        )
    })
}

/// A note per rank whose program failed (non-zero status or a signal): its totals are in the
/// merge, but a failed rank's times are rarely comparable with the others'.
fn failed_ranks(ranked: &[Ranked<'_>]) -> Vec<String> {
    ranked
        .iter()
        .filter(|(_, _, r)| r.exit.status != 0)
        .map(|(rank, file, r)| format!("rank {rank} failed: {} ({file})", r.exit.describe()))
        .collect()
}

fn rank_row(rank: u32, file: &str, r: &Report) -> RankRow {
    RankRow {
        rank,
        host: r.metadata.host.clone(),
        file: file.to_string(),
        exit_status: r.exit.status,
        wall_ns: r.usage.wall_ns,
        user_ns: r.usage.user_ns,
        system_ns: r.usage.system_ns,
        peak_rss_bytes: r.usage.peak_memory.as_ref().map(|p| p.peak_rss_bytes),
    }
}

/// The rank with the longest wall time (the last of equals), how far above the mean, and its
/// ambient notes.
fn slowest(ranked: &[Ranked<'_>]) -> Option<Slowest> {
    ranked
        .iter()
        .max_by_key(|(_, _, r)| r.usage.wall_ns)
        .map(|(rank, _, r)| {
            let mean = ranked
                .iter()
                .map(|(_, _, r)| r.usage.wall_ns as f64)
                .sum::<f64>()
                / ranked.len() as f64;
            Slowest {
                rank: *rank,
                host: r.metadata.host.clone(),
                wall_ns: r.usage.wall_ns,
                above_mean_percent: if mean > 0.0 {
                    (r.usage.wall_ns as f64 / mean - 1.0) * 100.0
                } else {
                    0.0
                },
                notes: match &r.ambient {
                    Some(a) if a.notes.is_empty() => {
                        vec!["its ambient sampler saw no interference".into()]
                    }
                    Some(a) => a.notes.clone(),
                    None => vec![
                        "no ambient data: run the ranks with --ambient to see what their machines were doing".into(),
                    ],
                },
            }
        })
}

fn spread(name: &str, values: &[(u64, f64)]) -> Option<Spread> {
    let first = values.first()?;
    let (mut min, mut max) = (*first, *first);
    for v in values {
        if v.1 < min.1 {
            min = *v;
        }
        if v.1 > max.1 {
            max = *v;
        }
    }
    let total: f64 = values.iter().map(|(_, v)| v).sum();
    let mean = total / values.len() as f64;
    Some(Spread {
        metric: name.to_string(),
        ranks: values.len(),
        total,
        mean,
        min: min.1,
        min_rank: min.0 as u32,
        max: max.1,
        max_rank: max.0 as u32,
        imbalance: (mean != 0.0).then(|| max.1 / mean),
    })
}

/// Whether a metric's values over the ranks add up to a total worth showing: not shares and
/// quotients (by the metric's unit).
pub fn additive(name: &str) -> bool {
    metrics::unit_of(name).additive()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::RankInfo;

    fn rank_report(rank: u32, wall_ns: u64, user_ns: u64) -> Report {
        let mut r = crate::report::testing::report(wall_ns, 0);
        r.usage.user_ns = user_ns;
        r.rank = Some(RankInfo {
            rank,
            size: Some(2),
            local_rank: Some(rank),
            job_id: Some("42".into()),
            launcher: "slurm".into(),
        });
        r
    }

    #[test]
    fn two_ranks_give_rows_totals_and_the_slowest() {
        let m = merge(&[
            ("run-1.json".into(), rank_report(1, 300, 250)),
            ("run-0.json".into(), rank_report(0, 100, 90)),
        ]);
        assert_eq!(m.ranks.iter().map(|r| r.rank).collect::<Vec<_>>(), [0, 1]);
        let wall = m
            .metrics
            .iter()
            .find(|s| s.metric == "usage.wall_ns")
            .unwrap();
        assert_eq!(
            (wall.total, wall.mean, wall.min, wall.max),
            (400.0, 200.0, 100.0, 300.0)
        );
        assert_eq!(
            (wall.min_rank, wall.max_rank, wall.imbalance),
            (0, 1, Some(1.5))
        );
        let user = m
            .metrics
            .iter()
            .find(|s| s.metric == "usage.user_ns")
            .unwrap();
        assert_eq!(user.total, 340.0);
        let slow = m.slowest.unwrap();
        assert_eq!((slow.rank, slow.above_mean_percent), (1, 50.0));
        assert_eq!((m.job_id.as_deref(), m.size), (Some("42"), Some(2)));
        assert!(m.notes.is_empty(), "{:?}", m.notes);
    }

    #[test]
    fn missing_and_repeated_ranks_are_noted() {
        let mut r = rank_report(1, 5, 5);
        r.rank.as_mut().unwrap().size = Some(3);
        let m = merge(&[("a".into(), r.clone()), ("b".into(), r)]);
        assert!(m.notes.iter().any(|n| n.contains("rank 1 appears twice")));
        assert!(m
            .notes
            .iter()
            .any(|n| n.contains("no report for rank 0, 2")));
    }
}
