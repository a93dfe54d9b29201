//! ARUM, the Application Resource Usage Monitor: the engine behind the `arum` binary.
//!
//! One run, in the order `run.rs` performs it: a [`request::RunRequest`] (what was asked, as
//! the command line or a suite gave it) → [`settings::Settings`] (decided once) →
//! [`measure::measure_once`] (the launch in `launch`, with every facility around it) → the
//! report (one model, several renderings, written by `report::sink`).
//!
//! Layers, each importing only the ones before it (`tools/module-graph/check.py` fails on a
//! cycle):
//! 1. `header`, `error`, `warnings`, `version`, `fields` (what each field of a report is: a
//!    metric with its unit and direction, or not a metric), `request` (what was asked): leaves.
//! 2. `system` (facts about the machine), `launch` (fork, start line, exec, reap), `perf`
//!    (perf_event_open, ring buffers, probe records), `tree` (the launched tree), `periodic`
//!    (sampler threads), `placement` (a parallel job's rank), `render` (the text report's rows
//!    and the HTML page and plot pieces every renderer shares).
//! 3. `facility` (the run lifecycle) and `facilities/`: one folder per facility, each with its
//!    settings, its collection, its section of the model (`model.rs`, with the table of its
//!    fields) and its text and HTML (`text.rs`, `html.rs`).
//! 4. `settings`: the run decided once from the request.
//! 5. `report`: the model of a whole run, the table of its sections (`report::sections`: each
//!    row starts its facility from the settings, names the report field its section fills, and
//!    renders it; the text, HTML and JSON follow its order), the renderers, `metrics` (every
//!    number of a report, by name, with its unit and direction) and `sink` (the writer).
//! 6. `measure`, `run`: one measured run.
//! 7. `series` (repeated runs, comparisons, merges, exports, suites), `info`, `list`.
//!
//! Adding a facility: a folder under `facilities/` (implement `facility::Facility`; its
//! `model.rs` with its `FIELDS`, `text.rs`, `html.rs`), then one row in
//! `report::sections::SECTIONS`, which names the report field its section fills, and one in
//! `report::model::FIELDS`; its settings go in `settings::Settings`.

pub mod error;
pub mod facilities;
pub mod facility;
pub mod fields;
pub mod header;
pub mod history;
pub mod info;
pub mod launch;
pub mod leftovers;
pub mod list;
pub mod measure;
pub mod perf;
pub mod periodic;
pub mod placement;
pub mod render;
pub mod report;
pub mod request;
pub mod run;
pub mod series;
pub mod settings;
pub mod system;
pub mod tree;
pub mod version;
pub mod warnings;
