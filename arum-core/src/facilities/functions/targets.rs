//! From `-F` names to probe sites: `NAME` in the program's executable, `LIB:NAME` in the library
//! the program would load for LIB (found as the dynamic loader finds it), `PATH:NAME` in a file
//! named in full. Names may be globs and demangled Rust or C++ names.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use arum_symbols::{select, Image, Loader, SelectError};

use crate::error::ArumError;

/// One `-F` entry, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// `LIB` or a path, before the last `:` that is not part of `::`.
    pub lib: Option<String>,
    pub name: String,
}

impl Spec {
    pub fn parse(s: &str) -> Spec {
        // `ns::f` is a name; `lib:ns::f` and `/p/a:b:f`: the library is before the first single ':'.
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b':' {
                if bytes.get(i + 1) == Some(&b':') {
                    i += 2;
                    continue;
                }
                return Spec {
                    lib: Some(s[..i].to_string()),
                    name: s[i + 1..].to_string(),
                };
            }
            i += 1;
        }
        Spec {
            lib: None,
            name: s.to_string(),
        }
    }
}

/// A function to probe.
#[derive(Debug, Clone)]
pub struct Target {
    /// As the report names it (`libc:malloc` for a library's function).
    pub name: String,
    pub symbol: String,
    pub file: PathBuf,
    /// The file path for the kernel.
    pub path: CString,
    pub offset: u64,
}

/// Splits `-F` values and a `--functions-file` into specs (commas and whitespace separate;
/// `#` starts a comment in the file).
pub fn specs(lists: &[String], file: Option<&Path>) -> Result<Vec<Spec>, ArumError> {
    let mut words: Vec<String> = lists
        .iter()
        .flat_map(|l| l.split([',', ' ', '\t', '\n']))
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).map_err(|e| ArumError::FunctionsFile {
            path: path.to_path_buf(),
            source: e,
        })?;
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("");
            words.extend(
                line.split([',', ' ', '\t'])
                    .filter(|w| !w.is_empty())
                    .map(String::from),
            );
        }
    }
    let mut out: Vec<Spec> = Vec::new();
    for w in words {
        let spec = Spec::parse(&w);
        if !out.contains(&spec) {
            out.push(spec);
        }
    }
    Ok(out)
}

