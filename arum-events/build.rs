//! Embeds every file of event-tables/ in the library, with a small index of which CPUs each
//! table matches, so that at run time only the one matching table is parsed.

use std::fmt::Write;
use std::path::Path;

#[derive(serde::Deserialize)]
struct Head {
    table: TableHead,
}

#[derive(serde::Deserialize)]
struct TableHead {
    name: String,
    vendor: String,
    #[serde(rename = "match")]
    matches: Vec<MatchHead>,
}

#[derive(serde::Deserialize)]
struct MatchHead {
    family: u32,
    models: Vec<[u32; 2]>,
    #[serde(default)]
    steppings: Option<Vec<[u32; 2]>>,
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../event-tables");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("event-tables/ exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut out = String::from("pub static EMBEDDED: &[EmbeddedTable] = &[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(path).expect("readable table");
        let head: Head = toml::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not a valid event table: {e}", path.display()));
        let matches: String = head
            .table
            .matches
            .iter()
            .map(|m| {
                format!(
                    "TableMatch {{ family: {}, models: &{:?}, steppings: {} }}, ",
                    m.family,
                    m.models,
                    match &m.steppings {
                        Some(s) => format!("Some(&{s:?})"),
                        None => "None".into(),
                    }
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "    EmbeddedTable {{ name: {:?}, vendor: {:?}, matches: &[{matches}], text: include_str!({:?}) }},",
            head.table.name,
            head.table.vendor,
            path.canonicalize().expect("absolute path").display()
        );
    }
    out.push_str("];\n");
    let dest =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded.rs");
    std::fs::write(dest, out).expect("writable OUT_DIR");
}
