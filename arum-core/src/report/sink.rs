//! Where reports, pages and exports go: `arum_sink`'s writer, the one every file arum writes
//! goes through, with its failures as arum's own error (exit status 125).

pub use arum_sink::{Sink, SinkError};

use crate::error::ArumError;

/// A file `option` named could not be written (the report's `-o/--output` unless said).
pub fn failed(option: &'static str) -> impl Fn(SinkError) -> ArumError {
    move |e| ArumError::Output {
        path: e.path,
        source: e.source,
        option,
    }
}

impl From<SinkError> for ArumError {
    fn from(e: SinkError) -> ArumError {
        failed("-o/--output")(e)
    }
}
