//! Failures of `arum hourglass` and of the noise probe: one line naming the problem and the fix.

use std::path::PathBuf;

/// Exit status of every failure, as `arum`'s own (see `arum --help`).
pub const EXIT_FAILED: i32 = 125;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Options that parse but do not make a run.
    #[error("{0}")]
    Options(String),

    /// A thread could not be set up as asked (priority, CPUs, timer).
    #[error("thread {thread}: {why}")]
    Thread { thread: usize, why: String },

    /// The machine lacks what gap detection needs.
    #[error("{0}")]
    Machine(String),

    /// An output that cannot be opened or written (the path as the user gave it).
    #[error("cannot write {path}: {source}; choose a writable path")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The SVG drawing failed.
    #[error("cannot draw the trace as SVG: {0}")]
    Draw(String),
}

impl From<arum_sink::SinkError> for Error {
    fn from(e: arum_sink::SinkError) -> Error {
        Error::Write {
            path: e.path,
            source: e.source,
        }
    }
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        EXIT_FAILED
    }
}
