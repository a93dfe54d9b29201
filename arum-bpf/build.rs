//! Compiles the BPF programs (`src/bpf/*.bpf.c`) with clang for the BPF target; the objects are
//! embedded in the binary (`include_bytes!`), so nothing is compiled or read at run time. The
//! programs need no kernel headers: `arum.h` holds the few stable UAPI definitions they use and
//! kernel structures are read through CO-RE, relocated by libbpf against the running kernel.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAMS: &[&str] = &["syscalls", "runtime", "functions"];

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // libbpf's own headers (bpf_helpers.h...), from the libbpf-sys build.
    let include = env::var("DEP_BPF_INCLUDE").expect("libbpf-sys exports its include directory");
    let clang = clang();
    println!("cargo:rerun-if-env-changed=ARUM_CLANG");
    println!("cargo:rerun-if-changed=src/bpf");
    for name in PROGRAMS {
        let src = Path::new("src/bpf").join(format!("{name}.bpf.c"));
        let obj = out.join(format!("{name}.bpf.o"));
        let status = Command::new(&clang)
            .args([
                "-O2",
                "-g",
                "-target",
                "bpf",
                "-D__TARGET_ARCH_x86",
                "-Wall",
                "-Werror",
            ])
            .arg(format!("-I{include}"))
            .arg("-c")
            .arg(&src)
            .arg("-o")
            .arg(&obj)
            .status()
            .unwrap_or_else(|e| panic!("running {clang}: {e}"));
        assert!(
            status.success(),
            "{clang} could not compile {}",
            src.display()
        );
    }
}

/// `$ARUM_CLANG`, else the first clang on PATH: unversioned, then Debian's versioned names.
fn clang() -> String {
    if let Ok(c) = env::var("ARUM_CLANG") {
        return c;
    }
    let names =
        std::iter::once("clang".to_string()).chain((14..=21).rev().map(|v| format!("clang-{v}")));
    for name in names {
        if Command::new(&name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return name;
        }
    }
    panic!(
        "no clang found to compile ARUM's BPF programs: install Debian's clang (scripts/deps.sh does), or set ARUM_CLANG"
    );
}
