//! Saved figures (`--save`) and what a later `arum` run makes of them: the time its context
//! switches, page faults and process and thread creations probably cost, as count × the cost
//! calibrated on this machine, labelled as estimates.
//!
//! The file is the whole calibration (`arum.calibration/1` JSON) under the user's cache
//! directory, `$XDG_CACHE_HOME/arum/calibration/<host>_<cpu>_<kernel>.json`: figures measured on
//! another host, CPU or kernel are never applied. A later `--save` with `--only` replaces the
//! measurements it repeated and keeps the others.

use std::io;
use std::path::{Path, PathBuf};

use arum_sink::Sink;
use arum_units::duration;
use serde::{Deserialize, Serialize};

use crate::machine::Identity;
use crate::model::{Calibration, SCHEMA};

/// The directory of saved calibrations, if the user has a cache directory.
pub fn directory() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("arum").join("calibration"))
}

/// Where this machine's calibration is (or would be) saved.
pub fn path_for_this_machine() -> Option<PathBuf> {
    directory().map(|d| d.join(format!("{}.json", Identity::detect().key())))
}

/// Where `--save` writes: the file of one machine's calibration, opened before measuring (so
/// an unwritable cache directory stops the run at once) and written at the end.
pub struct Destination {
    path: PathBuf,
    sink: Sink,
}

impl Destination {
    /// This machine's file in the user's cache directory, which is created if need be.
    pub fn for_this_machine() -> Result<Destination, String> {
        let dir = directory().ok_or("no cache directory (set HOME or XDG_CACHE_HOME)")?;
        Destination::in_dir(&dir, &Identity::detect())
    }

    /// The file of `identity` in `dir`, which is created if need be.
    pub fn in_dir(dir: &Path, identity: &Identity) -> Result<Destination, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = dir.join(format!("{}.json", identity.key()));
        let sink = Sink::open_or_stdout(Some(&path)).map_err(|e| e.to_string())?;
        Ok(Destination { path, sink })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `cal` (of the machine the destination was opened for) with the measurements the
    /// file held that `cal` did not repeat; returns the file's path. The file is replaced
    /// whole, so a reader never sees half of it.
    pub fn save(self, cal: &Calibration) -> Result<PathBuf, String> {
        let mut merged = cal.clone();
        if let Ok(old) = read(&self.path) {
            for m in old.measurements {
                if merged.get(&m.name).is_none() {
                    merged.measurements.push(m);
                }
            }
        }
        let mut text = serde_json::to_string_pretty(&merged).map_err(|e| e.to_string())?;
        text.push('\n');
        self.sink
            .write(text.as_bytes())
            .map_err(|e| e.to_string())?;
        Ok(self.path)
    }
}

fn read(path: &Path) -> io::Result<Calibration> {
    let text = std::fs::read_to_string(path)?;
    let cal: Calibration = serde_json::from_str(&text).map_err(io::Error::other)?;
    if cal.schema != SCHEMA {
        return Err(io::Error::other(format!(
            "schema {} is not {SCHEMA}",
            cal.schema
        )));
    }
    Ok(cal)
}

/// The calibrated cost of one event, in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// The calibration measurement it comes from (e.g. `tasks.fork`).
    pub measurement: String,
    pub median_ns: f64,
    /// The 90% confidence interval of the median.
    pub ci90_low_ns: f64,
    pub ci90_high_ns: f64,
}

/// Per-event costs of this machine, from a saved calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedCosts {
    pub path: PathBuf,
    /// When the calibration ran (Unix time, ns).
    pub measured_unix_ns: u64,
    pub arum_version: String,
    pub context_switch: Option<Cost>,
    pub minor_fault: Option<Cost>,
    pub major_fault: Option<Cost>,
    pub process_creation: Option<Cost>,
    pub thread_creation: Option<Cost>,
}

/// Counts of a run, as its report has them (None: not known).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Voluntary + involuntary.
    pub context_switches: Option<u64>,
    pub minor_faults: Option<u64>,
    pub major_faults: Option<u64>,
    pub processes_created: Option<u64>,
    pub threads_created: Option<u64>,
}

