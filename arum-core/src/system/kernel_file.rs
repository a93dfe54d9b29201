//! Reading the small text files the kernel generates on each read (/proc, /sys, tracefs, cgroup
//! files). `std::fs::read_to_string` first asks the file's size and position, to size its
//! buffer: two more system calls that tell nothing here (the kernel reports a size of zero or a
//! page), and a run reads several such files before the program starts.

use std::io::{ErrorKind, Read};
use std::path::Path;

/// The whole text of the kernel file at `path`, read with plain reads into one buffer.
pub fn read(path: impl AsRef<Path>) -> std::io::Result<String> {
    let mut bytes = Vec::with_capacity(4096);
    // Through `Take`, which asks no size: its read_to_end reads straight into the buffer's spare
    // capacity, without first filling it with zeros (a page of them per read, twice for a file
    // that fits: some 8% of a short run's instructions once), until a read returns nothing, and
    // retries an interrupted read.
    std::fs::File::open(path)?
        .take(u64::MAX)
        .read_to_end(&mut bytes)?;
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_read_to_string_reads() {
        let dir = tempfile::tempdir().unwrap();
        // Empty, one byte, exactly a buffer, and across several buffers; and a /proc file.
        for len in [0usize, 1, 4095, 4096, 4097, 12_288, 100_003] {
            let text: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let f = dir.path().join(format!("f{len}"));
            std::fs::write(&f, &text).unwrap();
            assert_eq!(read(&f).unwrap(), text, "{len} bytes");
        }
        let status = read("/proc/self/status").unwrap();
        assert!(
            status.starts_with("Name:") && status.ends_with('\n'),
            "{status}"
        );
        assert_eq!(
            read(dir.path().join("none")).unwrap_err().kind(),
            ErrorKind::NotFound
        );
        std::fs::write(dir.path().join("bad"), [0xff, 0xfe]).unwrap();
        assert_eq!(
            read(dir.path().join("bad")).unwrap_err().kind(),
            ErrorKind::InvalidData
        );
    }
}
