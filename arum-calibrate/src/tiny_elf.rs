//! The smallest program an exec can start: a static x86-64 ELF executable of 132 bytes, one
//! loadable segment whose code calls exit(status). Process-creation measurements execute it so
//! that what they time is the kernel's work, not a dynamic loader's or a C runtime's.

use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

const BASE: u64 = 0x40_0000;
const EHDR: usize = 64;
const PHDR: usize = 56;

/// The executable's bytes; the program exits with `status`.
pub fn image(status: u8) -> Vec<u8> {
    // xor edi, edi ; mov dil, status ; mov eax, 60 (exit) ; syscall
    let code: [u8; 12] = [
        0x31, 0xff, 0x40, 0xb7, status, 0xb8, 0x3c, 0x00, 0x00, 0x00, 0x0f, 0x05,
    ];
    let total = EHDR + PHDR + code.len();
    let mut b = Vec::with_capacity(total);
    // ELF header.
    b.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]); // 64-bit, LE, version 1, SysV
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&2u16.to_le_bytes()); // e_type: EXEC
    b.extend_from_slice(&0x3eu16.to_le_bytes()); // e_machine: x86-64
    b.extend_from_slice(&1u32.to_le_bytes()); // e_version
    b.extend_from_slice(&(BASE + (EHDR + PHDR) as u64).to_le_bytes()); // e_entry
    b.extend_from_slice(&(EHDR as u64).to_le_bytes()); // e_phoff
    b.extend_from_slice(&0u64.to_le_bytes()); // e_shoff
    b.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    b.extend_from_slice(&(EHDR as u16).to_le_bytes()); // e_ehsize
    b.extend_from_slice(&(PHDR as u16).to_le_bytes()); // e_phentsize
    b.extend_from_slice(&1u16.to_le_bytes()); // e_phnum
    b.extend_from_slice(&0u16.to_le_bytes()); // e_shentsize
    b.extend_from_slice(&0u16.to_le_bytes()); // e_shnum
    b.extend_from_slice(&0u16.to_le_bytes()); // e_shstrndx
                                              // Program header: one PT_LOAD, read + execute, the whole file at BASE.
    b.extend_from_slice(&1u32.to_le_bytes()); // p_type: LOAD
    b.extend_from_slice(&5u32.to_le_bytes()); // p_flags: R + X
    b.extend_from_slice(&0u64.to_le_bytes()); // p_offset
    b.extend_from_slice(&BASE.to_le_bytes()); // p_vaddr
    b.extend_from_slice(&BASE.to_le_bytes()); // p_paddr
    b.extend_from_slice(&(total as u64).to_le_bytes()); // p_filesz
    b.extend_from_slice(&(total as u64).to_le_bytes()); // p_memsz
    b.extend_from_slice(&0x1000u64.to_le_bytes()); // p_align
    b.extend_from_slice(&code);
    debug_assert_eq!(b.len(), total);
    b
}

/// Writes the program (exiting 0) into `dir` and returns its path.
pub fn write_into(dir: &Path) -> io::Result<PathBuf> {
    let path = dir.join(crate::leftovers::name("exit0"));
    write_program(&path, 0)?;
    Ok(path)
}

/// Writes the program exiting with `status` to `path`, executable, and closes it (an executable
/// still open for writing cannot be executed: ETXTBSY).
fn write_program(path: &Path, status: u8) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o755)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)?;
    f.write_all(&image(status))?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_runs_and_exits_with_its_status() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exit42");
        write_program(&path, 42).unwrap();
        // Another test's fork may briefly hold a copy of the descriptor we wrote through
        // (ETXTBSY); try again a few times.
        let mut status = std::process::Command::new(&path).status();
        for _ in 0..20 {
            match &status {
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    status = std::process::Command::new(&path).status();
                }
                _ => break,
            }
        }
        match status {
            Ok(s) => assert_eq!(s.code(), Some(42)),
            // A noexec temporary directory cannot run anything; the bytes are still checked.
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                eprintln!("{}: {e}; not run", path.display())
            }
            Err(e) => panic!("{e}"),
        }
        assert_eq!(image(0).len(), 132);
    }
}
