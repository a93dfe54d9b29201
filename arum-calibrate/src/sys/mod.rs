//! The thin layer over the system calls the measurements need. Every `unsafe` of the crate
//! (raw clone, vfork-style spawning, fork's child side, mappings, aligned buffers, raw system
//! calls) lives here, each with a SAFETY comment; the measurements above it are safe code.

pub mod cpu;
pub mod fs;
pub mod memory;
pub mod process;

use std::io;

/// Maps a nix error into an io::Error (they carry the same errno).
pub(crate) fn errno(e: nix::Error) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}
