//! The kernel's generic events: PERF_TYPE_HARDWARE and PERF_TYPE_HW_CACHE, which every CPU the
//! kernel knows maps to its own events (`perf stat -e cycles`). Names and spellings as perf's
//! (tools/perf/pmu-events/arch/common/common/legacy-hardware.json, make_legacy_cache.py), plus
//! ARUM's own names of the same events.

/// perf_event_attr.type values (linux/perf_event.h).
pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_TRACEPOINT: u32 = 2;
pub const PERF_TYPE_HW_CACHE: u32 = 3;
pub const PERF_TYPE_RAW: u32 = 4;
/// Generic events aimed at one PMU of a hybrid part carry its type here (Linux 6.0+).
pub const PERF_PMU_TYPE_SHIFT: u32 = 32;

/// PERF_COUNT_HW_*: (config, canonical name, other names).
pub const HARDWARE: &[(u64, &str, &[&str])] = &[
    (0, "cycles", &["cpu-cycles"]),
    (1, "instructions", &[]),
    (2, "cache-references", &["llc_references"]),
    (3, "cache-misses", &["llc_misses"]),
    (4, "branches", &["branch-instructions"]),
    (5, "branch-misses", &["branch_misses"]),
    (6, "bus-cycles", &[]),
    (7, "stalled-cycles-frontend", &["idle-cycles-frontend"]),
    (8, "stalled-cycles-backend", &["idle-cycles-backend"]),
    (9, "ref-cycles", &[]),
];

/// What the generic hardware events mean, in ARUM's words.
pub fn hardware_desc(config: u64) -> &'static str {
    match config {
        0 => "Core cycles (the kernel's generic event; frequency scaling changes its rate)",
        1 => "Instructions retired (the kernel's generic event)",
        2 => "Cache accesses, usually of the last-level cache (the kernel's generic event)",
        3 => "Cache misses, usually of the last-level cache (the kernel's generic event)",
        4 => "Branch instructions retired (the kernel's generic event)",
        5 => "Mispredicted branch instructions (the kernel's generic event)",
        6 => "Bus cycles (the kernel's generic event)",
        7 => "Cycles the front end issued nothing (the kernel's generic event)",
        8 => "Cycles the back end retired nothing (the kernel's generic event)",
        9 => "Reference cycles at a constant rate (the kernel's generic event)",
        _ => "generic hardware event",
    }
}

/// PERF_COUNT_HW_CACHE_*: (id, names, ops it has, what it is). The first name is canonical.
const CACHES: &[(u64, &[&str], &[u64], &str)] = &[
    (
        0,
        &["L1-dcache", "l1-d", "l1d", "L1-data"],
        &[0, 1, 2],
        "L1 data cache",
    ),
    (
        1,
        &["L1-icache", "l1-i", "l1i", "L1-instruction"],
        &[0, 2],
        "L1 instruction cache",
    ),
    (2, &["LLC", "L2"], &[0, 1, 2], "last-level cache"),
    (3, &["dTLB", "d-tlb", "Data-TLB"], &[0, 1, 2], "data TLB"),
    (
        4,
        &["iTLB", "i-tlb", "Instruction-TLB"],
        &[0],
        "instruction TLB",
    ),
    (
        5,
        &["branch", "branches", "bpu", "btb", "bpc"],
        &[0],
        "branch prediction unit",
    ),
    (6, &["node"], &[0, 1, 2], "local memory (NUMA node)"),
];
/// Ops: (id, names, word). perf's canonical names use "loads", "stores", "prefetches" for
/// accesses and "load", "store", "prefetch" before "-misses".
const OPS: &[(u64, &[&str], &str)] = &[
    (0, &["load", "loads", "read"], "loads"),
    (1, &["store", "stores", "write"], "stores"),
    (
        2,
        &[
            "prefetch",
            "prefetches",
            "speculative-read",
            "speculative-load",
        ],
        "prefetches",
    ),
];
const RESULTS: &[(u64, &[&str])] = &[
    (0, &["refs", "Reference", "ops", "access"]),
    (1, &["misses", "miss"]),
];

/// A generic event: its type, config and perf's canonical name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generic {
    pub perf_type: u32,
    pub config: u64,
    pub name: String,
    pub desc: String,
}