/// Estimated time spent in one kind of event: count × calibrated cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// `context_switches`, `minor_faults`, `major_faults`, `processes_created`, `threads_created`.
    pub event: String,
    /// For a report line: "estimated time in context switches".
    pub label: String,
    pub count: u64,
    pub cost_ns: f64,
    pub estimated_ns: f64,
    /// The estimate with the ends of the cost's confidence interval.
    pub estimated_low_ns: f64,
    pub estimated_high_ns: f64,
    /// Where the cost comes from, e.g. "tasks.fork, arum calibrate 2026-05-01".
    pub source: String,
}

impl Estimate {
    /// One line for a text report, e.g.
    /// `~12.3 ms [11.9 ms, 12.8 ms] (estimate) in 2000000 context switches at 6.15 µs each,
    /// from tasks.switch.process.same_cpu, arum calibrate 2026-05-01`: the interval is the
    /// count times the ends of the cost's 90% interval.
    pub fn describe(&self) -> String {
        format!(
            "~{} [{}, {}] (estimate) in {} {} at {} each, from {}",
            duration::format_ns(self.estimated_ns),
            duration::format_ns(self.estimated_low_ns),
            duration::format_ns(self.estimated_high_ns),
            self.count,
            self.event.replace('_', " "),
            duration::format_ns(self.cost_ns),
            self.source
        )
    }
}

/// Which measurement gives each event's cost, in order of preference.
const SOURCES: [(&str, &[&str]); 5] = [
    (
        "context_switch",
        &[
            "tasks.switch.process.same_cpu",
            "tasks.switch.thread.same_cpu",
        ],
    ),
    ("minor_fault", &["memory.fault.minor"]),
    ("major_fault", &["memory.fault.major"]),
    ("process_creation", &["tasks.fork"]),
    (
        "thread_creation",
        &["tasks.thread.pthread", "tasks.thread.clone"],
    ),
];

impl SavedCosts {
    pub fn from_calibration(cal: &Calibration, path: PathBuf) -> SavedCosts {
        let cost = |which: &str| -> Option<Cost> {
            let names = SOURCES.iter().find(|(k, _)| *k == which)?.1;
            names.iter().find_map(|n| {
                let m = cal.get(n)?;
                let s = m.summary.as_ref()?;
                Some(Cost {
                    measurement: m.name.clone(),
                    median_ns: s.median,
                    ci90_low_ns: s.ci90_low,
                    ci90_high_ns: s.ci90_high,
                })
            })
        };
        SavedCosts {
            path,
            measured_unix_ns: cal.run.started_unix_ns,
            arum_version: cal.run.arum_version.clone(),
            context_switch: cost("context_switch"),
            minor_fault: cost("minor_fault"),
            major_fault: cost("major_fault"),
            process_creation: cost("process_creation"),
            thread_creation: cost("thread_creation"),
        }
    }

    /// Estimates for the events that have both a count above 0 and a calibrated cost (none
    /// happened: nothing to estimate).
    pub fn estimate(&self, counts: &Counts) -> Vec<Estimate> {
        let date = humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_nanos(self.measured_unix_ns),
        )
        .to_string();
        let day = date.get(..10).unwrap_or(&date).to_string();
        [
            (
                "context_switches",
                "context switches",
                counts.context_switches,
                &self.context_switch,
            ),
            (
                "minor_faults",
                "minor page faults",
                counts.minor_faults,
                &self.minor_fault,
            ),
            (
                "major_faults",
                "major page faults",
                counts.major_faults,
                &self.major_fault,
            ),
            (
                "processes_created",
                "process creations",
                counts.processes_created,
                &self.process_creation,
            ),
            (
                "threads_created",
                "thread creations",
                counts.threads_created,
                &self.thread_creation,
            ),
        ]
        .into_iter()
        .filter_map(|(event, words, count, cost)| {
            let (count, cost) = (count.filter(|c| *c > 0)?, cost.as_ref()?);
            let n = count as f64;
            Some(Estimate {
                event: event.into(),
                label: format!("estimated time in {words}"),
                count,
                cost_ns: cost.median_ns,
                estimated_ns: n * cost.median_ns,
                estimated_low_ns: n * cost.ci90_low_ns,
                estimated_high_ns: n * cost.ci90_high_ns,
                source: format!("{}, arum calibrate {day}", cost.measurement),
            })
        })
        .collect()
    }
}

/// This machine's saved costs (same host, CPU and kernel), if `arum calibrate --save` ran here.
pub fn load_for_this_machine() -> Option<SavedCosts> {
    let path = path_for_this_machine()?;
    load_from(&path).ok()
}

