//! Where reports, pages and exports go: `arum_sink`'s writer, the one every file arum writes
//! goes through, with its failures as arum's own error (exit status 125).

pub use arum_sink::{Sink, SinkError};

use crate::error::ArumError;

impl From<SinkError> for ArumError {
    fn from(e: SinkError) -> ArumError {
        ArumError::Output {
            path: e.path,
            source: e.source,
        }
    }
}
