//! `arum html FILE.json`: the page of a saved report (`arum.report/1`, from `--format json`) or
//! series (`arum.runs/1`, from `--export-json`), written as `-o` writes (standard output by
//! default).

use std::path::{Path, PathBuf};

use clap::Args;

use crate::bench::result::{RunSet, SCHEMA as RUNS_SCHEMA};
use crate::error::ArumError;
use crate::report::model::{Report, SCHEMA as REPORT_SCHEMA};
use crate::report::sink::Sink;

#[derive(Debug, Args)]
pub struct HtmlArgs {
    /// A report (`arum --format json -o FILE`) or a series (`--export-json FILE`).
    #[arg(value_name = "FILE.json")]
    pub input: PathBuf,

    /// Write the page to FILE (atomically) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: &HtmlArgs) -> Result<i32, ArumError> {
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("/dev/stdout"));
    let sink = Sink::open(Some(&out))?;
    sink.write(&page(&args.input)?)?;
    Ok(0)
}

/// The page of the saved JSON at `path`, whichever of the two layouts it has.
pub fn page(path: &Path) -> Result<String, ArumError> {
    let bad = |why: String| ArumError::Input {
        path: path.to_path_buf(),
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        bad(format!(
            "cannot read it: {e}; give a report from `arum --format json -o FILE` or a series from `--export-json FILE`"
        ))
    })?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| bad(format!("not JSON ({e}); give arum's JSON output")))?;
    match value
        .get("schema")
        .and_then(|s| s.as_str())
        .unwrap_or_default()
    {
        REPORT_SCHEMA => {
            let report: Report = serde_json::from_value(value)
                .map_err(|e| bad(format!("not a valid {REPORT_SCHEMA} report: {e}")))?;
            Ok(super::render(&report))
        }
        RUNS_SCHEMA => {
            let set: RunSet = serde_json::from_value(value)
                .map_err(|e| bad(format!("not a valid {RUNS_SCHEMA} series: {e}")))?;
            Ok(super::runs::render(&set))
        }
        other => Err(bad(format!(
            "schema {other:?} is neither {REPORT_SCHEMA} nor {RUNS_SCHEMA}; give arum's JSON output"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::report;

    #[test]
    fn a_saved_report_renders_as_the_run_did_and_other_json_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let r = report(2_000_000, 0);
        let saved = dir.path().join("r.json");
        std::fs::write(&saved, crate::report::json::render(&r)).unwrap();
        assert_eq!(page(&saved).unwrap(), super::super::render(&r));
        let other = dir.path().join("o.json");
        std::fs::write(&other, "{\"schema\": \"x/1\"}").unwrap();
        let e = page(&other).unwrap_err().to_string();
        assert!(e.contains("neither"), "{e}");
    }
}
