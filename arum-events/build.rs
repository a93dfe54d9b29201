//! Compiles every table of event-tables/ into blobs of static data (src/table/blob.rs) that the
//! library embeds: an index of the tables' match rules, and each table's blob compressed. Nothing
//! is parsed at run time, and only the table the CPU needs is decompressed.

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
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).to_path_buf();
    // The index: every table's record and match rules without its events, aliases and metrics,
    // in the same order as the pack.
    let headers: Vec<file::TableFile> = parsed
        .iter()
        .map(|t| file::TableFile {
            aliases: Default::default(),
            events: Vec::new(),
            metrics: Vec::new(),
            ..t.clone()
        })
        .collect();
    std::fs::write(out.join("tables-index.bin"), blob_of(&headers)).expect("writable OUT_DIR");
    // The pack: each table a blob of its own, LZ4-compressed (a quarter of the size; the one
    // table a CPU needs decompresses in about a tenth of a millisecond). Layout, little-endian
    // u32s: count, then (offset, compressed length, decompressed length) per table, then data.
    // (compressed, decompressed length) of each table's blob.
    let blobs: Vec<(Vec<u8>, usize)> = parsed
        .iter()
        .map(|t| {
            let raw = blob_of(std::slice::from_ref(t));
            (lz4_flex::block::compress(&raw), raw.len())
        })
        .collect();
    let mut pack = Vec::new();
    pack.extend_from_slice(&(blobs.len() as u32).to_le_bytes());
    let mut offset = 4 + 12 * blobs.len();
    for (b, n) in &blobs {
        for v in [offset, b.len(), *n] {
            pack.extend_from_slice(&(v as u32).to_le_bytes());
        }
        offset += b.len();
    }
    for (b, _) in &blobs {
        pack.extend_from_slice(b);
    }
    std::fs::write(out.join("tables.pack"), pack).expect("writable OUT_DIR");
}

fn blob_of(tables: &[file::TableFile]) -> Vec<u8> {
    let mut w = blob::Writer::new();
    let recs = compile::compile_all(&mut w, tables).unwrap_or_else(|e| panic!("{e}"));
    w.finish(&recs)
}
