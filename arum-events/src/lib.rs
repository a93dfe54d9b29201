//! What ARUM knows about processors and their events: CPU identification, the event tables,
//! event-name resolution and encoding, and counter constraints.

pub mod cpu;
pub mod plan;
pub mod resolve;
pub mod schedule;
pub mod table;
