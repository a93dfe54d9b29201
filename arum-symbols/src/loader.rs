//! Which file the dynamic loader would load for a library name, following ld.so(8): a name with a
//! slash is a path; otherwise DT_RPATH of the loading object (when it has no DT_RUNPATH),
//! LD_LIBRARY_PATH, DT_RUNPATH, /etc/ld.so.cache, then the default directories. `$ORIGIN` in a
//! path is the loading object's directory. A candidate of another machine type is passed over, as
//! the loader does.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use crate::elf::Image;

/// The default directories of the loader (after the cache), multiarch first.
const DEFAULT_DIRS: &[&str] = &[
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

/// The loader's view of the machine: LD_LIBRARY_PATH and ld.so.cache.
#[derive(Debug, Clone)]
pub struct Loader {
    library_path: Vec<String>,
    cache: Vec<(String, PathBuf)>,
}

impl Loader {
    /// `ld_library_path`: the LD_LIBRARY_PATH the program will see.
    pub fn new(ld_library_path: Option<&str>) -> Loader {
        Loader {
            library_path: ld_library_path
                .map(|p| {
                    p.split([':', ';'])
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
            cache: std::fs::read("/etc/ld.so.cache")
                .map(|b| ld_so_cache(&b))
                .unwrap_or_default(),
        }
    }

    /// The file loaded for DT_NEEDED entry `name` of `from` (whose loaders up to the executable
    /// are `chain`, for their DT_RPATH).
    pub fn find(&self, name: &str, from: &Image, chain: &[&Image]) -> Option<PathBuf> {
        if name.contains('/') {
            let p = PathBuf::from(name);
            return p.is_file().then_some(p);
        }
        let machine = from.machine;
        let search = |dirs: &[String], origin: &Image| {
            dirs.iter().find_map(|d| {
                let p = expand(d, origin).join(name);
                same_machine(&p, machine).then_some(p)
            })
        };
        if from.runpath.is_empty() {
            for obj in std::iter::once(from).chain(chain.iter().copied()) {
                if let Some(p) = search(&obj.rpath, obj) {
                    return Some(p);
                }
            }
        }
        if let Some(p) = search(&self.library_path, from) {
            return Some(p);
        }
        if let Some(p) = search(&from.runpath, from) {
            return Some(p);
        }
        self.find_in_cache(name, machine).or_else(|| {
            DEFAULT_DIRS.iter().find_map(|d| {
                let p = Path::new(d).join(name);
                same_machine(&p, machine).then_some(p)
            })
        })
    }

    /// A soname in ld.so.cache, for this machine type.
    pub fn find_in_cache(&self, soname: &str, machine: u16) -> Option<PathBuf> {
        self.cache
            .iter()
            .filter(|(n, _)| n == soname)
            .map(|(_, p)| p.clone())
            .find(|p| same_machine(p, machine))
    }

    /// Every library `exe` loads at start, in the loader's breadth-first order, as (soname, path).
    /// Names that cannot be found are left out (the program would not start anyway).
    pub fn needed(&self, exe: &Image) -> Vec<(String, Image)> {
        let mut out: Vec<(String, Image)> = Vec::new();
        let mut queue: VecDeque<(String, usize)> =
            exe.needed.iter().map(|n| (n.clone(), usize::MAX)).collect();
        while let Some((name, parent)) = queue.pop_front() {
            if out.iter().any(|(n, _)| *n == name) {
                continue;
            }
            let from = if parent == usize::MAX {
                exe
            } else {
                &out[parent].1
            };
            let chain: Vec<&Image> = if parent == usize::MAX {
                Vec::new()
            } else {
                vec![exe]
            };
            let Some(path) = self.find(&name, from, &chain) else {
                continue;
            };
            let Ok(image) = Image::read(&path) else {
                continue;
            };
            let index = out.len();
            queue.extend(image.needed.iter().map(|n| (n.clone(), index)));
            out.push((name, image));
        }
        out
    }

    /// Libraries in ld.so.cache whose soname `wanted` names (see [`names_library`]).
    pub fn cache_matches(&self, wanted: &str) -> Vec<PathBuf> {
        self.cache
            .iter()
            .filter(|(n, _)| names_library(wanted, n))
            .map(|(_, p)| p.clone())
            .collect()
    }
}

/// Whether the user's `wanted` (`c`, `libc`, `libc.so.6`) names the library `soname`: the soname
/// itself, or its stem before `.so` with or without the `lib` prefix.
pub fn names_library(wanted: &str, soname: &str) -> bool {
    if wanted == soname {
        return true;
    }
    let stem = soname.split(".so").next().unwrap_or(soname);
    stem == wanted || stem.strip_prefix("lib") == Some(wanted)
}

/// `$ORIGIN` (and `${ORIGIN}`) replaced by the directory of `origin`.
fn expand(dir: &str, origin: &Image) -> PathBuf {
    let base = origin
        .path
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| ".".into());
    PathBuf::from(dir.replace("${ORIGIN}", &base).replace("$ORIGIN", &base))
}

/// Whether `path` is an ELF file for `machine` (the loader skips others).
fn same_machine(path: &Path, machine: u16) -> bool {
    use std::io::Read;
    let mut head = [0u8; 20];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    if f.read_exact(&mut head).is_err() || &head[..4] != b"\x7fELF" {
        return false;
    }
    let m = if head[5] == 2 {
        u16::from_be_bytes([head[18], head[19]])
    } else {
        u16::from_le_bytes([head[18], head[19]])
    };
    m == machine
}

/// The (soname, path) entries of an ld.so.cache in glibc's format ("glibc-ld.so.cache1.1", alone or
/// after the old "ld.so-1.7.0" table). String offsets count from the new header.
pub fn ld_so_cache(bytes: &[u8]) -> Vec<(String, PathBuf)> {
    const NEW: &[u8] = b"glibc-ld.so.cache1.1";
    let Some(start) = bytes.windows(NEW.len()).position(|w| w == NEW) else {
        return Vec::new();
    };
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    let Some(count) = u32_at(start + 20) else {
        return Vec::new();
    };
    // Header: magic+version (20), nlibs, len_strings, flags+pad (4), extension offset, 3 unused.
    let entries = start + 48;
    let string = |off: u32| -> Option<String> {
        let from = start + off as usize;
        let end = bytes.get(from..)?.iter().position(|&b| b == 0)? + from;
        Some(String::from_utf8_lossy(&bytes[from..end]).into_owned())
    };
    (0..count as usize)
        .filter_map(|i| {
            let at = entries + i * 24;
            let key = string(u32_at(at + 4)?)?;
            let value = string(u32_at(at + 8)?)?;
            Some((key, PathBuf::from(value)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_names_match_as_users_write_them() {
        assert!(names_library("libc", "libc.so.6"));
        assert!(names_library("c", "libc.so.6"));
        assert!(names_library("libc.so.6", "libc.so.6"));
        assert!(names_library("liblzma", "liblzma.so.5"));
        assert!(!names_library("libc", "libcap.so.2"));
        assert!(!names_library("lib", "libc.so.6"));
    }

    #[test]
    fn the_machines_cache_lists_libc() {
        let Ok(bytes) = std::fs::read("/etc/ld.so.cache") else {
            eprintln!("no /etc/ld.so.cache here: the cache parser is checked on a built one below");
            return;
        };
        let entries = ld_so_cache(&bytes);
        assert!(
            entries.iter().any(|(n, p)| n == "libc.so.6" && p.is_file()),
            "{entries:?}"
        );
    }

    #[test]
    fn a_built_cache_is_parsed() {
        // A new-format cache with two entries, laid out as glibc writes it.
        let mut b = Vec::new();
        b.extend_from_slice(b"glibc-ld.so.cache1.1");
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&[0u8; 4]);
        b.extend_from_slice(&[0u8; 16]);
        let strings = 48 + 2 * 24;
        let names = [
            "libz.so.1\0",
            "/usr/lib/libz.so.1\0",
            "libm.so.6\0",
            "/lib/libm.so.6\0",
        ];
        let mut offs = Vec::new();
        let mut at = strings;
        for n in names {
            offs.push(at as u32);
            at += n.len();
        }
        for e in 0..2 {
            b.extend_from_slice(&3i32.to_le_bytes());
            b.extend_from_slice(&offs[2 * e].to_le_bytes());
            b.extend_from_slice(&offs[2 * e + 1].to_le_bytes());
            b.extend_from_slice(&0u32.to_le_bytes());
            b.extend_from_slice(&0u64.to_le_bytes());
        }
        for n in names {
            b.extend_from_slice(n.as_bytes());
        }
        assert_eq!(
            ld_so_cache(&b),
            [
                ("libz.so.1".to_string(), PathBuf::from("/usr/lib/libz.so.1")),
                ("libm.so.6".to_string(), PathBuf::from("/lib/libm.so.6")),
            ]
        );
    }

    #[test]
    fn origin_is_the_loading_objects_directory() {
        let image = Image {
            path: PathBuf::from("/opt/app/bin/app"),
            table: crate::SymbolTable::Dynsym,
            symbols: Vec::new(),
            position_independent: true,
            machine: 62,
            needed: Vec::new(),
            soname: None,
            rpath: Vec::new(),
            runpath: Vec::new(),
        };
        assert_eq!(
            expand("$ORIGIN/../lib", &image),
            PathBuf::from("/opt/app/bin/../lib")
        );
        assert_eq!(expand("${ORIGIN}", &image), PathBuf::from("/opt/app/bin"));
    }
}
