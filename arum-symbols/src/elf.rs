//! The functions an ELF file defines, with the file offset a uprobe needs, and the dynamic-section
//! facts the loader resolution uses (DT_NEEDED, DT_RPATH, DT_RUNPATH).
//!
//! A uprobe is placed at a file offset. The symbol gives a virtual address; the PT_LOAD segment
//! that holds it maps file offset `p_offset` at `p_vaddr`, so the offset is
//! `address - p_vaddr + p_offset`. The same holds for PIE and non-PIE files (only the base they
//! are loaded at differs), and an address outside every executable segment is not code.

use std::path::{Path, PathBuf};

use object::elf;
use object::read::elf::{Dyn, ElfFile64, FileHeader, ProgramHeader, Sym};
use object::{Endianness, Object, ObjectSymbol};

use crate::ReadError;

/// Which symbol table the functions came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolTable {
    /// `.symtab`: every symbol the linker kept, local ones included.
    Symtab,
    /// `.dynsym` only: the file was stripped; only exported symbols are known.
    Dynsym,
}

/// A symbol of the file, as far as probing it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// As in the symbol table (mangled).
    pub name: String,
    pub address: u64,
    pub size: u64,
    /// Where a uprobe goes: None when the address is in no executable PT_LOAD segment.
    pub offset: Option<u64>,
    pub kind: SymbolKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    /// STT_FUNC, defined here.
    Function,
    /// STT_GNU_IFUNC: the address is a resolver run once at load time, not the implementation.
    Ifunc,
    /// A data object or another non-code symbol defined here.
    Data,
    /// Used here, defined in another file (UND).
    Imported,
}

/// An ELF file read for probing.
#[derive(Debug, Clone)]
pub struct Image {
    pub path: PathBuf,
    pub table: SymbolTable,
    /// Every named symbol, functions first in address order.
    pub symbols: Vec<Function>,
    /// ET_DYN (a PIE executable or a shared library).
    pub position_independent: bool,
    pub machine: u16,
    pub needed: Vec<String>,
    pub soname: Option<String>,
    pub rpath: Vec<String>,
    pub runpath: Vec<String>,
}

impl Image {
    /// Reads `path` (64-bit ELF).
    pub fn read(path: &Path) -> Result<Image, ReadError> {
        let err = |why: String| ReadError {
            path: path.to_path_buf(),
            why,
        };
        let data = std::fs::read(path).map_err(|e| err(e.to_string()))?;
        let file = ElfFile64::<Endianness>::parse(&*data).map_err(|e| {
            err(format!(
                "not a 64-bit ELF file ({e}); functions can be probed in ELF executables and shared libraries"
            ))
        })?;
        let endian = file.endian();
        let header = file.elf_header();
        let (table, symbols) = symbols(&file);
        let mut image = Image {
            path: path.to_path_buf(),
            table,
            symbols,
            position_independent: header.e_type(endian) == elf::ET_DYN,
            machine: header.e_machine(endian),
            needed: Vec::new(),
            soname: None,
            rpath: Vec::new(),
            runpath: Vec::new(),
        };
        image.read_dynamic(&file, &data).map_err(err)?;
        Ok(image)
    }

    /// The loader's facts from the dynamic section, where the file has one: the libraries it
    /// needs, its soname, its RPATH and RUNPATH.
    fn read_dynamic(&mut self, file: &ElfFile64<Endianness>, data: &[u8]) -> Result<(), String> {
        let endian = file.endian();
        let Ok(Some((entries, link))) = file.elf_section_table().dynamic(endian, data) else {
            return Ok(());
        };
        let strings = file
            .elf_section_table()
            .strings(endian, data, link)
            .map_err(|e| format!("bad dynamic string table: {e}"))?;
        let split = |v: &str| -> Vec<String> {
            v.split(':')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        };
        for d in entries {
            let Some(tag) = d.tag32(endian) else { continue };
            if !d.is_string(endian) {
                continue;
            }
            let Ok(value) = d.string(endian, strings) else {
                continue;
            };
            let value = String::from_utf8_lossy(value).into_owned();
            match tag {
                elf::DT_NEEDED => self.needed.push(value),
                elf::DT_SONAME => self.soname = Some(value),
                elf::DT_RPATH => self.rpath.extend(split(&value)),
                elf::DT_RUNPATH => self.runpath.extend(split(&value)),
                _ => {}
            }
        }
        Ok(())
    }

    /// The functions (defined, in an executable segment) a uprobe can be placed on.
    pub fn functions(&self) -> impl Iterator<Item = &Function> {
        self.symbols
            .iter()
            .filter(|f| f.kind == SymbolKind::Function && f.offset.is_some())
    }
}