/// Resolves a generic event name (case-insensitive, `_` for `-` accepted).
pub fn lookup(name: &str) -> Option<Generic> {
    let n = name.replace('_', "-");
    if let Some((config, canonical, _)) = HARDWARE.iter().find(|(_, c, others)| {
        c.eq_ignore_ascii_case(&n)
            || others
                .iter()
                .any(|o| o.eq_ignore_ascii_case(name) || o.eq_ignore_ascii_case(&n))
    }) {
        return Some(Generic {
            perf_type: PERF_TYPE_HARDWARE,
            config: *config,
            name: canonical.to_string(),
            desc: hardware_desc(*config).to_string(),
        });
    }
    cache(&n)
}

/// `s` less `prefix`, compared without regard to ASCII case. The cut is checked: `prefix.len()`
/// bytes into a name the user typed may fall inside a multi-byte character.
fn strip_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let (head, rest) = s.split_at_checked(prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then_some(rest)
}

/// `CACHE`, `CACHE-OP`, `CACHE-OP-RESULT` or `CACHE-RESULT`, in any of perf's spellings.
fn cache(n: &str) -> Option<Generic> {
    // perf keeps `branches` and `branch-misses` for PERF_TYPE_HARDWARE.
    if n.eq_ignore_ascii_case("branches") || n.eq_ignore_ascii_case("branch-misses") {
        return None;
    }
    for (id, names, ops, what) in CACHES {
        for cname in *names {
            let Some(rest) = strip_ci(n, cname) else {
                continue;
            };
            let (op, result) = if rest.is_empty() {
                (0, 0)
            } else {
                let rest = rest.strip_prefix('-')?;
                match split_op(rest) {
                    Some((op, "")) => (op, 0),
                    Some((op, r)) => (op, result_of(r.strip_prefix('-')?)?),
                    None => (0, result_of(rest)?),
                }
            };
            if !ops.contains(&op) {
                return None;
            }
            let config = id | op << 8 | result << 16;
            return Some(Generic {
                perf_type: PERF_TYPE_HW_CACHE,
                config,
                name: cache_name(config),
                desc: format!(
                    "{} {} of the {what} (the kernel's generic cache event)",
                    OPS[op as usize].2,
                    if result == 1 {
                        "that miss"
                    } else {
                        "(accesses)"
                    }
                ),
            });
        }
    }
    None
}

fn split_op(s: &str) -> Option<(u64, &str)> {
    // Longest spelling first: "speculative-read" before "read".
    let mut best: Option<(u64, &str)> = None;
    for (op, names, _) in OPS {
        for name in *names {
            if let Some(rest) = strip_ci(s, name) {
                if rest.is_empty() || rest.starts_with('-') {
                    let better = best.is_none_or(|(_, r)| rest.len() < r.len());
                    if better {
                        best = Some((*op, rest));
                    }
                }
            }
        }
    }
    best
}

fn result_of(s: &str) -> Option<u64> {
    RESULTS
        .iter()
        .find(|(_, names)| names.iter().any(|n| n.eq_ignore_ascii_case(s)))
        .map(|(r, _)| *r)
}

/// perf's canonical name of a PERF_TYPE_HW_CACHE config: `L1-dcache-loads`,
/// `L1-dcache-load-misses`, `dTLB-store-misses`...
pub fn cache_name(config: u64) -> String {
    let (id, op, result) = (config & 0xFF, (config >> 8) & 0xFF, (config >> 16) & 0xFF);
    let cache = CACHES.iter().find(|c| c.0 == id).map_or("?", |c| c.1[0]);
    let op_names = OPS.iter().find(|o| o.0 == op).map_or(&[""][..], |o| o.1);
    if result == 1 {
        format!("{cache}-{}-misses", op_names[0])
    } else {
        format!("{cache}-{}", op_names[1])
    }
}