/// The program file in which bare names are looked up: the command's program, found in PATH as
/// exec would find it; for `--shell`, the first word of the line.
pub fn program_file(argv0: &str) -> Option<PathBuf> {
    if argv0.contains('/') {
        return Some(PathBuf::from(argv0));
    }
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    path.split(':')
        .map(|d| Path::new(if d.is_empty() { "." } else { d }).join(argv0))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Resolves every spec; the first name that matches nothing is an error naming the nearest ones.
/// Also one warning for each library named that the program does not load at its start.
pub fn resolve(specs: &[Spec], program: &Path) -> Result<(Vec<Target>, Vec<String>), ArumError> {
    let exe = Image::read(program).map_err(|e| ArumError::Functions(format!(
        "{e}; name the file with PATH:NAME (e.g. -F ./app:compute) when the program is a script or a wrapper"
    )))?;
    let loader = Loader::new(std::env::var("LD_LIBRARY_PATH").ok().as_deref());
    let mut needed: Option<Vec<(String, Image)>> = None;
    let mut out: Vec<Target> = Vec::new();
    let mut notes = Vec::new();
    for spec in specs {
        let (image, prefix) = match &spec.lib {
            None => (exe.clone(), String::new()),
            Some(lib) => {
                let needed = needed.get_or_insert_with(|| loader.needed(&exe));
                let image = library(lib, &exe, needed, &loader)?;
                if !lib.contains('/') && !needed.iter().any(|(_, i)| i.path == image.path) {
                    notes.push(not_loaded(lib, spec, &exe, &image, needed));
                }
                (image, format!("{lib}:"))
            }
        };
        let chosen =
            select(&image, &spec.name).map_err(|e| select_error(e, spec, &exe, &loader))?;
        for s in chosen {
            if out.iter().any(|t| t.file == s.file && t.offset == s.offset) {
                continue;
            }
            let path = CString::new(s.file.as_os_str().as_encoded_bytes()).map_err(|_| {
                ArumError::Functions(format!("{} has a NUL byte in its path", s.file.display()))
            })?;
            out.push(Target {
                name: format!("{prefix}{}", s.name),
                symbol: s.symbol,
                file: s.file,
                path,
                offset: s.offset,
            });
        }
    }
    Ok((out, notes))
}

/// The warning for `lib:NAME` where the program does not load `lib` at its start: its calls are
/// counted only if the program loads the library later (dlopen), and where the program has its
/// own copy of the function (linked in statically), that is the one it calls.
fn not_loaded(
    lib: &str,
    spec: &Spec,
    exe: &Image,
    image: &Image,
    needed: &[(String, Image)],
) -> String {
    let loads = if needed.is_empty() {
        "no library".to_string()
    } else {
        needed
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut note = format!(
        "-F {lib}:{name}: {program} does not load {lib} at its start (it loads {loads}): {file} is probed, and counts only if the program loads it later (dlopen)",
        name = spec.name,
        program = exe.path.display(),
        file = image.path.display(),
    );
    if select(exe, &spec.name).is_ok() {
        note.push_str(&format!(
            "; {} has its own copy of {} (linked in statically): -F {} probes that",
            exe.path.display(),
            spec.name,
            spec.name
        ));
    }
    note
}

/// The library `lib` names for this program.
fn library(
    lib: &str,
    exe: &Image,
    needed: &[(String, Image)],
    loader: &Loader,
) -> Result<Image, ArumError> {
    let read = |p: &Path| Image::read(p).map_err(|e| ArumError::Functions(e.to_string()));
    if lib.contains('/') {
        return read(Path::new(lib));
    }
    if let Some((_, image)) = needed
        .iter()
        .find(|(soname, _)| arum_symbols::names_library(lib, soname))
    {
        return Ok(image.clone());
    }
    // A library the program loads later (dlopen): as the loader would find it by name, given
    // as a file name or as its stem (`libfoo` for libfoo.so).
    let file_name = if lib.contains(".so") {
        lib.to_string()
    } else {
        format!("{lib}.so")
    };
    if let Some(p) = [lib, file_name.as_str()]
        .iter()
        .find_map(|name| loader.find(name, exe, &[]))
    {
        return read(&p);
    }
    if let Some(p) = loader.cache_matches(lib).first() {
        return read(p);
    }
    let names: Vec<&str> = needed.iter().map(|(n, _)| n.as_str()).collect();
    Err(ArumError::Functions(format!(
        "no library {lib:?} among the libraries of {} ({}) nor in the loader's search path; give its path: -F /path/to/lib.so:NAME",
        exe.path.display(),
        if names.is_empty() { "it loads none".to_string() } else { names.join(", ") }
    )))
}

/// The error for a name, with a better hint where the name is defined in a library the program
/// loads.
fn select_error(e: SelectError, spec: &Spec, exe: &Image, loader: &Loader) -> ArumError {
    if spec.lib.is_none() {
        if let SelectError::NotProbeable { what, .. } | SelectError::Unknown { pattern: what, .. } =
            &e
        {
            let _ = what;
            for (soname, image) in loader.needed(exe) {
                if select(&image, &spec.name).is_ok() {
                    let stem = soname.split(".so").next().unwrap_or(&soname).to_string();
                    return ArumError::Functions(format!(
                        "{e}; it is defined in {soname}: use -F {stem}:{}",
                        spec.name
                    ));
                }
            }
        }
    }
    ArumError::Functions(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_prefixes_are_split_from_names() {
        assert_eq!(
            Spec::parse("compute"),
            Spec {
                lib: None,
                name: "compute".into()
            }
        );
        assert_eq!(
            Spec::parse("libc:malloc"),
            Spec {
                lib: Some("libc".into()),
                name: "malloc".into()
            }
        );
        assert_eq!(
            Spec::parse("ns::Class::method"),
            Spec {
                lib: None,
                name: "ns::Class::method".into()
            }
        );
        assert_eq!(
            Spec::parse("libfoo:ns::f"),
            Spec {
                lib: Some("libfoo".into()),
                name: "ns::f".into()
            }
        );
        assert_eq!(
            Spec::parse("./build/app:parse_*"),
            Spec {
                lib: Some("./build/app".into()),
                name: "parse_*".into()
            }
        );
    }

    #[test]
    fn lists_and_files_are_merged_without_repeats() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("fns");
        std::fs::write(&f, "# hot paths\ncompute\nlibc:malloc  # allocator\n").unwrap();
        let s = specs(&["compute,parse_*".into(), "x".into()], Some(&f)).unwrap();
        let names: Vec<_> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["compute", "parse_*", "x", "malloc"]);
    }

    #[test]
    fn bare_names_are_looked_up_in_the_program_and_unknown_ones_get_suggestions() {
        let exe = std::env::current_exe().unwrap();
        let (t, notes) = resolve(&[Spec::parse("arum_probe_class_push")], &exe).unwrap();
        assert_eq!(t.len(), 1);
        assert!(notes.is_empty(), "{notes:?}");
        let e = resolve(&[Spec::parse("arum_probe_class_psh")], &exe).unwrap_err();
        assert!(e.to_string().contains("arum_probe_class_push"), "{e}");
        assert_eq!(e.exit_code(), 125);
    }

    #[test]
    fn a_libc_function_is_found_in_the_library_the_program_loads() {
        // A dynamically linked program of the system (arum and its tests are static).
        let exe = PathBuf::from("/bin/sh");
        let (t, notes) = resolve(&[Spec::parse("libc:malloc")], &exe).unwrap();
        // The program loads the C library: nothing to warn of.
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(t[0].name, "libc:malloc");
        assert!(
            t[0].file.to_string_lossy().contains("libc.so"),
            "{:?}",
            t[0].file
        );
        // Bare, it is only imported by the program: the error says where it is defined.
        let e = resolve(&[Spec::parse("malloc")], &exe)
            .unwrap_err()
            .to_string();
        assert!(e.contains("-F libc:malloc"), "{e}");
    }
}
