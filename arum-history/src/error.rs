//! What can go wrong with a store, each with what to do about it.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum HistoryError {
    #[error("cannot open the run history {store}: {why}")]
    Open { store: String, why: String },
    #[error(
        "the run history {store} has schema version {found}, newer than this arum's {known}: \
         use a newer arum with it, or another store"
    )]
    Newer {
        store: String,
        found: i64,
        known: i64,
    },
    #[error("the run history {store}: {why}")]
    Database { store: String, why: String },
    /// Filters that select nothing they name (a commit no selected run has).
    #[error("{0}; `arum history` lists the saved runs and their commits")]
    Selection(String),
    #[error("a saved report in {store} (run {id}) cannot be read: {why}")]
    Corrupt { store: String, id: i64, why: String },
}
