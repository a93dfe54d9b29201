//! From the request to what measuring needs, decided before anything is measured, so that a
//! bad option stops the run at once rather than after minutes: the selection (`--only`), the
//! predictions (`--predict`), the scratch directory (`--dir`) and the suite's settings.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::context::{Selection, Settings};
use crate::error::Error;
use crate::model::Calibration;
use crate::predict::{self, Spec};
use crate::request::Request;
use crate::suite;

/// What the request selects and predicts.
pub struct Plan {
    pub selection: Selection,
    pub predictions: Option<Predictions>,
}

impl Plan {
    pub fn new(request: &Request) -> Result<Plan, Error> {
        let ci = request.ci_percent;
        if !(ci > 0.0 && ci <= 50.0) {
            return Err(Error::Option(format!(
                "--ci {ci}: the target must be between 0 and 50 percent (e.g. --ci 2)"
            )));
        }
        Ok(Plan {
            selection: selection(&request.only)?,
            predictions: request
                .predict
                .as_deref()
                .map(Predictions::read)
                .transpose()?,
        })
    }
}

/// The measurements `--only` names, with what they need measured beside them.
fn selection(only: &[String]) -> Result<Selection, Error> {
    let mut selection = suite::select(only).map_err(Error::Option)?;
    // Context switches are round trips with the pipe cost subtracted.
    if [
        "tasks.switch.process.same_cpu",
        "tasks.switch.process.cross_cpu",
        "tasks.switch.thread.same_cpu",
        "tasks.switch.thread.cross_cpu",
    ]
    .iter()
    .any(|n| selection.contains(n))
    {
        selection.add("tasks.pipe");
    }
    Ok(selection)
}

/// The predictions of a `--predict` file, checked against the suite's names.
pub struct Predictions {
    path: PathBuf,
    specs: Vec<Spec>,
}

impl Predictions {
    fn read(path: &Path) -> Result<Predictions, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::PredictRead {
            path: path.to_path_buf(),
            source,
        })?;
        let specs = predict::parse(&text)
            .and_then(|s| predict::validate(&s).map(|()| s))
            .map_err(|why| Error::Predict {
                path: path.to_path_buf(),
                why,
            })?;
        Ok(Predictions {
            path: path.to_path_buf(),
            specs,
        })
    }

    /// Sets each measurement's prediction and adds the notes that come with them.
    pub fn apply(&self, cal: &mut Calibration) -> Result<(), Error> {
        let notes = predict::apply(cal, &self.specs).map_err(|why| Error::Predict {
            path: self.path.clone(),
            why,
        })?;
        cal.notes.extend(notes);
        Ok(())
    }
}

/// The directory the file and page-fault measurements use: `--dir`, checked, or a new
/// temporary one, removed when this is dropped.
pub struct Scratch {
    dir: PathBuf,
    _temporary: Option<tempfile::TempDir>,
}

impl Scratch {
    pub fn new(dir: Option<&Path>) -> Result<Scratch, Error> {
        match dir {
            Some(d) => {
                check_dir(d)?;
                Ok(Scratch {
                    dir: d.to_path_buf(),
                    _temporary: None,
                })
            }
            None => {
                let temp = tempfile::Builder::new()
                    .prefix(&crate::leftovers::name(""))
                    .tempdir()
                    .map_err(Error::TempDir)?;
                Ok(Scratch {
                    dir: temp.path().to_path_buf(),
                    _temporary: Some(temp),
                })
            }
        }
    }

    pub fn dir(&self) -> PathBuf {
        self.dir.clone()
    }
}

fn check_dir(d: &Path) -> Result<(), Error> {
    let err = |why: String| Error::Dir {
        path: d.to_path_buf(),
        why,
    };
    let meta = std::fs::metadata(d).map_err(|e| err(e.to_string()))?;
    if !meta.is_dir() {
        return Err(err("not a directory".into()));
    }
    tempfile::tempfile_in(d).map_err(|e| err(format!("not writable ({e})")))?;
    Ok(())
}

/// The suite's settings: the request's, or the defaults (shorter and smaller with `--quick`).
pub fn settings(request: &Request, dir: PathBuf) -> Settings {
    let quick = request.quick;
    Settings {
        quick,
        ci_target: request.ci_percent / 100.0,
        time_limit: request.time_limit.unwrap_or(if quick {
            Duration::from_millis(250)
        } else {
            Duration::from_secs(1)
        }),
        warmup: if quick {
            Duration::from_millis(20)
        } else {
            Duration::from_millis(100)
        },
        dir,
        file_max: request
            .file_max
            .unwrap_or(if quick { 64 << 20 } else { 1 << 30 }),
        netem: request.netem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_brings_the_pipe_it_is_net_of() {
        let s = selection(&["tasks.switch.thread".into()]).unwrap();
        assert!(s.contains("tasks.switch.thread.same_cpu") && s.contains("tasks.pipe"));
        assert!(!selection(&["cpu".into()]).unwrap().contains("tasks.pipe"));
    }

    #[test]
    fn bad_options_stop_before_anything_is_measured() {
        let ci = |ci_percent| {
            Plan::new(&Request {
                ci_percent,
                ..Request::default()
            })
            .err()
            .map(|e| e.to_string())
        };
        assert_eq!(ci(2.0), None);
        assert!(ci(0.0).unwrap().contains("--ci 0"));
        assert!(ci(60.0).unwrap().contains("between 0 and 50"));
        let file = tempfile::NamedTempFile::new().unwrap();
        let e = Scratch::new(Some(file.path())).err().unwrap().to_string();
        assert!(e.contains("not a directory"), "{e}");
    }

    #[test]
    fn quick_shortens_the_defaults_and_the_request_overrides_them() {
        let dir = PathBuf::from("/tmp");
        let quick = settings(
            &Request {
                quick: true,
                ..Request::default()
            },
            dir.clone(),
        );
        assert_eq!(quick.time_limit, Duration::from_millis(250));
        assert_eq!(quick.file_max, 64 << 20);
        let full = settings(
            &Request {
                time_limit: Some(Duration::from_secs(3)),
                file_max: Some(4 << 30),
                ..Request::default()
            },
            dir,
        );
        assert_eq!(full.time_limit, Duration::from_secs(3));
        assert_eq!((full.file_max, full.ci_target), (4 << 30, 0.02));
    }
}
