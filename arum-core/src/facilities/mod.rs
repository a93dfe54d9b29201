//! The facilities of a measured run, one folder each: its settings, its collection (an
//! implementation of `facility::Facility`), its section of the report model and its text and
//! HTML renderings. `report::sections` lists them once, in the order every output follows.

pub mod ambient;
pub mod clients;
pub mod counters;
pub mod functions;
pub mod noise;
pub mod syscalls;
pub mod tasks;
pub mod usage;
pub mod views;
