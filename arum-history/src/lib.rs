//! The run history of ARUM: every saved run kept with what identifies it (when, on which
//! machine, which command, the user's labels, the source commit) and its metrics, so that trends
//! and change points can be read across commits without hand-kept JSON files.
//!
//! - `location`: where a store is: an SQLite file (the default, in the user's data directory)
//!   or a PostgreSQL server shared by a team;
//! - `sql`: the few operations both databases offer alike, so everything above is written once;
//! - `sqlite`, `postgres`: those operations on each database;
//! - `schema`: the versioned schema and its migrations, applied on opening, under a lock;
//! - `record`: what a saved run holds; `filter`: which runs a query selects;
//! - `store`: saving runs (each batch in one transaction) and reading them back in saved order.
//!
//! Nothing here knows the report's layout: the engine turns a report into a [`Record`] (its
//! metrics by name, its JSON) and back.

#![forbid(unsafe_code)]

pub mod error;
pub mod filter;
pub mod location;
mod postgres;
pub mod record;
mod schema;
mod sql;
mod sqlite;
pub mod store;
#[doc(hidden)]
pub mod testing;

pub use error::HistoryError;
pub use filter::Filter;
pub use location::Location;
pub use record::{Commit, Machine, Record, StoredRun};
pub use schema::VERSION as SCHEMA_VERSION;
pub use store::Store;
