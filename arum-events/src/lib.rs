//! What ARUM knows about processors and their events: CPU identification, the event tables,
//! event-name resolution and encoding, counter constraints, and the `/dev/arum` wire format.

pub mod cpu;
pub mod plan;
pub mod resolve;
pub mod schedule;
pub mod table;
pub mod wire;
