//! Scratch files in the measurement directory (`--dir`): written with data no file system can
//! store sparsely, and removed when their measurement is over, whatever happened.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A file of `len` bytes of pseudo-random data, synced to the device.
pub fn write_file(path: &Path, len: usize) -> io::Result<File> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let mut rng = fastrand::Rng::with_seed(len as u64);
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        rng.fill(&mut chunk);
        let n = left.min(chunk.len());
        f.write_all(&chunk[..n])?;
        left -= n;
    }
    f.sync_all()?;
    Ok(f)
}

/// Removes a file when dropped.
pub struct RemoveOnDrop(pub PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
