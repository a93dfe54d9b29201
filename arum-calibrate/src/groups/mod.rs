//! The measurement groups, one module each, in the order the suite runs them.

pub mod cpu;
pub mod files;
pub mod memory;
pub mod network;
pub mod tasks;
pub mod timing;
