//! Saved runs as series: the runs of one command with the same labels on one machine, each a
//! metric's values over commits. A commit's runs make one point, their median: a series run
//! several times per commit (`-r`) weighs each commit once.

use arum_history::StoredRun;

/// What makes runs comparable: the machine, the command and the labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesKey {
    pub host: String,
    pub cpu_key: String,
    pub cpus: u32,
    pub command: String,
    pub labels: Vec<(String, String)>,
}

impl SeriesKey {
    fn of(run: &StoredRun) -> SeriesKey {
        SeriesKey {
            host: run.machine.host.clone(),
            cpu_key: run.machine.cpu_key.clone(),
            cpus: run.machine.cpus,
            command: run.command.clone(),
            labels: run.labels.clone(),
        }
    }

    /// One line for people: command, labels, machine.
    pub fn title(&self) -> String {
        let labels: Vec<String> = self
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let labels = if labels.is_empty() {
            String::new()
        } else {
            format!(" [{}]", labels.join(", "))
        };
        format!(
            "{}{labels} on {} ({}, {} CPUs)",
            self.command, self.host, self.cpu_key, self.cpus
        )
    }
}

/// The runs of one series, in saved order.
#[derive(Debug, Clone)]
pub struct Series {
    pub key: SeriesKey,
    pub runs: Vec<StoredRun>,
}

/// `runs` (in saved order) split into series, in the order each first appears.
pub fn series_of(runs: Vec<StoredRun>) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for run in runs {
        let key = SeriesKey::of(&run);
        match out.iter_mut().find(|s| s.key == key) {
            Some(s) => s.runs.push(run),
            None => out.push(Series {
                key,
                runs: vec![run],
            }),
        }
    }
    out
}

/// One commit's runs in a series: those measured on the commit as it is, or those measured on
/// a work tree with changes beside it (a point of their own: they measured other code). A run
/// without a commit is a point of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The commit's id, or `run N` for a run saved without one.
    pub commit: String,
    /// Whether its runs were measured on a tree with changes beside the commit.
    pub dirty: bool,
    /// The metric's value in each of its runs.
    pub values: Vec<f64>,
    pub median: f64,
}

impl Point {
    /// The commit as a table shows it (see [`short_commit`]).
    pub fn short(&self) -> String {
        short_commit(&self.commit, self.dirty)
    }
}

/// A commit as tables and plots show it: 12 characters of a git hash (SHA-1 or SHA-256), other
/// names (`--commit v1.2`) whole; `+` when measured on a tree with changes beside it.
pub fn short_commit(id: &str, dirty: bool) -> String {
    let id: String = if id.len() == 40 || id.len() == 64 {
        id.chars().take(12).collect()
    } else {
        id.to_string()
    };
    if dirty {
        format!("{id}+")
    } else {
        id
    }
}

/// The points of `metric` in `series`, in the order each commit was first saved (a CI job saves
/// commits in the order they land; a commit saved again later joins its first point); runs
/// without the metric are left out.
pub fn points(series: &Series, metric: &str) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    for run in &series.runs {
        let Some(value) = run.metric(metric) else {
            continue;
        };
        let commit = run
            .commit
            .as_ref()
            .map_or_else(|| format!("run {}", run.id), |c| c.id.clone());
        let dirty = run.commit.as_ref().and_then(|c| c.dirty).unwrap_or(false);
        match out
            .iter_mut()
            .find(|p| p.commit == commit && p.dirty == dirty)
        {
            Some(p) => p.values.push(value),
            None => out.push(Point {
                commit,
                dirty,
                values: vec![value],
                median: 0.0,
            }),
        }
    }
    for p in &mut out {
        p.median = arum_stats::median(&p.values).unwrap_or(f64::NAN);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use arum_history::{Commit, Machine};

    fn run(id: i64, command: &str, commit: Option<&str>, dirty: bool, wall: f64) -> StoredRun {
        StoredRun {
            id,
            batch: "b".into(),
            saved_unix_ns: id,
            started_unix_ns: id,
            machine: Machine {
                host: "h".into(),
                cpu_key: "k".into(),
                cpu_name: "n".into(),
                kernel: "6".into(),
                cpus: 2,
            },
            arum_version: "0".into(),
            command: command.into(),
            labels: vec![("bench".into(), "x".into())],
            commit: commit.map(|c| Commit {
                id: c.into(),
                dirty: Some(dirty),
            }),
            run_index: 0,
            exit_status: 0,
            metrics: vec![("usage.wall_ns".into(), wall)],
        }
    }

    #[test]
    fn runs_split_by_command_and_commits_are_one_median_point_each() {
        let runs = vec![
            run(1, "a", Some("c1"), false, 10.0),
            run(2, "b", Some("c1"), false, 99.0),
            run(3, "a", Some("c1"), false, 30.0),
            run(4, "a", Some("c2"), true, 20.0),
            run(5, "a", None, false, 5.0),
            run(6, "a", Some("c1"), false, 20.0),
            run(7, "a", Some("c2"), false, 40.0),
        ];
        let series = series_of(runs);
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].key.command, "a");
        assert_eq!(series[0].runs.len(), 6);
        let points = points(&series[0], "usage.wall_ns");
        let summary: Vec<(&str, bool, usize, f64)> = points
            .iter()
            .map(|p| (p.commit.as_str(), p.dirty, p.values.len(), p.median))
            .collect();
        assert_eq!(
            summary,
            [
                ("c1", false, 3, 20.0),
                ("c2", true, 1, 20.0),
                ("run 5", false, 1, 5.0),
                ("c2", false, 1, 40.0)
            ]
        );
        assert_eq!(points[1].short(), "c2+");
        assert!(super::points(&series[0], "usage.user_ns").is_empty());
    }
}
