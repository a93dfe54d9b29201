//! `arum html FILE.json`: the page of a saved report (`arum.report/1`, from `--format json`) or
//! series (`arum.runs/1`, from `--export-json`), written as `-o` writes (standard output by
//! default).

use std::path::{Path, PathBuf};

use crate::error::ArumError;
use crate::report::sink::Sink;
use crate::series::compare::input::{read_saved, Saved};

#[derive(Debug, Clone)]
pub struct HtmlRequest {
    /// A report (`arum --format json -o FILE`) or a series (`--export-json FILE`).
    pub input: PathBuf,

    /// Write the page to FILE (atomically) instead of standard output.
    pub output: Option<PathBuf>,
}

pub fn run(args: &HtmlRequest) -> Result<i32, ArumError> {
    let sink = Sink::open_or_stdout(args.output.as_deref())?;
    sink.write_report(&page(&args.input)?)?;
    Ok(0)
}

/// The page of the saved JSON at `path`, whichever of the two layouts it has.
pub fn page(path: &Path) -> Result<String, ArumError> {
    Ok(match read_saved(path)? {
        Saved::Report(report) => crate::report::html::render(&report),
        Saved::Runs(set) => crate::series::html::render(&set),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::report;

    #[test]
    fn a_saved_report_renders_as_the_run_did_and_other_json_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let r = report(2_000_000, 0);
        let saved = dir.path().join("r.json");
        std::fs::write(&saved, crate::report::json::render(&r)).unwrap();
        assert_eq!(page(&saved).unwrap(), crate::report::html::render(&r));
        let other = dir.path().join("o.json");
        std::fs::write(&other, "{\"schema\": \"x/1\"}").unwrap();
        let e = page(&other).unwrap_err().to_string();
        assert!(e.contains("neither"), "{e}");
    }
}
