//! What the groups found beyond single figures: the cache levels the memory-latency curve
//! shows beside those the processor reports, the file cache's reach, and the facts of where the
//! file and network measurements ran.

use serde::{Deserialize, Serialize};

/// Figures derived from several measurements, and facts about where they were taken.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Findings {
    pub caches: Option<CacheFindings>,
    pub file_cache: Option<FileCacheFinding>,
    pub network: Option<NetworkFacts>,
    pub files: Option<FileFacts>,
}

/// A cache level as the processor reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheLevel {
    pub level: u8,
    /// `data`, `instruction` or `unified`.
    pub kind: String,
    pub size_bytes: u64,
}

impl CacheLevel {
    pub fn holds_data(&self) -> bool {
        self.kind != "instruction"
    }
}

/// The caches of CPU 0 as sysfs and CPUID describe them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reported {
    pub sysfs: Vec<CacheLevel>,
    pub cpuid: Vec<CacheLevel>,
}

impl Reported {
    /// Data and unified levels, from sysfs when it has them, else CPUID, by level.
    pub fn data_levels(&self) -> Vec<CacheLevel> {
        let src = if self.sysfs.is_empty() {
            &self.cpuid
        } else {
            &self.sysfs
        };
        let mut v: Vec<_> = src.iter().filter(|c| c.holds_data()).cloned().collect();
        v.sort_by_key(|c| c.level);
        v
    }

    pub fn last_level_bytes(&self) -> Option<u64> {
        self.data_levels().last().map(|c| c.size_bytes)
    }
}

/// A step of the latency curve: the largest buffer that still fit, and the plateaus around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectedLevel {
    pub size_bytes: u64,
    /// The plateau's latency (geometric mean) up to this size, and the next plateau's.
    pub latency_ns: f64,
    pub next_latency_ns: f64,
}

/// Detected against reported, level by level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelComparison {
    pub level: u8,
    pub reported_bytes: u64,
    pub detected_bytes: Option<u64>,
    /// Detected over reported.
    pub ratio: Option<f64>,
}

/// The cache levels: as reported, as the latency curve shows them, and the two compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheFindings {
    pub reported: Reported,
    pub detected: Vec<DetectedLevel>,
    pub comparison: Vec<LevelComparison>,
    /// Whether the latency buffer asked for transparent huge pages, and the kernel's mode.
    pub huge_pages: bool,
    pub thp_mode: String,
    /// Whether CPUID says this is a virtual machine (its caches are shared with the host).
    pub virtual_machine: bool,
    /// Why a level's step is missing or far from the reported size.
    pub notes: Vec<String>,
}

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

/// What the network group could and could not set up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetworkFacts {
    /// The veth pair's addresses, or why there was none.
    pub veth: Option<String>,
    pub veth_unavailable: Option<String>,
    /// Whether the kernel has netem (tried on our own device), and why not.
    pub netem: Option<String>,
    /// Where the client and the server threads ran.
    pub cpus: Option<String>,
}
