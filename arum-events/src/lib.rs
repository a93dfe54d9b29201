//! What ARUM knows about processors and their events: CPU identification (`cpu`, `hybrid`), the
//! event tables compiled in at build time (`table`), the kernel's generic events (`generic`)
//! and PMUs (`sysfs`), event-name resolution and encoding (`resolve`), counter placement
//! (`schedule`), the plan of what to count (`plan`) and derived metrics (`metrics`).

#![forbid(unsafe_code)]

pub mod cpu;
pub mod generic;
pub mod hybrid;
pub mod metrics;
pub mod plan;
pub mod resolve;
pub mod schedule;
pub mod sysfs;
pub mod table;
