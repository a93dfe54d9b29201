//! What `-F` asked for, resolved before anything runs, and the throttling policy.

use std::path::PathBuf;

use super::model::ThrottlePolicy;
use super::targets::{self, Target};
use crate::error::ArumError;
use crate::request::ProbeEngine;

/// When functions stop being probed, and how their further calls are counted (the report states
/// the same policy).
pub type Policy = ThrottlePolicy;

/// What `-F` asked for, resolved before anything runs.
#[derive(Debug, Clone)]
pub struct Settings {
    pub targets: Vec<Target>,
    pub policy: Policy,
    pub interval_ms: Option<u64>,
    /// `--strict`: missing privileges are an error, not a warning.
    pub strict: bool,
    /// `--probe-engine`: in the kernel (BPF), by probe records (perf), or the first that runs.
    pub engine: ProbeEngine,
    /// What the resolution found questionable (a library the program does not load), for the
    /// run's warnings.
    pub notes: Vec<String>,
}

impl Settings {
    /// Resolves `lists` (`-F`) and `file` in `program` (bare names) and the libraries it loads.
    pub fn resolve(
        lists: &[String],
        file: Option<&PathBuf>,
        program: &str,
        policy: Policy,
        interval_ms: Option<u64>,
        strict: bool,
        engine: ProbeEngine,
    ) -> Result<Option<Settings>, ArumError> {
        let specs = targets::specs(lists, file.map(PathBuf::as_path))?;
        if specs.is_empty() {
            return Ok(None);
        }
        let exe = targets::program_file(program).ok_or_else(|| {
            ArumError::Functions(format!(
                "cannot find the program {program:?} to look up -F names in; name the file with PATH:NAME"
            ))
        })?;
        let (targets, notes) = targets::resolve(&specs, &exe)?;
        Ok(Some(Settings {
            targets,
            policy,
            interval_ms,
            strict,
            engine,
            notes,
        }))
    }
}