/// Every canonical generic name, for listings.
pub fn all() -> Vec<Generic> {
    let mut out: Vec<Generic> = HARDWARE
        .iter()
        .map(|(c, n, _)| Generic {
            perf_type: PERF_TYPE_HARDWARE,
            config: *c,
            name: n.to_string(),
            desc: hardware_desc(*c).to_string(),
        })
        .collect();
    for (id, _, ops, _) in CACHES {
        for op in *ops {
            for result in [0, 1] {
                out.extend(cache(&cache_name(id | op << 8 | result << 16)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn cfg(name: &str) -> (u32, u64) {
        let g = lookup(name).unwrap_or_else(|| panic!("{name} unknown"));
        (g.perf_type, g.config)
    }

    #[test]
    fn hardware_names_in_perfs_and_arums_spellings() {
        assert_eq!(cfg("cycles"), (0, 0));
        assert_eq!(cfg("cpu-cycles"), (0, 0));
        assert_eq!(cfg("branch-misses"), (0, 5));
        assert_eq!(cfg("branch_misses"), (0, 5));
        assert_eq!(cfg("llc_misses"), (0, 3));
        assert_eq!(cfg("cache-misses"), (0, 3));
        assert_eq!(cfg("ref-cycles"), (0, 9));
        assert_eq!(cfg("stalled-cycles-backend"), (0, 8));
        assert_eq!(cfg("idle_cycles_frontend"), (0, 7));
        assert!(lookup("cycle").is_none());
    }

    #[test]
    fn cache_names_follow_the_abi_layout() {
        // id | op << 8 | result << 16 (linux/perf_event.h).
        assert_eq!(cfg("L1-dcache-load-misses"), (3, 0x10000));
        assert_eq!(cfg("L1-dcache-loads"), (3, 0));
        assert_eq!(cfg("l1d-stores"), (3, 0x100));
        assert_eq!(cfg("dTLB-load-misses"), (3, 0x10003));
        assert_eq!(cfg("iTLB-load-misses"), (3, 0x10004));
        assert_eq!(cfg("LLC-loads"), (3, 2));
        assert_eq!(cfg("LLC-prefetch-misses"), (3, 0x10202));
        assert_eq!(cfg("L1-icache-load-misses"), (3, 0x10001));
        assert_eq!(cfg("branch-load-misses"), (3, 0x10005));
        assert_eq!(cfg("node-loads"), (3, 6));
        assert_eq!(cfg("L1-dcache-speculative-read-miss"), (3, 0x10200));
        assert_eq!(cfg("dTLB-misses"), (3, 0x10003));
        // iTLB has no stores; "branches" stays a hardware event.
        assert!(lookup("iTLB-stores").is_none());
        assert_eq!(cfg("branches"), (0, 4));
        assert_eq!(cache_name(0x10003), "dTLB-load-misses");
        assert_eq!(cache_name(0x100), "L1-dcache-stores");
    }

    #[test]
    fn every_listed_name_resolves_to_itself() {
        for g in all() {
            let back = lookup(&g.name).unwrap();
            assert_eq!(
                (back.perf_type, back.config),
                (g.perf_type, g.config),
                "{}",
                g.name
            );
            assert_eq!(back.name, g.name);
        }
    }

    /// Every name a lookup can give, in perf's spellings and ARUM's.
    fn known_names() -> Vec<String> {
        let mut names: Vec<String> = all().into_iter().map(|g| g.name).collect();
        for (_, canonical, others) in HARDWARE {
            names.push(canonical.to_string());
            names.extend(others.iter().map(|o| o.to_string()));
        }
        names
    }

    proptest! {
        #[test]
        fn any_string_is_looked_up_without_panicking(name in any::<String>()) {
            let _ = lookup(&name);
        }

        /// Every known name is ASCII: one with a non-ASCII character anywhere (inside a cache
        /// or op word, where a byte-offset cut would split it) names no generic event.
        #[test]
        fn a_known_name_with_a_non_ascii_character_is_no_generic_event(
            which in any::<prop::sample::Index>(),
            at in any::<prop::sample::Index>(),
            ch in any::<char>().prop_filter("non-ASCII", |c| !c.is_ascii()),
        ) {
            let names = known_names();
            let name = which.get(&names);
            let mut chars: Vec<char> = name.chars().collect();
            chars.insert(at.index(chars.len() + 1), ch);
            let spelled: String = chars.into_iter().collect();
            prop_assert_eq!(lookup(&spelled), None, "{}", spelled);
        }

        /// Names are matched without regard to ASCII case.
        #[test]
        fn a_known_name_in_any_ascii_case_is_the_same_event(
            which in any::<prop::sample::Index>(),
            upper in prop::collection::vec(any::<bool>(), 40),
        ) {
            let names = known_names();
            let name = which.get(&names);
            let recased: String = name
                .chars()
                .zip(upper.iter().cycle())
                .map(|(c, up)| if *up { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() })
                .collect();
            let want = lookup(name).map(|g| (g.perf_type, g.config));
            prop_assert!(want.is_some(), "{}", name);
            prop_assert_eq!(lookup(&recased).map(|g| (g.perf_type, g.config)), want, "{}", recased);
        }
    }

    #[test]
    fn non_ascii_names_are_refused_not_cut_inside_a_character() {
        // "L2" and "L1-dcache" end inside 'á' and 'ö' of this name (2 and 9 bytes in).
        assert_eq!(lookup("tásk-clöck"), None);
        assert_eq!(lookup("L1-dcache-lóad-misses"), None);
    }
}
