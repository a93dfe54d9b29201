//! The PMUs the running kernel offers, from /sys/bus/event_source/devices: each PMU's
//! perf_event_attr type, the CPUs it counts on, its named events (`events/NAME`, e.g.
//! `msr/tsc`, `cstate_core/c6-residency`, `cpu/topdown-retiring`) and the bit fields its terms
//! go to (`format/NAME`, e.g. `event` → `config:0-7`). Read only when a name needs it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const DEVICES: &str = "/sys/bus/event_source/devices";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pmu {
    pub name: String,
    /// perf_event_attr.type.
    pub perf_type: u32,
    /// `cpus` or `cpumask`, if the PMU has one (core PMUs of hybrid parts, uncore PMUs).
    pub cpus: Option<Vec<u32>>,
    dir: PathBuf,
}

/// One field of perf_event_attr a term is written to: `config`, `config1` or `config2`, with
/// the bit ranges (low, high) its value fills, lowest bits first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    pub field: u32,
    pub ranges: Vec<(u32, u32)>,
}

/// The PMUs of a sysfs tree (the real one, or a test's copy).
#[derive(Debug, Clone, Default)]
pub struct Pmus {
    pub root: PathBuf,
    pub pmus: Vec<Pmu>,
}

impl Pmus {
    /// The running kernel's PMUs; empty when the directory cannot be read.
    pub fn system() -> Pmus {
        Pmus::read(Path::new(DEVICES))
    }

    pub fn read(root: &Path) -> Pmus {
        let mut pmus: Vec<Pmu> = std::fs::read_dir(root)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let dir = e.path();
                let name = e.file_name().to_string_lossy().into_owned();
                let perf_type = read_trim(&dir.join("type"))?.parse().ok()?;
                let cpus = read_trim(&dir.join("cpus"))
                    .or_else(|| read_trim(&dir.join("cpumask")))
                    .and_then(|s| parse_cpulist(&s));
                Some(Pmu {
                    name,
                    perf_type,
                    cpus,
                    dir,
                })
            })
            .collect();
        pmus.sort_by(|a, b| a.name.cmp(&b.name));
        Pmus {
            root: root.to_path_buf(),
            pmus,
        }
    }

    pub fn get(&self, name: &str) -> Option<&Pmu> {
        self.pmus.iter().find(|p| p.name == name)
    }
}

impl Pmu {
    /// The PMU's named events and their term strings.
    pub fn events(&self) -> BTreeMap<String, String> {
        std::fs::read_dir(self.dir.join("events"))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                // `.scale`, `.unit`, `.snapshot`, `.per-pkg` describe an event, they are not one.
                if n.contains('.') {
                    return None;
                }
                Some((n, read_trim(&e.path())?))
            })
            .collect()
    }

    pub fn event(&self, name: &str) -> Option<String> {
        if name.contains('/') || name.contains('.') || name.is_empty() {
            return None;
        }
        read_trim(&self.dir.join("events").join(name))
    }

    /// The scale and unit sysfs gives an event (`.scale`, `.unit`), e.g. 2.3283064365386962890625e-10 Joules.
    pub fn event_scale(&self, name: &str) -> (Option<f64>, Option<String>) {
        let ev = self.dir.join("events");
        (
            read_trim(&ev.join(format!("{name}.scale"))).and_then(|s| s.parse().ok()),
            read_trim(&ev.join(format!("{name}.unit"))),
        )
    }

    pub fn format(&self, term: &str) -> Option<Format> {
        if term.contains('/') || term.contains('.') || term.is_empty() {
            return None;
        }
        parse_format(&read_trim(&self.dir.join("format").join(term))?)
    }

    pub fn formats(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.dir.join("format"))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// Encodes `terms` (`event=0x3c,umask=1,edge` — a bare term means 1) into (config, config1,
    /// config2) with the PMU's formats.
    pub fn encode(&self, terms: &str) -> Result<[u64; 3], String> {
        let mut out = [0u64; 3];
        for term in terms.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (key, value) = term.split_once('=').unwrap_or((term, "1"));
            let v = parse_num(value).ok_or_else(|| format!("{key}={value} is not a number"))?;
            let f = self.format(key).ok_or_else(|| {
                format!(
                    "PMU {} has no term '{key}' (known: {})",
                    self.name,
                    self.formats().join(", ")
                )
            })?;
            let mut rest = v;
            for (lo, hi) in &f.ranges {
                let width = hi - lo + 1;
                let mask = if width >= 64 {
                    u64::MAX
                } else {
                    (1u64 << width) - 1
                };
                out[f.field as usize] |= (rest & mask) << lo;
                rest = if width >= 64 { 0 } else { rest >> width };
            }
            if rest != 0 {
                return Err(format!(
                    "{key}={value} does not fit PMU {}'s field",
                    self.name
                ));
            }
        }
        Ok(out)
    }
}

