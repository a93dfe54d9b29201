//! Compiles every table of event-tables/ into one blob of static data (src/table/blob.rs) that
//! the library embeds: nothing is parsed at run time, and only the table the CPU needs is read.

use std::path::Path;

#[allow(dead_code)]
#[path = "src/table/blob.rs"]
mod blob;
#[allow(dead_code)]
#[path = "src/table/compile.rs"]
mod compile;
#[allow(dead_code)]
#[path = "src/table/file.rs"]
mod file;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../event-tables");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("event-tables/ exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut parsed = Vec::new();
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(path).expect("readable table");
        let t: file::TableFile = toml::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not a valid event table: {e}", path.display()));
        parsed.push(t);
    }
    let mut w = blob::Writer::new();
    let tables = compile::compile_all(&mut w, &parsed).unwrap_or_else(|e| panic!("{e}"));
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("tables.bin");
    std::fs::write(out, w.finish(&tables)).expect("writable OUT_DIR");
}
