//! The clients of `arum suite`: how many requests the client copies completed in the run, read
//! from the counts they leave (each copy appends `REQUESTS FAILED` to a file of the suite's own
//! directory when it ends), with the throughput over the run's wall time. The suite's clients
//! script keeps the loop in the shell (no process per request besides the request's own), so
//! the measured tree is the clients' work.

pub mod html;
pub mod model;
pub mod text;

use std::path::PathBuf;

use crate::error::ArumError;
use crate::facility::Facility;
use crate::launch::Reaped;
use model::ClientsReport;

/// The variable through which the measured clients learn where to append their counts.
pub const COUNTS_VAR: &str = "ARUM_SUITE_COUNTS";

pub struct Clients {
    counts: PathBuf,
}

impl Clients {
    pub fn new(counts: PathBuf) -> Clients {
        Clients { counts }
    }
}

impl Facility for Clients {
    type Section = ClientsReport;

    /// Each run starts with no counts: the file of the previous run's is emptied.
    fn prepare(&mut self) -> Result<(), ArumError> {
        std::fs::write(&self.counts, b"").map_err(|e| {
            ArumError::Suite(format!(
                "cannot prepare the clients' counts in {}: {e}",
                self.counts.display()
            ))
        })
    }

    fn finish(self, reaped: &Reaped) -> ClientsReport {
        let text = std::fs::read_to_string(&self.counts).unwrap_or_default();
        ClientsReport::from_counts(&text, reaped.wall.as_nanos() as u64)
    }
}
