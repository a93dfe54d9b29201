//! Readable names of mangled symbols: Rust (legacy and v0 mangling) and C++ (Itanium ABI).

/// A symbol's demangled names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Demangled {
    /// Everything the mangled name says (`ns::Class::method(int) const`, `krate::f::h0123...`).
    pub full: String,
    /// The name a person writes: no Rust hash, no C++ parameter list (`ns::Class::method`).
    pub short: String,
}

/// The demangled names of `mangled`, or None for a plain C name (or one neither scheme parses).
pub fn demangle(mangled: &str) -> Option<Demangled> {
    // Legacy Rust symbols are valid Itanium names too (`_ZN...17h<hash>E`): Rust is tried first,
    // and it only accepts names that carry its hash or use the v0 scheme.
    if let Ok(d) = rustc_demangle::try_demangle(mangled) {
        return Some(Demangled {
            full: d.to_string(),
            short: format!("{d:#}"),
        });
    }
    if !mangled.starts_with("_Z") {
        return None;
    }
    let symbol = cpp_demangle::Symbol::new(mangled).ok()?;
    let full = symbol
        .demangle(&cpp_demangle::DemangleOptions::new())
        .ok()?;
    let short = symbol
        .demangle(
            &cpp_demangle::DemangleOptions::new()
                .no_params()
                .no_return_type(),
        )
        .ok()
        .unwrap_or_else(|| full.clone());
    Some(Demangled { full, short })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_legacy_and_v0_names_lose_their_hash() {
        let d = demangle("_ZN6rustfn5parse17h0123456789abcdefE").unwrap();
        assert_eq!(d.short, "rustfn::parse");
        assert_eq!(d.full, "rustfn::parse::h0123456789abcdef");
        let v0 = demangle("_RNvCs1234_6rustfn5parse").unwrap();
        assert_eq!(v0.short, "rustfn::parse");
    }

    #[test]
    fn cpp_names_lose_their_parameters() {
        let d = demangle("_ZN2ns5Shape4areaEi").unwrap();
        assert_eq!(d.full, "ns::Shape::area(int)");
        assert_eq!(d.short, "ns::Shape::area");
    }

    #[test]
    fn c_names_are_left_alone() {
        assert_eq!(demangle("malloc"), None);
        assert_eq!(demangle("_start"), None);
    }
}
