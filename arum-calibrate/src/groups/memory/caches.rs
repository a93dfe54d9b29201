//! Cache levels: what the processor reports (sysfs, and CPUID leaf 4 on Intel or 0x8000_001D on
//! AMD), and what the latency curve shows.

use crate::model::findings::{CacheFindings, CacheLevel, DetectedLevel, LevelComparison, Reported};

pub fn reported() -> Reported {
    Reported {
        sysfs: from_sysfs(),
        cpuid: from_cpuid(),
    }
}

fn from_sysfs() -> Vec<CacheLevel> {
    let mut v = Vec::new();
    for i in 0..16 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            break;
        };
        let Some(size_bytes) = arum_units::size::parse(size.trim()).ok() else {
            continue;
        };
        v.push(CacheLevel {
            level: level.trim().parse().unwrap_or(0),
            kind: kind.trim().to_lowercase(),
            size_bytes,
        });
    }
    v
}

fn from_cpuid() -> Vec<CacheLevel> {
    use raw_cpuid::{CacheType, CpuId};
    let Some(params) = CpuId::new().get_cache_parameters() else {
        return Vec::new();
    };
    params
        .filter_map(|c| {
            let kind = match c.cache_type() {
                CacheType::Data => "data",
                CacheType::Instruction => "instruction",
                CacheType::Unified => "unified",
                _ => return None,
            };
            Some(CacheLevel {
                level: c.level(),
                kind: kind.into(),
                size_bytes: (c.associativity()
                    * c.physical_line_partitions()
                    * c.coherency_line_size()
                    * c.sets()) as u64,
            })
        })
        .collect()
}

/// Finds the steps of a latency curve (points sorted by size) for `levels` cache levels: the
/// best fit of log(latency) by `levels + 1` plateaus (least squares, by dynamic programming
/// over the split points), so that a gradual rise between two levels is cut where it is
/// steepest and a noisy plateau is not mistaken for a step. A level's size is the last size of
/// its plateau; a split whose next plateau is less than 1.3x higher is noise and dropped.
pub fn detect(points: &[(u64, f64)], levels: usize) -> Vec<DetectedLevel> {
    let n = points.len();
    let segments = (levels + 1).min(n);
    if segments < 2 {
        return Vec::new();
    }
    let y: Vec<f64> = points.iter().map(|p| p.1.max(1e-12).ln()).collect();
    // Prefix sums make each segment's squared error O(1).
    let (mut s1, mut s2) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for i in 0..n {
        s1[i + 1] = s1[i] + y[i];
        s2[i + 1] = s2[i] + y[i] * y[i];
    }
    let sse = |i: usize, j: usize| {
        let (k, a, b) = ((j - i) as f64, s1[j] - s1[i], s2[j] - s2[i]);
        b - a * a / k
    };
    // cost[s][j]: best error of the first j points in s segments; from[s][j]: where the last began.
    let mut cost = vec![vec![f64::INFINITY; n + 1]; segments + 1];
    let mut from = vec![vec![0usize; n + 1]; segments + 1];
    cost[0][0] = 0.0;
    for s in 1..=segments {
        for j in s..=n {
            for i in (s - 1)..j {
                let c = cost[s - 1][i] + sse(i, j);
                if c < cost[s][j] {
                    cost[s][j] = c;
                    from[s][j] = i;
                }
            }
        }
    }
    let mut starts = Vec::new();
    let mut j = n;
    for s in (1..=segments).rev() {
        let i = from[s][j];
        starts.push(i);
        j = i;
    }
    starts.reverse(); // starts[0] == 0
    let plateau = |a: usize, b: usize| ((s1[b] - s1[a]) / (b - a) as f64).exp();
    let mut out = Vec::new();
    for k in 1..starts.len() {
        let (a, b) = (starts[k - 1], starts[k]);
        let c = starts.get(k + 1).copied().unwrap_or(n);
        let (here, next) = (plateau(a, b), plateau(b, c));
        if next >= here * 1.3 {
            out.push(DetectedLevel {
                size_bytes: points[b - 1].0,
                latency_ns: here,
                next_latency_ns: next,
            });
        }
    }
    out
}

pub fn findings(
    reported: &Reported,
    detected: Vec<DetectedLevel>,
    largest_size: u64,
    huge_pages: bool,
    thp_mode: String,
) -> CacheFindings {
    let comparison = compare(&reported.data_levels(), &detected);
    let virtual_machine = raw_cpuid::CpuId::new()
        .get_feature_info()
        .is_some_and(|f| f.has_hypervisor());
    let notes = explain(&comparison, largest_size, virtual_machine);
    CacheFindings {
        reported: reported.clone(),
        detected,
        comparison,
        huge_pages,
        thp_mode,
        virtual_machine,
        notes,
    }
}

