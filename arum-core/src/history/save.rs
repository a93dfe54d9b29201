//! `--save[=STORE]`, `--label KEY=VALUE`, `--commit REV`: each measured run of a run or a
//! series kept in the store with its labels and commit. Saving comes after the report is
//! written: a store that cannot be reached costs a warning, never the report or the program's
//! exit status.

use arum_history::{Commit, Location, Record, Store};

use crate::error::ArumError;
use crate::history::commit;
use crate::history::record::{self, Context};
use crate::report::model::Report;

/// The options as given.
#[derive(Debug, Clone, Default)]
pub struct SaveRequest {
    /// `--save` (the default store: an empty string) or `--save=STORE`.
    pub store: Option<String>,
    /// `--label KEY=VALUE`, repeatable.
    pub labels: Vec<String>,
    /// `--commit REV`: the commit to record instead of the current directory's.
    pub commit: Option<String>,
}

/// Saving decided: where, with which labels and commit.
#[derive(Debug, Clone)]
pub struct Saving {
    pub location: Location,
    labels: Vec<(String, String)>,
    commit: Option<Commit>,
}

/// One measured run of a series, as saved.
pub struct SavedRun<'a> {
    pub command: &'a str,
    /// A series' parameters, saved as labels of the same names.
    pub parameters: Vec<(String, String)>,
    pub run_index: u64,
    pub exit_status: i32,
    pub report: &'a Report,
}

impl Saving {
    /// None without `--save`; labels and a commit without it are refused, since they would
    /// go nowhere.
    pub fn from_request(r: &SaveRequest) -> Result<Option<Saving>, ArumError> {
        let Some(store) = &r.store else {
            if !r.labels.is_empty() || r.commit.is_some() {
                return Err(ArumError::Usage(
                    "--label and --commit are saved with the run: add --save (or --save=STORE)"
                        .into(),
                ));
            }
            return Ok(None);
        };
        let location = Location::named_or_default(Some(store)).ok_or_else(|| {
            ArumError::Usage(
                "--save: no data directory to keep the history in (HOME unset?): name a \
                 store with --save=FILE or set ARUM_HISTORY"
                    .into(),
            )
        })?;
        let labels = parse_labels(&r.labels, "--label")?;
        // Read before the program runs: a program that checks out, builds or rewrites tracked
        // files must not change what its run is saved under.
        let commit = r
            .commit
            .as_ref()
            .map(|id| {
                if id.trim().is_empty() {
                    Err(ArumError::Usage(
                        "--commit: give the commit's id (e.g. $(git rev-parse HEAD))".into(),
                    ))
                } else {
                    Ok(Commit {
                        id: id.trim().to_string(),
                        dirty: None,
                    })
                }
            })
            .transpose()?
            .or_else(commit::current);
        Ok(Some(Saving {
            location,
            labels,
            commit,
        }))
    }

    /// Saves the runs as one batch, or warns on standard error why not.
    pub fn save(&self, runs: &[SavedRun<'_>]) {
        if runs.is_empty() {
            return;
        }
        let records: Vec<Record> = runs
            .iter()
            .map(|r| {
                let mut labels = self.labels.clone();
                for (k, v) in &r.parameters {
                    if !labels.iter().any(|(key, _)| key == k) {
                        labels.push((k.clone(), v.clone()));
                    }
                }
                labels.sort();
                record::of_report(
                    r.report,
                    &Context {
                        command: r.command,
                        labels: &labels,
                        commit: self.commit.as_ref(),
                        run_index: r.run_index,
                        exit_status: r.exit_status,
                    },
                )
            })
            .collect();
        let saved = Store::open(&self.location).and_then(|mut s| s.save(&records));
        if let Err(e) = saved {
            eprintln!("arum: warning: {} run(s) not saved: {e}", records.len());
        }
    }
}

/// `KEY=VALUE` words as pairs: each key once, not empty; `option` names them in errors.
pub fn parse_labels(words: &[String], option: &str) -> Result<Vec<(String, String)>, ArumError> {
    let mut labels: Vec<(String, String)> = Vec::new();
    for w in words {
        let Some((k, v)) = w
            .split_once('=')
            .filter(|(k, _)| !k.is_empty() && k.trim() == *k)
        else {
            return Err(ArumError::Usage(format!(
                "{option} {w:?}: write KEY=VALUE (a key without spaces around it), e.g. bench=parse"
            )));
        };
        if labels.iter().any(|(key, _)| key == k) {
            return Err(ArumError::Usage(format!(
                "{option} {k} is given twice: give each key once"
            )));
        }
        labels.push((k.to_string(), v.to_string()));
    }
    labels.sort();
    Ok(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(store: Option<&str>, labels: &[&str], commit: Option<&str>) -> SaveRequest {
        SaveRequest {
            store: store.map(str::to_string),
            labels: labels.iter().map(|s| s.to_string()).collect(),
            commit: commit.map(str::to_string),
        }
    }

    #[test]
    fn labels_and_commits_go_with_a_store_and_are_checked() {
        assert!(Saving::from_request(&request(None, &[], None))
            .unwrap()
            .is_none());
        for (r, says) in [
            (request(None, &["a=b"], None), "add --save"),
            (request(None, &[], Some("abc")), "add --save"),
            (request(Some("x.db"), &["=b"], None), "KEY=VALUE"),
            (request(Some("x.db"), &["ab"], None), "KEY=VALUE"),
            (request(Some("x.db"), &["a=1", "a=2"], None), "twice"),
            (request(Some("x.db"), &[], Some(" ")), "--commit"),
        ] {
            let e = Saving::from_request(&r).unwrap_err();
            assert_eq!(e.exit_code(), crate::error::EXIT_USAGE);
            assert!(e.to_string().contains(says), "{e}");
        }
        let s = Saving::from_request(&request(Some("x.db"), &["z=1", "a=x=y"], Some("c1")))
            .unwrap()
            .unwrap();
        assert_eq!(s.location, Location::Sqlite("x.db".into()));
        assert_eq!(
            s.labels,
            [
                ("a".to_string(), "x=y".to_string()),
                ("z".into(), "1".into())
            ],
            "sorted; a value may hold '='"
        );
        assert_eq!(s.commit.unwrap().id, "c1");
        let pg = Saving::from_request(&request(Some("postgresql://u@h/db"), &[], None))
            .unwrap()
            .unwrap();
        assert!(matches!(pg.location, Location::Postgres(_)));
    }
}
