//! Files: the size of the file cache (read throughput against file size), sequential and random
//! reads with and without the cache (and with O_DIRECT), and contention between concurrent
//! readers. Everything happens in files of ours under --dir, removed afterwards.

mod contention;
mod reads;

use std::fs::File;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::scratch::{write_file, RemoveOnDrop};
use crate::suite::{Context, Entry, Group, Sink};
use crate::sys::fs::{drop_cached, free_bytes, fs_type};
use crate::sys::memory::{page_size, Mapping};

pub const GROUP: Group = Group {
    name: "files",
    title: "File system",
    entries: &[
        reads::CACHE,
        reads::SEQ_CACHED,
        reads::SEQ_UNCACHED,
        reads::SEQ_DIRECT,
        reads::RANDOM_CACHED,
        reads::RANDOM_UNCACHED,
        reads::RANDOM_DIRECT,
        contention::CONTENTION,
    ],
    run,
};

/// Where the file measurements ran and what that file system allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileFacts {
    pub dir: String,
    pub fs_type: String,
    /// Whether posix_fadvise(DONTNEED) actually empties the cache of a file here.
    pub cache_droppable: bool,
    /// Why O_DIRECT cannot be used here, if it cannot.
    pub direct_unsupported: Option<String>,
}

/// What the read-throughput curve says about the file cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileCacheFinding {
    /// (file size, re-read throughput in bytes/s).
    pub curve: Vec<(u64, f64)>,
    /// Throughput of the same reads from the device (cache dropped), for comparison.
    pub uncached_bytes_per_s: Option<f64>,
    /// The largest size whose re-read still ran at least at half the smallest size's speed.
    pub cached_up_to_bytes: Option<u64>,
    /// The largest size tried (`--file-max`).
    pub largest_tried_bytes: u64,
    /// What the kernel could give the cache (MemAvailable) when the curve was measured.
    pub mem_available_bytes: u64,
    pub conclusion: String,
}

/// Sizes of the file-cache curve: powers of two from 4 MiB to `max`.
pub fn cache_sizes(max: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = 4u64 << 20;
    while s <= max {
        v.push(s);
        s *= 2;
    }
    v
}

/// The file cache's reach from a curve: the last size still read distinctly faster than the
/// device (above the geometric mean of the device's speed and the smallest file's; without the
/// device's speed, above a quarter of the smallest file's: small files also profit from the
/// CPU caches, so half would be too strict), and a sentence saying what the curve shows.
pub fn cache_finding(
    curve: &[(u64, f64)],
    uncached: Option<f64>,
    tried: u64,
    avail: u64,
) -> FileCacheFinding {
    let first = curve.first().map(|p| p.1).unwrap_or(0.0);
    let threshold = match uncached {
        Some(u) if u > 0.0 && u < first => (u * first).sqrt(),
        _ => first * 0.25,
    };
    let cached_up_to = curve
        .iter()
        .take_while(|p| p.1 >= threshold)
        .last()
        .map(|p| p.0);
    let bytes = |b: u64| arum_units::size::format(b as f64);
    let conclusion = match (cached_up_to, curve.last()) {
        (Some(c), Some(last)) if c == last.0 => format!(
            "every size up to {} was re-read from the cache; the cache can grow to about \
             the {} the kernel reports available, which a --file-max above it would show",
            bytes(c),
            bytes(avail)
        ),
        (Some(c), Some(_)) => format!(
            "re-reads slowed towards the device's speed after {}: the file cache holds \
             about that much here ({} were available)",
            bytes(c),
            bytes(avail)
        ),
        _ => "no curve was measured".into(),
    };
    FileCacheFinding {
        curve: curve.to_vec(),
        uncached_bytes_per_s: uncached,
        cached_up_to_bytes: cached_up_to,
        largest_tried_bytes: tried,
        mem_available_bytes: avail,
        conclusion,
    }
}

/// Whether dropping `file`'s pages from the cache works on this file system (tmpfs keeps
/// them whatever the advice).
pub fn cache_droppable(file: &File, len: usize) -> bool {
    if drop_cached(file).is_err() {
        return false;
    }
    let Ok(map) = Mapping::file(file, len) else {
        return false;
    };
    let pages = len.div_ceil(page_size());
    map.resident_pages().is_ok_and(|r| r <= pages / 10)
}

fn run(ctx: &mut Context, sink: &mut Sink) {
    let wanted: Vec<&Entry> = GROUP.entries.iter().filter(|e| ctx.wants(e)).collect();
    if wanted.is_empty() {
        return;
    }
    let dir = ctx.settings.dir.clone();
    let fs = fs_type(&dir);
    let (contention_files, contention_bytes) = contention::plan(ctx.quick(), ctx.cpus.len());
    let reserve = contention_files as u64 * contention_bytes;
    let free = free_bytes(&dir);
    let mut max = ctx.settings.file_max;
    if free < (max + reserve) * 2 {
        let fit = (free / 2).saturating_sub(reserve);
        max = cache_sizes(fit).last().copied().unwrap_or(0);
        sink.notes.push(format!(
            "files: only {} free under {}: file sizes limited to {}",
            arum_units::size::format(free as f64),
            dir.display(),
            arum_units::size::format(max as f64)
        ));
    }
    if max < 4 << 20 {
        ctx.skip(
            sink,
            &wanted,
            &format!("not enough free space under {}", dir.display()),
        );
        return;
    }
    let path = dir.join("arum-calibrate-reads");
    let _cleanup = RemoveOnDrop(path.clone());
    let file = match write_file(&path, max as usize) {
        Ok(f) => f,
        Err(e) => {
            ctx.skip(
                sink,
                &wanted,
                &format!(
                    "cannot write {}: {e}; choose a writable --dir",
                    path.display()
                ),
            );
            return;
        }
    };
    let droppable = cache_droppable(&file, max as usize);
    let mut facts = FileFacts {
        dir: dir.display().to_string(),
        fs_type: fs.clone(),
        cache_droppable: droppable,
        direct_unsupported: None,
    };
    reads::run(ctx, sink, &file, &path, max, &mut facts);
    contention::run(ctx, sink, &dir, droppable, &fs);
    sink.findings.files = Some(facts);
}

fn not_droppable(fs: &str, dir: &Path) -> String {
    format!(
        "the file system of {} ({fs}) keeps file data in memory whatever posix_fadvise says: \
         nothing is read from a device; choose a disk-backed --dir",
        dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_finding_names_the_knee_of_a_curve_and_says_when_there_is_none() {
        let mib = |m: u64| m << 20;
        let knee = [
            (mib(4), 8e9),
            (mib(8), 7.5e9),
            (mib(16), 7e9),
            (mib(32), 1e9),
        ];
        let f = cache_finding(&knee, Some(5e8), mib(32), mib(24));
        assert_eq!(f.cached_up_to_bytes, Some(mib(16)));
        assert!(f.conclusion.contains("after 16 MiB"), "{}", f.conclusion);
        let flat = [(mib(4), 8e9), (mib(8), 7.5e9)];
        let f = cache_finding(&flat, None, mib(8), mib(24000));
        assert_eq!(f.cached_up_to_bytes, Some(mib(8)));
        assert!(
            f.conclusion.contains("every size up to 8 MiB"),
            "{}",
            f.conclusion
        );
        assert_eq!(
            cache_sizes(mib(64)),
            vec![mib(4), mib(8), mib(16), mib(32), mib(64)]
        );
    }
}
