//! arum's own failures: each names the problem and the fix in one line, and maps to an exit code.

use std::path::PathBuf;

/// arum failed before or around the measured program (exit status 125).
pub const EXIT_ARUM_FAILED: i32 = 125;
/// The program was found but could not be executed.
pub const EXIT_CANNOT_EXECUTE: i32 = 126;
/// The program was not found.
pub const EXIT_NOT_FOUND: i32 = 127;

#[derive(Debug, thiserror::Error)]
pub enum ArumError {
    #[error("cannot split --launch string {line:?}: {why}; quote it as for a POSIX shell, or use `-- CMD ARGS...`")]
    BadLaunch { line: String, why: String },

    #[error("cannot run '{program}': {}", .source.desc())]
    Exec {
        program: String,
        #[source]
        source: nix::Error,
    },

    #[error(
        "cannot write the report to {path}: {source}; choose a writable path with -o/--output"
    )]
    Output {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{0}")]
    Events(String),

    #[error("cannot read --events-file {path}: {source}; give a readable file with one event name per line")]
    EventsFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot start the program: {what}: {source}; check the system's process limits (ulimit -u) and free memory")]
    Launch {
        what: &'static str,
        #[source]
        source: nix::Error,
    },
}

impl ArumError {
    /// The documented exit status for this failure (see `arum --help`).
    pub fn exit_code(&self) -> i32 {
        match self {
            ArumError::Exec { source, .. } if *source == nix::Error::ENOENT => EXIT_NOT_FOUND,
            ArumError::Exec { .. } => EXIT_CANNOT_EXECUTE,
            _ => EXIT_ARUM_FAILED,
        }
    }
}