/// `config:0-7,32-35`, `config1:0-63`, `config:21`.
pub fn parse_format(s: &str) -> Option<Format> {
    let (field, bits) = s.split_once(':')?;
    let field = match field {
        "config" => 0,
        "config1" => 1,
        "config2" => 2,
        _ => return None,
    };
    let ranges = bits
        .split(',')
        .map(|r| {
            let (lo, hi) = r.split_once('-').unwrap_or((r, r));
            Some((lo.trim().parse().ok()?, hi.trim().parse().ok()?))
        })
        .collect::<Option<Vec<(u32, u32)>>>()?;
    Some(Format { field, ranges })
}

pub fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Linux's cpulist syntax: `0-3,8,10-11`.
pub fn parse_cpulist(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi): (u32, u32) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
        if hi < lo || hi - lo > 65536 {
            return None;
        }
        out.extend(lo..=hi);
    }
    Some(out)
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Where tracepoints are listed: tracefs, or its old place under debugfs.
pub fn tracing_events_dir() -> Option<PathBuf> {
    [
        "/sys/kernel/tracing/events",
        "/sys/kernel/debug/tracing/events",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_cpulists() {
        assert_eq!(
            parse_format("config:0-7,32-35"),
            Some(Format {
                field: 0,
                ranges: vec![(0, 7), (32, 35)]
            })
        );
        assert_eq!(parse_format("config1:0-63").unwrap().field, 1);
        assert_eq!(parse_format("config:21").unwrap().ranges, vec![(21, 21)]);
        assert_eq!(
            parse_cpulist("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpulist(""), Some(vec![]));
        assert_eq!(parse_cpulist("3-1"), None);
    }

    #[test]
    fn a_fake_sysfs_tree_gives_types_cpus_events_and_encodings() {
        let dir = std::env::temp_dir().join(format!("arum-sysfs-{}", std::process::id()));
        let core = dir.join("cpu_core");
        std::fs::create_dir_all(core.join("events")).unwrap();
        std::fs::create_dir_all(core.join("format")).unwrap();
        std::fs::write(core.join("type"), "4\n").unwrap();
        std::fs::write(core.join("cpus"), "0-7\n").unwrap();
        std::fs::write(
            core.join("events/topdown-retiring"),
            "event=0x00,umask=0x80\n",
        )
        .unwrap();
        std::fs::write(core.join("format/event"), "config:0-7\n").unwrap();
        std::fs::write(core.join("format/umask"), "config:8-15,40-47\n").unwrap();
        std::fs::write(core.join("format/edge"), "config:18\n").unwrap();
        let pmus = Pmus::read(&dir);
        let p = pmus.get("cpu_core").unwrap();
        assert_eq!(p.perf_type, 4);
        assert_eq!(p.cpus.as_deref(), Some(&[0, 1, 2, 3, 4, 5, 6, 7][..]));
        let terms = p.event("topdown-retiring").unwrap();
        assert_eq!(p.encode(&terms).unwrap()[0], 0x8000);
        // A unit mask wider than 8 bits spills into UMASK2 (bits 40-47).
        assert_eq!(
            p.encode("event=0xc2,umask=0x8010,edge").unwrap()[0],
            0x8000_0004_10C2
        );
        assert!(p.encode("cmask=1").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
