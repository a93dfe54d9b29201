//! The error of every parser: one line, ready to show as is.

use std::fmt;

/// Why a value could not be read: one line that names the problem and the fix, e.g.
/// `"10" has no unit: write e.g. 10ms or 10s`. The input is quoted with escapes, so the
/// message stays on one line whatever was typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    message: String,
}

impl UnitError {
    pub(crate) fn new(message: String) -> Self {
        UnitError { message }
    }

    /// The message, without any prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UnitError {}

/// For option parsers whose error type is a `String`.
impl From<UnitError> for String {
    fn from(e: UnitError) -> String {
        e.message
    }
}
