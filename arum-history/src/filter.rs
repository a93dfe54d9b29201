//! Which runs a query reads. Labels select in the database (each run has few); the rest selects
//! among the runs read, in saved order.

use crate::record::StoredRun;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Runs that carry every one of these labels.
    pub labels: Vec<(String, String)>,
    /// Runs whose command contains this text.
    pub command: Option<String>,
    /// Runs measured on this host.
    pub host: Option<String>,
    /// Runs from the first saved with a commit that starts with this (in saved order) ...
    pub since: Option<String>,
    /// ... up to the last saved with a commit that starts with this.
    pub until: Option<String>,
    /// The last N runs that pass the rest.
    pub last: Option<usize>,
    /// The metrics read with each run (none when empty).
    pub metrics: Vec<String>,
}

impl Filter {
    /// Whether `run` passes the filters the database did not apply.
    fn admits(&self, run: &StoredRun) -> bool {
        self.command
            .as_deref()
            .is_none_or(|c| run.command.contains(c))
            && self.host.as_deref().is_none_or(|h| run.machine.host == h)
    }

    /// The runs of `runs` (in saved order) this filter selects; `Err` names a commit of
    /// `--since`/`--until` that no selected run has.
    pub fn select(&self, runs: Vec<StoredRun>) -> Result<Vec<StoredRun>, String> {
        let mut runs: Vec<StoredRun> = runs.into_iter().filter(|r| self.admits(r)).collect();
        let at = |prefix: &str, runs: &[StoredRun], first: bool| {
            let hit = |r: &StoredRun| r.commit.as_ref().is_some_and(|c| c.id.starts_with(prefix));
            let found = if first {
                runs.iter().position(hit)
            } else {
                runs.iter().rposition(hit)
            };
            found.ok_or_else(|| format!("no saved run of the selection has commit {prefix}"))
        };
        if let Some(since) = &self.since {
            let start = at(since, &runs, true)?;
            runs.drain(..start);
        }
        if let Some(until) = &self.until {
            let end = at(until, &runs, false).map_err(|e| match &self.since {
                Some(since) => format!("{e} from commit {since} on"),
                None => e,
            })?;
            runs.truncate(end + 1);
        }
        if let Some(n) = self.last {
            let skip = runs.len().saturating_sub(n);
            runs.drain(..skip);
        }
        Ok(runs)
    }
}
