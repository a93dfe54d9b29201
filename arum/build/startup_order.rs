//! Links the functions a measured run executes next to each other (`startup-order.txt`, made by
//! `tools/startup-order/generate.sh`). arum is a static binary of about 5 MiB of code; a run
//! executes some 900 of its functions, about 670 KiB, which the linker would otherwise scatter
//! over the whole text. Every first touch of a 64 KiB stretch of code is a page fault (about 2 µs
//! in our VMs), and the fixed cost of a run is what arum is compared on (`benchmarks/overhead.sh`).
//!
//! The order is a list of symbol names for LLD's `--symbol-ordering-file`: rustc links with LLD
//! on x86-64 Linux (its own `rust-lld`, found in the sysroot), or the system's `ld.lld`. With
//! neither, arum is linked as usual and the build says so. Names the build does not have (the
//! code changed since the list was made) are skipped by the linker; regenerate the list then.

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
            "cargo:warning=no LLD found (rust-lld or ld.lld): arum is linked without its start-up order, which costs each run some 30 page faults"
        );
        return;
    };
    let arg = |a: &str| println!("cargo:rustc-link-arg-bin=arum={a}");
    arg("-fuse-ld=lld");
    if let Some(dir) = lld {
        arg(&format!("-B{}", dir.display()));
    }
    arg(&format!("-Wl,--symbol-ordering-file={}", order.display()));
    arg("-Wl,--no-warn-symbol-ordering");
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
