//! Choosing functions of an image by name: exact or glob (`parse_*`), matched against the symbol
//! as written (mangled) and its demangled names (`mycrate::parse`, `ns::Class::method`). A name
//! that matches nothing gets the nearest names; a name that matches only something that cannot be
//! probed says what it is.

use std::path::PathBuf;

use crate::elf::{Image, SymbolKind, SymbolTable};
use crate::names::demangle;

/// A function chosen for probing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    /// How the report names it: the short demangled name, or the symbol.
    pub name: String,
    /// The symbol as in the file.
    pub symbol: String,
    pub file: PathBuf,
    pub offset: u64,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    #[error("no function {pattern:?} in {file}{}", hint(.suggestions, *.stripped))]
    Unknown {
        pattern: String,
        file: PathBuf,
        suggestions: Vec<String>,
        /// The file has no `.symtab`: only its exported functions have names.
        stripped: bool,
    },
    #[error("{name:?} in {file} cannot be probed: {what}")]
    NotProbeable {
        name: String,
        file: PathBuf,
        what: String,
    },
    #[error("bad pattern {pattern:?}: {why}")]
    BadPattern { pattern: String, why: String },
}

fn hint(suggestions: &[String], stripped: bool) -> String {
    let nearest = if suggestions.is_empty() {
        String::new()
    } else {
        format!("; nearest: {}", suggestions.join(", "))
    };
    if stripped {
        format!(
            "{nearest}; the file is stripped (no .symtab): only its exported functions have \
             names; probe a build that keeps its symbols"
        )
    } else if nearest.is_empty() {
        " (misspelled, or inlined away by the compiler: it has no symbol)".into()
    } else {
        nearest
    }
}

/// The names a symbol answers to: as written, demangled in full, demangled short.
fn names_of(symbol: &str) -> (Option<String>, Vec<String>) {
    match demangle(symbol) {
        Some(d) => (
            Some(d.short.clone()),
            vec![symbol.to_string(), d.full, d.short],
        ),
        None => (None, vec![symbol.to_string()]),
    }
}

/// The probeable functions of `image` that `pattern` names. Aliases (several symbols at one
/// offset) are probed once, under the first name that matched.
pub fn select(image: &Image, pattern: &str) -> Result<Vec<Selected>, SelectError> {
    let is_glob = pattern.contains(['*', '?', '[']);
    let glob = if is_glob {
        Some(
            glob::Pattern::new(pattern).map_err(|e| SelectError::BadPattern {
                pattern: pattern.into(),
                why: e.to_string(),
            })?,
        )
    } else {
        None
    };
    let matches = |name: &str| match &glob {
        Some(g) => g.matches(name),
        None => name == pattern,
    };
    let mut chosen: Vec<Selected> = Vec::new();
    let mut unprobeable: Option<SelectError> = None;
    for sym in &image.symbols {
        let (short, names) = names_of(&sym.name);
        if !names.iter().any(|n| matches(n)) {
            continue;
        }
        let what = match (sym.kind, sym.offset) {
            (SymbolKind::Function, Some(offset)) => {
                if !chosen.iter().any(|c| c.offset == offset) {
                    chosen.push(Selected {
                        name: short.unwrap_or_else(|| sym.name.clone()),
                        symbol: sym.name.clone(),
                        file: image.path.clone(),
                        offset,
                        size: sym.size,
                    });
                }
                continue;
            }
            (SymbolKind::Function, None) => "its address is in no executable segment".to_string(),
            (SymbolKind::Ifunc, _) => {
                "it is an IFUNC, a resolver run once at load time that picks an \
                 implementation; name the implementation instead (e.g. a __memcpy_* variant)"
                    .to_string()
            }
            (SymbolKind::Data, _) => "it is a data object, not a function".to_string(),
            (SymbolKind::Imported, _) => format!(
                "it is only imported there; probe it in the library that defines it (LIB:{})",
                sym.name
            ),
        };
        unprobeable.get_or_insert(SelectError::NotProbeable {
            name: sym.name.clone(),
            file: image.path.clone(),
            what,
        });
    }
    if !chosen.is_empty() {
        return Ok(chosen);
    }
    if let Some(e) = unprobeable {
        // A glob that matched only unprobeable symbols is not an error of one name: say so too.
        return Err(e);
    }
    Err(SelectError::Unknown {
        pattern: pattern.into(),
        file: image.path.clone(),
        suggestions: nearest(image, pattern),
        stripped: image.table == SymbolTable::Dynsym,
    })
}

