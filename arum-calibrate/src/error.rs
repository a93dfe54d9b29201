//! `arum calibrate`'s failures: each names the problem and the fix in one line.

use std::path::PathBuf;

/// arum's exit status for its own failures, bad option values included (as for a run).
pub const EXIT_FAILED: i32 = 125;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Option(String),

    #[error("cannot read --predict {path}: {source}; give a readable TOML file")]
    PredictRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("--predict {path}: {why}")]
    Predict { path: PathBuf, why: String },

    #[error("--dir {path}: {why}; give an existing, writable directory")]
    Dir { path: PathBuf, why: String },

    #[error("cannot create a temporary directory: {0}; set TMPDIR or give --dir")]
    TempDir(std::io::Error),

    #[error("cannot write the report to {path}: {why}; choose a writable path with -o/--output")]
    Output { path: PathBuf, why: String },

    #[error("cannot write the plots into {path}: {why}; choose a writable --plots directory")]
    Plots { path: PathBuf, why: String },

    #[error("cannot save the calibration: {0}; check that the cache directory (XDG_CACHE_HOME or ~/.cache) is writable")]
    Save(String),
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        EXIT_FAILED
    }
}
