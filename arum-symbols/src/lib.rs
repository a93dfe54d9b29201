//! Function symbols of ELF files, for probing them with uprobes: which functions a file defines and
//! at which file offset (`elf`), which library file a program would load for a name such as `libc`
//! (`loader`, as the dynamic loader resolves it), the readable names of mangled Rust and C++
//! symbols (`names`), and choosing functions by name or glob with useful errors (`select`).
//!
//! Nothing here needs privileges or runs a program: it reads files.

mod elf;
mod loader;
mod names;
mod select;

pub use elf::{Function, Image, SymbolTable};
pub use loader::{ld_so_cache, names_library, Loader};
pub use names::{demangle, Demangled};
pub use select::{select, SelectError, Selected};

/// A file could not be read as an ELF file.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {path}: {why}")]
pub struct ReadError {
    pub path: std::path::PathBuf,
    pub why: String,
}
