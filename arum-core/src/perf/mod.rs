//! The kernel's performance-event interface, one layer every facility uses: `sys` opens events
//! with perf_event_open(2), `records` reads their ring buffers and pairs probe records.

pub mod records;
pub mod sys;