/// Says why a level's step is missing, below the reported size, or more than a factor of 2
/// above it.
pub fn explain(comparison: &[LevelComparison], largest: u64, vm: bool) -> Vec<String> {
    let bytes = |b: u64| arum_units::size::format(b as f64);
    let last = comparison.len().saturating_sub(1);
    comparison
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let lvl = format!("L{} ({} reported)", c.level, bytes(c.reported_bytes));
            match c.ratio {
                None if largest < 2 * c.reported_bytes => Some(format!(
                    "{lvl}: the curve ends at {}, too soon to show it (the full suite goes to 512 MiB)",
                    bytes(largest)
                )),
                None => Some(format!("{lvl}: no step stood clear of the noise")),
                Some(r) if (0.5..1.0).contains(&r) => Some(format!(
                    "{lvl}: the curve steps up after {}, the size before the reported one: the \
                     sweep doubles its sizes, and a working set as large as the cache already \
                     misses in it (the cache also holds other data and page-table entries, and \
                     is not fully associative)",
                    bytes(c.detected_bytes.unwrap_or(0))
                )),
                Some(r) if (1.0..=2.0).contains(&r) => None,
                Some(r) if r < 0.5 && i == last && vm => Some(format!(
                    "{lvl}: the curve steps up after {}, {r:.2} of the reported size: this is a \
                     virtual machine, whose last-level cache is shared with the host and other \
                     guests; the step shows the share this guest kept during the run",
                    bytes(c.detected_bytes.unwrap_or(0))
                )),
                Some(r) if r < 0.5 && i == last => Some(format!(
                    "{lvl}: the curve steps up after {}, {r:.2} of the reported size: the \
                     last-level cache is shared by every CPU, and other processes used it during \
                     the run",
                    bytes(c.detected_bytes.unwrap_or(0))
                )),
                Some(r) if r < 0.5 && vm => Some(format!(
                    "{lvl}: the curve steps up after {}, {r:.2} of the reported size: this is a \
                     virtual machine, and a core's cache is shared by its hyperthreads, on which \
                     the host may run other guests; the step shows the share this guest kept",
                    bytes(c.detected_bytes.unwrap_or(0))
                )),
                Some(r) => Some(format!(
                    "{lvl}: the curve steps at {}, {r:.2} times the reported size; replacement \
                     policy and prefetching blur this level's edge",
                    bytes(c.detected_bytes.unwrap_or(0))
                )),
            }
        })
        .collect()
}

