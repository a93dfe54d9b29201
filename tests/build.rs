//! Builds the native helpers of the function-timing tests with the system's C and C++ compilers
//! (through the cc crate's compiler detection): the C helper as a PIE, a non-PIE and a stripped
//! executable, its shared library, and a C++ helper. Their directory is ARUM_NATIVE_HELPERS.

use std::path::Path;
use std::process::Command;

fn run(mut cmd: Command, what: &str) {
    let status = cmd.status().unwrap_or_else(|e| {
        panic!("cannot run the compiler for {what}: {e}; install build-essential")
    });
    assert!(status.success(), "building {what} failed: {cmd:?}");
}

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    let src = Path::new("native");
    for f in ["fcalls.c", "fcalls_lib.c", "fcalls_lib.h", "fcpp.cpp"] {
        println!("cargo:rerun-if-changed=native/{f}");
    }
    // The compilers only, not the flags cc derives from the Rust target: arum itself is linked
    // statically, the helpers are ordinary dynamically linked programs, as users' programs are.
    let c_tool = cc::Build::new().cargo_metadata(false).get_compiler();
    let cxx_tool = cc::Build::new()
        .cpp(true)
        .cargo_metadata(false)
        .get_compiler();
    let c = || Command::new(c_tool.path());
    let cxx = || Command::new(cxx_tool.path());
    let common = [
        "-O2",
        "-g",
        "-fno-omit-frame-pointer",
        "-fno-optimize-sibling-calls",
    ];

    let lib = out.join("libfcalls.so");
    let mut cmd = c();
    cmd.args(common)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(src.join("fcalls_lib.c"));
    run(cmd, "libfcalls.so");

    let exe = |name: &str, extra: &[&str]| {
        let mut cmd = c();
        cmd.args(common)
            .args(extra)
            .arg("-o")
            .arg(out.join(name))
            .arg(src.join("fcalls.c"))
            .arg(format!("-I{}", src.display()))
            .arg(format!("-L{}", out.display()))
            .args(["-lfcalls", "-pthread", "-Wl,-rpath,$ORIGIN"]);
        run(cmd, name);
    };
    exe("fcalls", &["-fPIE", "-pie"]);
    // The library's code linked into the executable itself (as a program built against a
    // static library): libfcalls.so stays findable beside it but is never loaded.
    let mut cmd = c();
    cmd.args(common)
        .arg("-o")
        .arg(out.join("fcalls_static"))
        .arg(src.join("fcalls.c"))
        .arg(src.join("fcalls_lib.c"))
        .arg(format!("-I{}", src.display()))
        .args(["-pthread", "-Wl,-rpath,$ORIGIN"]);
    run(cmd, "fcalls_static");
    exe("fcalls_nopie", &["-fno-PIE", "-no-pie"]);
    // Exported (-rdynamic), then stripped: only .dynsym remains.
    exe("fcalls_stripped", &["-fPIE", "-pie", "-rdynamic"]);
    let mut strip = Command::new("strip");
    strip.arg("--strip-all").arg(out.join("fcalls_stripped"));
    run(strip, "the stripped helper");

    let mut cmd = cxx();
    cmd.args(common)
        .arg("-o")
        .arg(out.join("fcpp"))
        .arg(src.join("fcpp.cpp"));
    run(cmd, "fcpp");

    println!("cargo:rustc-env=ARUM_NATIVE_HELPERS={}", out.display());
}