/// Up to five probeable names closest to `pattern` (Jaro-Winkler on the names a person writes).
pub fn nearest(image: &Image, pattern: &str) -> Vec<String> {
    let bare = pattern.replace(['*', '?', '[', ']'], "");
    let mut scored: Vec<(f64, String)> = image
        .functions()
        .map(|f| {
            let name = demangle(&f.name).map_or_else(|| f.name.clone(), |d| d.short);
            (strsim::jaro_winkler(&bare, &name), name)
        })
        .filter(|(score, _)| *score > 0.75)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, n)| n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::Function;

    fn image(symbols: &[(&str, u64, SymbolKind)]) -> Image {
        Image {
            path: PathBuf::from("/bin/app"),
            table: SymbolTable::Symtab,
            symbols: symbols
                .iter()
                .map(|&(name, address, kind)| Function {
                    name: name.into(),
                    address,
                    size: 16,
                    offset: (kind == SymbolKind::Function).then(|| address - 0x1000),
                    kind,
                })
                .collect(),
            position_independent: true,
            machine: 62,
            needed: Vec::new(),
            soname: None,
            rpath: Vec::new(),
            runpath: Vec::new(),
        }
    }

    #[test]
    fn exact_glob_and_demangled_names_select_functions() {
        let img = image(&[
            ("compute", 0x1100, SymbolKind::Function),
            ("parse_a", 0x1200, SymbolKind::Function),
            ("parse_b", 0x1300, SymbolKind::Function),
            ("_ZN2ns5Shape4areaEi", 0x1400, SymbolKind::Function),
            (
                "_ZN6rustfn5parse17h0123456789abcdefE",
                0x1500,
                SymbolKind::Function,
            ),
        ]);
        assert_eq!(select(&img, "compute").unwrap()[0].offset, 0x100);
        let parsers: Vec<_> = select(&img, "parse_*")
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(parsers, ["parse_a", "parse_b"]);
        assert_eq!(
            select(&img, "ns::Shape::area").unwrap()[0].symbol,
            "_ZN2ns5Shape4areaEi"
        );
        assert_eq!(
            select(&img, "_ZN2ns5Shape4areaEi").unwrap()[0].name,
            "ns::Shape::area"
        );
        assert_eq!(select(&img, "rustfn::parse").unwrap()[0].offset, 0x500);
        assert_eq!(select(&img, "rustfn::*").unwrap().len(), 1);
    }

    #[test]
    fn aliases_at_one_offset_are_probed_once() {
        let img = image(&[
            ("malloc", 0x2000, SymbolKind::Function),
            ("__libc_malloc", 0x2000, SymbolKind::Function),
        ]);
        assert_eq!(select(&img, "*malloc").unwrap().len(), 1);
    }

    #[test]
    fn unknown_names_get_the_nearest_ones() {
        let img = image(&[
            ("compute", 0x1100, SymbolKind::Function),
            ("compute_all", 0x1200, SymbolKind::Function),
            ("zzz", 0x1300, SymbolKind::Function),
        ]);
        match select(&img, "comput").unwrap_err() {
            SelectError::Unknown { suggestions, .. } => {
                assert_eq!(suggestions, ["compute", "compute_all"])
            }
            e => panic!("{e}"),
        }
        // Unknown in a file with a .symtab: maybe misspelled or inlined; in a stripped one, the
        // stripping is the likelier reason, and said.
        let unknown = select(&img, "nothing_like_it").unwrap_err().to_string();
        assert!(unknown.contains("inlined away"), "{unknown}");
        let mut stripped = img.clone();
        stripped.table = SymbolTable::Dynsym;
        let unknown = select(&stripped, "nothing_like_it")
            .unwrap_err()
            .to_string();
        assert!(
            unknown.contains("stripped") && !unknown.contains("inlined"),
            "{unknown}"
        );
    }

    #[test]
    fn data_imports_and_ifuncs_say_what_they_are() {
        let img = image(&[
            ("table", 0x3000, SymbolKind::Data),
            ("malloc", 0, SymbolKind::Imported),
            ("memcpy", 0x3100, SymbolKind::Ifunc),
        ]);
        let e = select(&img, "table").unwrap_err().to_string();
        assert!(e.contains("data object"), "{e}");
        let e = select(&img, "malloc").unwrap_err().to_string();
        assert!(e.contains("LIB:malloc"), "{e}");
        let e = select(&img, "memcpy").unwrap_err().to_string();
        assert!(e.contains("IFUNC"), "{e}");
    }
}
