//! Where the outputs go: the report (`-o`, or standard output), the plots (`--plots DIR`) and
//! the saved calibration (`--save`). Each is opened before anything is measured, so that an
//! unwritable one stops the run at once, and written through `arum_sink` once the calibration
//! is complete.

use std::path::{Path, PathBuf};

use arum_sink::Sink;

use crate::error::Error;
use crate::model::Calibration;
use crate::request::{Format, Request};
use crate::saved;

pub struct Destinations {
    report: Report,
    plots: Option<PathBuf>,
    save: Option<saved::Destination>,
}

struct Report {
    /// As the user gave it; None for standard output.
    path: Option<PathBuf>,
    sink: Sink,
}

impl Destinations {
    pub fn open(request: &Request) -> Result<Destinations, Error> {
        let path = request.output.clone();
        let sink = Sink::open_or_stdout(path.as_deref()).map_err(|e| Error::Output {
            path: e.path,
            why: e.source.to_string(),
        })?;
        if let Some(dir) = &request.plots {
            writable_dir(dir).map_err(|why| Error::Plots {
                path: dir.clone(),
                why,
            })?;
        }
        let save = request
            .save
            .then(saved::Destination::for_this_machine)
            .transpose()
            .map_err(Error::Save)?;
        Ok(Destinations {
            report: Report { path, sink },
            plots: request.plots.clone(),
            save,
        })
    }

    /// Writes the report, then the plots, then the saved calibration.
    pub fn write(self, cal: &Calibration, format: Format, histograms: bool) -> Result<(), Error> {
        let text = match format {
            Format::Text => super::text::render(cal, histograms),
            Format::Json => super::json::render(cal),
        };
        let Report { path, sink } = self.report;
        sink.write_report(&text).map_err(|e| Error::Output {
            path: path.unwrap_or(e.path),
            why: e.source.to_string(),
        })?;
        if let Some(dir) = &self.plots {
            let written = write_plots(dir, cal).map_err(|why| Error::Plots {
                path: dir.clone(),
                why,
            })?;
            eprintln!("arum calibrate: {written} plots in {}", dir.display());
        }
        if let Some(save) = self.save {
            let path = save.save(cal).map_err(Error::Save)?;
            eprintln!("arum calibrate: saved to {}", path.display());
        }
        Ok(())
    }
}

/// Creates `dir` if need be and checks that files can be created in it.
fn writable_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    tempfile::tempfile_in(dir).map_err(|e| format!("not writable ({e})"))?;
    Ok(())
}

/// Writes every plot into `dir`; returns how many.
fn write_plots(dir: &Path, cal: &Calibration) -> Result<usize, String> {
    let plots = super::svg::render_all(cal)?;
    for plot in &plots {
        let path = dir.join(&plot.file_name);
        Sink::open_or_stdout(Some(&path))
            .and_then(|sink| sink.write(plot.svg.as_bytes()))
            .map_err(|e| e.to_string())?;
    }
    Ok(plots.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{fixture, Unit};

    #[test]
    fn an_unwritable_destination_fails_before_measuring_naming_the_path_given() {
        let tmp = tempfile::tempdir().unwrap();
        let request = |output: &Path| Request {
            output: Some(output.to_path_buf()),
            ..Request::default()
        };
        let missing = tmp.path().join("no/such/dir/cal.txt");
        let e = Destinations::open(&request(&missing)).err().unwrap();
        let line = e.to_string();
        assert!(
            line.starts_with(&format!(
                "cannot write the report to {}: ",
                missing.display()
            )),
            "{line}"
        );
        assert_eq!(line.lines().count(), 1);
        let e = Destinations::open(&request(tmp.path())).err().unwrap();
        assert!(matches!(e, Error::Output { .. }), "{e}");

        let file = tmp.path().join("f");
        std::fs::write(&file, "").unwrap();
        let plots = Request {
            plots: Some(file.join("plots")),
            ..Request::default()
        };
        assert!(matches!(
            Destinations::open(&plots).err().unwrap(),
            Error::Plots { .. }
        ));
    }

    #[test]
    fn the_report_and_the_plots_are_written_at_the_end() {
        let tmp = tempfile::tempdir().unwrap();
        let (report, plots) = (tmp.path().join("cal.json"), tmp.path().join("plots"));
        let d = Destinations::open(&Request {
            output: Some(report.clone()),
            plots: Some(plots.clone()),
            ..Request::default()
        })
        .unwrap();
        assert!(!report.exists(), "nothing is written before the end");
        let cal = fixture(&[("tasks.fork", Unit::Ns, 100_000.0)]);
        d.write(&cal, Format::Json, false).unwrap();
        let back: Calibration =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(back.measurements.len(), 1);
        let svg = std::fs::read_to_string(plots.join("tasks.fork.svg")).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains(" µs, 40 samples"),
            "{svg}"
        );
    }
}