/// Pairs the detected steps with the reported data levels in order of size. A level whose step
/// did not show (a curve that stops below it, or a step lost in noise) has no detected size.
pub fn compare(reported: &[CacheLevel], detected: &[DetectedLevel]) -> Vec<LevelComparison> {
    reported
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let d = detected.get(i).map(|d| d.size_bytes);
            LevelComparison {
                level: r.level,
                reported_bytes: r.size_bytes,
                detected_bytes: d,
                ratio: d.map(|d| d as f64 / r.size_bytes as f64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic curve: 1.5 ns to 32 KiB, 5 ns to 512 KiB, 15 ns to 32 MiB, 90 ns beyond,
    /// each level's edge blurred over the next doubling, with ±4% noise.
    fn curve() -> Vec<(u64, f64)> {
        let mut rng = fastrand::Rng::with_seed(3);
        (10..=29)
            .map(|k| {
                let s = 1u64 << k;
                let lat: f64 = match s {
                    s if s <= 32 << 10 => 1.5,
                    s if s <= 64 << 10 => 3.5,
                    s if s <= 512 << 10 => 5.0,
                    s if s <= 1 << 20 => 10.0,
                    s if s <= 32 << 20 => 15.0,
                    s if s <= 64 << 20 => 60.0,
                    _ => 90.0,
                };
                (s, lat * (1.0 + (rng.f64() - 0.5) * 0.08))
            })
            .collect()
    }

    #[test]
    fn detects_the_three_levels_of_a_synthetic_curve() {
        let d = detect(&curve(), 3);
        let sizes: Vec<u64> = d.iter().map(|l| l.size_bytes).collect();
        assert_eq!(sizes, vec![32 << 10, 512 << 10, 32 << 20]);
    }

    /// A curve measured on a 2-CPU KVM guest (AMD family 0x19, 32 KiB L1d, 512 KiB L2, 32 MiB
    /// L3 shared with the host and other guests) while the other CPU compiled: L1 and L2 show
    /// where reported; the guest could keep only about 2 MiB in L3.
    #[test]
    fn detects_the_levels_of_a_measured_curve() {
        let kib = [
            1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
            2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536, 98304, 131072,
            196608, 262144, 393216, 524288,
        ];
        let ns = [
            1.543, 1.554, 1.543, 1.544, 1.543, 1.543, 1.543, 1.544, 1.55, 1.653, 4.005, 4.022,
            4.024, 4.026, 4.028, 4.037, 5.829, 7.457, 12.945, 14.531, 16.084, 18.348, 176.3, 291.2,
            295.0, 317.7, 363.8, 320.8, 326.7, 390.4, 462.4, 387.9, 399.3, 393.3, 412.2, 464.5,
            487.7, 579.1,
        ];
        let pts: Vec<(u64, f64)> = kib.iter().zip(ns).map(|(&k, v)| (k << 10, v)).collect();
        let sizes: Vec<u64> = detect(&pts, 3).iter().map(|l| l.size_bytes >> 10).collect();
        assert_eq!(sizes, vec![32, 512, 2048]);
    }

    #[test]
    fn noise_alone_is_not_a_level() {
        let flat: Vec<(u64, f64)> = (10..20)
            .map(|k| (1u64 << k, 2.0 + (k % 2) as f64 * 0.3))
            .collect();
        assert!(detect(&flat, 3).is_empty());
    }

    #[test]
    fn comparison_pairs_levels_in_order() {
        let rep = vec![
            CacheLevel {
                level: 1,
                kind: "data".into(),
                size_bytes: 32 << 10,
            },
            CacheLevel {
                level: 2,
                kind: "unified".into(),
                size_bytes: 1 << 20,
            },
        ];
        let det = detect(&curve(), 3);
        let c = compare(&rep, &det[..1]);
        assert_eq!(c[0].ratio, Some(1.0));
        assert_eq!(c[1].detected_bytes, None);
    }

    #[test]
    fn reported_caches_are_plausible_and_both_sources_agree() {
        let r = reported();
        let levels = r.data_levels();
        if levels.is_empty() {
            eprintln!("neither sysfs nor CPUID describes the caches here; sizes not checked");
            return;
        }
        assert!(
            levels[0].size_bytes >= 8 << 10 && levels[0].size_bytes <= 1 << 20,
            "{r:?}"
        );
        assert!(levels.windows(2).all(|w| w[0].level < w[1].level), "{r:?}");
        // Where both describe a level, they give the same size.
        for c in &r.cpuid {
            if let Some(s) = r
                .sysfs
                .iter()
                .find(|s| s.level == c.level && s.kind == c.kind)
            {
                assert_eq!(s.size_bytes, c.size_bytes, "{r:?}");
            }
        }
    }

    #[test]
    fn an_early_private_level_is_explained_by_shared_hyperthreads_only_on_a_vm() {
        let level = |level, reported: u64, detected: u64| LevelComparison {
            level,
            reported_bytes: reported,
            detected_bytes: Some(detected),
            ratio: Some(detected as f64 / reported as f64),
        };
        let levels = [
            level(1, 48 << 10, 32 << 10),
            level(2, 2 << 20, 512 << 10),
            level(3, 256 << 20, 200 << 20),
        ];
        let on_vm = explain(&levels, 1 << 30, true);
        assert_eq!(on_vm.len(), 3, "{on_vm:?}");
        assert!(
            on_vm[1].starts_with("L2 ") && on_vm[1].contains("hyperthreads"),
            "{on_vm:?}"
        );
        let bare = explain(&levels, 1 << 30, false);
        assert_eq!(bare.len(), 3, "{bare:?}");
        assert!(bare[1].contains("blur"), "{bare:?}");
        // A step one doubling below the reported size (--quick's L2 at 512 KiB of 1 MiB) is
        // the sweep's resolution, and said to be; at or above the size, within 2x, nothing.
        for notes in [&on_vm, &bare] {
            for i in [0, 2] {
                assert!(notes[i].contains("doubles its sizes"), "{notes:?}");
            }
        }
        assert!(explain(&[level(2, 1 << 20, 1 << 20)], 1 << 30, true).is_empty());
    }
}
