//! `emit`: writes every byte value 0..=255, 64 times over, to stdout, and a marker line to stderr.
use std::io::Write;
fn main() {
    let data: Vec<u8> = (0..64).flat_map(|_| 0..=255u8).collect();
    std::io::stdout().write_all(&data).unwrap();
    eprintln!("emit: stderr line");
}
