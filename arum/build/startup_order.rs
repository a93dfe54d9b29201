//! Links the functions a measured run executes next to each other (`startup-order.txt`, made by
//! `tools/startup-order/generate.sh`). arum is a static binary of about 5 MiB of code, of which a
//! short run executes a few hundred KiB that the linker would otherwise scatter over the whole
//! text: every first touch of a 64 KiB stretch of code is a page fault, and the fixed cost of a
//! run is what arum is compared on (`benchmarks/overhead.sh` prints the page faults per run).
//!
//! The list holds two kinds of names. Most Rust functions are given with the hashes of their
//! mangled names replaced by `*` (the legacy `17h<hash>E`, v0's crate disambiguators
//! `Cs<hash>_`): those hashes move with every dependency, toolchain or crate change, the paths do
//! not. They become a linker script that gathers their sections (`.text.NAME`, one per function)
//! into an output section placed before `.text`. The other names (C functions, glibc's having no
//! section per function; instances of generic functions, which share a path) go as they are to
//! LLD's `--symbol-ordering-file`, which puts their sections first in `.text`, right after. rustc links with LLD on x86-64 Linux (its own `rust-lld`, found in the
//! sysroot), or the system's `ld.lld`; with neither, arum is linked as usual and the build says
//! so. `tools/startup-order/check.sh` (run by the tests) fails when the list no longer matches
//! the code, and names the fix.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn link() {
    // Stripped here rather than by the profile (see the workspace's Cargo.toml); the generator
    // keeps the symbols to read the names.
    println!("cargo:rerun-if-env-changed=ARUM_KEEP_SYMBOLS");
    if std::env::var("PROFILE").as_deref() == Ok("release")
        && std::env::var("ARUM_KEEP_SYMBOLS").as_deref() != Ok("1")
    {
        println!("cargo:rustc-link-arg-bin=arum=-Wl,--strip-all");
    }
    let order = Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("startup-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    println!("cargo:rerun-if-env-changed=ARUM_STARTUP_ORDER");
    let target = std::env::var("TARGET").unwrap_or_default();
    if std::env::var("ARUM_STARTUP_ORDER").as_deref() == Ok("0")
        || target != "x86_64-unknown-linux-gnu"
        || !order.exists()
    {
        return;
    }
    let Some(lld) = find_lld(&target) else {
        println!(
            "cargo:warning=no LLD found (rust-lld or ld.lld): arum is linked without its start-up order, which costs each run page faults (benchmarks/overhead.sh shows how many)"
        );
        return;
    };
    let text = std::fs::read_to_string(&order).expect("the start-up order is readable");
    let (script, symbols) = linker_inputs(&text);
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let (script_path, symbols_path) = (out.join("startup-order.ld"), out.join("startup-order.txt"));
    std::fs::write(&script_path, script).expect("OUT_DIR is writable");
    std::fs::write(&symbols_path, symbols).expect("OUT_DIR is writable");
    let arg = |a: &str| println!("cargo:rustc-link-arg-bin=arum={a}");
    arg("-fuse-ld=lld");
    if let Some(dir) = lld {
        arg(&format!("-B{}", dir.display()));
    }
    arg(&format!("-Wl,-T,{}", script_path.display()));
    arg(&format!(
        "-Wl,--symbol-ordering-file={}",
        symbols_path.display()
    ));
    arg("-Wl,--no-warn-symbol-ordering");
}

/// The linker script that gathers the Rust functions' sections, in the list's order, and the
/// exact names of the others.
fn linker_inputs(list: &str) -> (String, String) {
    let mut script = String::from("SECTIONS\n{\n  .text.arum_startup : {\n");
    let mut symbols = String::new();
    for name in list
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        if name.contains('*') {
            // A cold function (`#[cold]`: std's once and grow paths among them) has its section
            // named .text.unlikely.NAME, a hot one .text.hot.NAME.
            script.push_str(&format!(
                "    *(.text.{name} .text.unlikely.{name} .text.hot.{name})\n"
            ));
        } else {
            symbols.push_str(name);
            symbols.push('\n');
        }
    }
    script.push_str("  }\n}\nINSERT BEFORE .text;\n");
    (script, symbols)
}

/// `Some(Some(dir))`: rustc's own LLD, reached through the `ld.lld` in `dir` (as rustc itself
/// reaches it); `Some(None)`: `ld.lld` on the PATH; `None`: no LLD.
fn find_lld(target: &str) -> Option<Option<PathBuf>> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok());
    if let Some(root) = sysroot {
        let dir = Path::new(root.trim())
            .join("lib/rustlib")
            .join(target)
            .join("bin/gcc-ld");
        if dir.join("ld.lld").exists() {
            return Some(Some(dir));
        }
    }
    let on_path = Command::new("ld.lld")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    on_path.then_some(None)
}