/// Every named symbol of the file, functions first in address order, from `.symtab` (or
/// `.dynsym` when the file was stripped), each function with its uprobe offset.
fn symbols(file: &ElfFile64<Endianness>) -> (SymbolTable, Vec<Function>) {
    let endian = file.endian();
    let segments = executable_segments(file);
    let has_symtab = file.symbols().next().is_some();
    let (table, symbols) = if has_symtab {
        (SymbolTable::Symtab, file.symbols())
    } else {
        (SymbolTable::Dynsym, file.dynamic_symbols())
    };
    let mut out: Vec<Function> = symbols
        .filter_map(|s| {
            let name = s.name().ok().filter(|n| !n.is_empty())?.to_string();
            let raw = s.elf_symbol();
            let kind = match raw.st_type() {
                _ if raw.st_shndx(endian) == elf::SHN_UNDEF => SymbolKind::Imported,
                elf::STT_FUNC => SymbolKind::Function,
                elf::STT_GNU_IFUNC => SymbolKind::Ifunc,
                elf::STT_OBJECT | elf::STT_TLS | elf::STT_COMMON | elf::STT_NOTYPE => {
                    SymbolKind::Data
                }
                _ => return None,
            };
            let address = raw.st_value(endian);
            Some(Function {
                offset: (kind == SymbolKind::Function)
                    .then(|| offset_in(&segments, address))
                    .flatten(),
                name,
                address,
                size: raw.st_size(endian),
                kind,
            })
        })
        .collect();
    out.sort_by_key(|f| (f.kind != SymbolKind::Function, f.address));
    (table, out)
}

/// The executable PT_LOAD segments: (p_vaddr, p_filesz, p_offset).
fn executable_segments(file: &ElfFile64<Endianness>) -> Vec<(u64, u64, u64)> {
    let endian = file.endian();
    file.elf_program_headers()
        .iter()
        .filter(|p| p.p_type(endian) == elf::PT_LOAD && p.p_flags(endian) & elf::PF_X != 0)
        .map(|p| (p.p_vaddr(endian), p.p_filesz(endian), p.p_offset(endian)))
        .collect()
}

/// The file offset of `address`, when an executable segment holds it.
fn offset_in(segments: &[(u64, u64, u64)], address: u64) -> Option<u64> {
    segments
        .iter()
        .find(|(vaddr, filesz, _)| address >= *vaddr && address - vaddr < *filesz)
        .map(|(vaddr, _, off)| address - vaddr + off)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[no_mangle]
    #[inline(never)]
    pub extern "C" fn arum_symbols_test_target(x: u64) -> u64 {
        std::hint::black_box(x).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5555
    }

    #[test]
    fn a_function_offset_holds_the_bytes_the_loader_maps_at_its_address() {
        let exe = std::env::current_exe().unwrap();
        let image = Image::read(&exe).unwrap();
        assert_eq!(image.table, SymbolTable::Symtab);
        let f = image
            .functions()
            .find(|f| f.name == "arum_symbols_test_target")
            .expect("the test binary defines the target");
        let offset = f.offset.unwrap() as usize;
        let file = std::fs::read(&exe).unwrap();
        let running = arum_symbols_test_target as *const u8;
        // SAFETY: the function's code is mapped readable and is at least 16 bytes long.
        let in_memory = unsafe { std::slice::from_raw_parts(running, 16) };
        assert_eq!(&file[offset..offset + 16], in_memory);
        // Independently of the ELF header: a position-independent binary runs away from the
        // addresses its symbols name (the loader picks its base), any other runs at them.
        let moved = running as u64 != f.address;
        assert_eq!(image.position_independent, moved, "{:#x}", f.address);
    }

    #[test]
    fn a_file_that_is_not_elf_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("script");
        std::fs::write(&p, "#!/bin/sh\necho hi\n").unwrap();
        let e = Image::read(&p).unwrap_err();
        assert!(e.to_string().contains("not a 64-bit ELF file"), "{e}");
    }

    #[test]
    fn libc_exports_malloc_and_strlen_is_an_ifunc() {
        let Some(libc) = crate::Loader::new(None).find_in_cache("libc.so.6", elf::EM_X86_64) else {
            eprintln!("no libc.so.6 for x86_64 in ld.so.cache: nothing to check here");
            return;
        };
        let image = Image::read(&libc).unwrap();
        assert!(image.functions().any(|f| f.name == "malloc"));
        let strlen = image.symbols.iter().find(|f| f.name == "strlen").unwrap();
        assert_eq!(strlen.kind, SymbolKind::Ifunc);
    }
}
