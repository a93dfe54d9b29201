//! The page cache of the files: the sizes of the file-cache curve and what the curve says,
//! and whether this file system lets a file's pages be dropped from the cache.

use std::fs::File;
use std::path::Path;

use crate::model::findings::FileCacheFinding;
use crate::sys::fs::drop_cached;
use crate::sys::memory::{page_size, Mapping};

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

/// Why nothing can be read from a device here.
pub fn not_droppable(fs: &str, dir: &Path) -> String {
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