/// The costs saved in `path` (any machine's: the caller has chosen the file).
pub fn load_from(path: &Path) -> io::Result<SavedCosts> {
    let cal = read(path)?;
    Ok(SavedCosts::from_calibration(&cal, path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{fixture, Unit};

    fn save_in(dir: &Path, cal: &Calibration) -> Result<PathBuf, String> {
        Destination::in_dir(dir, &Identity::of(&cal.machine))?.save(cal)
    }

    #[test]
    fn saved_figures_become_labelled_estimates() {
        let dir = tempfile::tempdir().unwrap();
        let cal = fixture(&[
            ("tasks.switch.process.same_cpu", Unit::Ns, 2000.0),
            ("memory.fault.minor", Unit::Ns, 500.0),
            ("memory.fault.major", Unit::Ns, 50_000.0),
            ("tasks.fork", Unit::Ns, 100_000.0),
            ("tasks.thread.pthread", Unit::Ns, 20_000.0),
        ]);
        let path = save_in(dir.path(), &cal).unwrap();
        assert!(
            path.ends_with("testhost_GenuineIntel-6-55-7_6.1.0-test.json"),
            "{path:?}"
        );
        let costs = load_from(&path).unwrap();
        let cs = costs.context_switch.as_ref().unwrap();
        assert_eq!(cs.measurement, "tasks.switch.process.same_cpu");
        assert!((cs.median_ns - 2000.0).abs() < 50.0);
        assert!(cs.ci90_low_ns <= cs.median_ns && cs.median_ns <= cs.ci90_high_ns);

        let est = costs.estimate(&Counts {
            context_switches: Some(1_000_000),
            minor_faults: Some(10),
            major_faults: None,
            processes_created: Some(3),
            threads_created: Some(0),
        });
        let names: Vec<&str> = est.iter().map(|e| e.event.as_str()).collect();
        assert_eq!(
            names,
            ["context_switches", "minor_faults", "processes_created"],
            "no thread was created: no estimate of 0 ns for it"
        );
        let e = &est[0];
        assert_eq!(e.count, 1_000_000);
        assert!((e.estimated_ns - 1e6 * cs.median_ns).abs() < 1.0);
        assert!(e.estimated_low_ns <= e.estimated_ns && e.estimated_ns <= e.estimated_high_ns);
        assert_eq!(e.label, "estimated time in context switches");
        assert!(e.describe().contains("] (estimate)"), "{}", e.describe());
        assert!(
            e.source
                .starts_with("tasks.switch.process.same_cpu, arum calibrate 2023-11-14"),
            "{}",
            e.source
        );
    }

    #[test]
    fn a_partial_save_keeps_the_figures_it_did_not_repeat() {
        let dir = tempfile::tempdir().unwrap();
        save_in(
            dir.path(),
            &fixture(&[
                ("tasks.fork", Unit::Ns, 100_000.0),
                ("memory.fault.minor", Unit::Ns, 500.0),
            ]),
        )
        .unwrap();
        let path = save_in(dir.path(), &fixture(&[("tasks.fork", Unit::Ns, 90_000.0)])).unwrap();
        let costs = load_from(&path).unwrap();
        assert!((costs.process_creation.unwrap().median_ns - 90_000.0).abs() < 3000.0);
        assert!(costs.minor_fault.is_some());
        assert!(costs.context_switch.is_none());
    }

    #[test]
    fn the_file_is_opened_before_measuring_and_written_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let cal = fixture(&[("tasks.fork", Unit::Ns, 100_000.0)]);
        let d = Destination::in_dir(dir.path(), &Identity::of(&cal.machine)).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert_eq!(d.save(&cal).unwrap(), file_of(dir.path(), &cal));
        let not_a_dir = dir.path().join("f");
        std::fs::write(&not_a_dir, "").unwrap();
        let e = Destination::in_dir(&not_a_dir.join("calibration"), &Identity::of(&cal.machine))
            .err()
            .unwrap();
        assert!(e.starts_with(&not_a_dir.display().to_string()), "{e}");
    }

    fn file_of(dir: &Path, cal: &Calibration) -> PathBuf {
        dir.join(format!("{}.json", Identity::of(&cal.machine).key()))
    }

    #[test]
    fn a_file_of_another_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        std::fs::write(&p, "{\"schema\": \"arum.report/1\"}").unwrap();
        assert!(load_from(&p).is_err());
    }
}
