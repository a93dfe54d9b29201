//! The `/dev/arum` wire format: the one definition shared by the `arum` tool and the kernel
//! module. `wire.rs` uses `core` only, so the module compiles the same file (`#[path]`) without
//! this crate's manifest; this crate is how user space gets it.
#![no_std]

mod wire;

pub use wire::*;

/// Where the module's device appears (a misc device named `arum`).
pub const DEVICE_PATH: &str = "/dev/arum";
