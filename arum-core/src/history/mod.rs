//! The run history: runs saved with `--save` into a store (`arum-history`), read back by
//! `arum history`, searched for change points across commits, and used as a baseline by
//! `arum compare history:LABEL`.
//!
//! ```text
//!  a run or a series ──(report → record: machine, command, labels, commit, metrics)──▶ store
//!  store ──(filters)──▶ runs ──(machine, command, labels)──▶ series of one metric
//!        ──▶ table / CSV / JSON / HTML trend;  ──(median per commit)──▶ change points, gate
//! ```

pub mod baseline;
pub mod changes;
mod commit;
pub mod html;
pub mod list;
pub mod query;
mod record;
pub mod save;
pub mod trend;

pub use query::{HistoryFormat, HistoryRequest};
pub use save::{SaveRequest, Saving};
