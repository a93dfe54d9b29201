//! The event tables: every table parses and is consistent, and encodings match values checked by
//! hand against the vendors' manuals and event lists.

use std::collections::HashSet;

use arum_events::cpu::{parse_spec, CpuIdent};
use arum_events::resolve::{EventKind, HwEvent, ResolveError, Resolver};
use arum_events::table::{Table, TableSource};

fn tables() -> Vec<Table> {
    TableSource::default()
        .all()
        .expect("every embedded table parses")
}

fn table_for(spec: &str) -> (CpuIdent, Table) {
    let cpu = parse_spec(spec).unwrap();
    let table = TableSource::default()
        .for_cpu(&cpu)
        .unwrap()
        .unwrap_or_else(|| panic!("no table for {spec}"));
    (cpu, table)
}

/// Resolves `name` for the CPU `spec` and returns the hardware encoding.
fn hw(spec: &str, name: &str) -> HwEvent {
    let (cpu, table) = table_for(spec);
    let r = Resolver {
        cpu: &cpu,
        table: Some(&table),
    }
    .resolve(name)
    .unwrap_or_else(|e| panic!("{spec} {name}: {e}"));
    match r.kind {
        EventKind::Hardware(h) => h,
        EventKind::Software { .. } => panic!("{name} resolved to a software event"),
    }
}

fn sel(spec: &str, name: &str) -> (u32, u32, u32, bool) {
    let f = hw(spec, name).fields.expect("AMD/Intel fields");
    (f.event_select, f.umask, f.cmask, f.inv)
}

#[test]
fn every_table_has_unique_names_and_sane_masks() {
    let all = tables();
    assert!(
        all.len() >= 12,
        "K8, 10h, Core 2, NetBurst, SKX, ICX, SPR, Zen 1-5"
    );
    for t in &all {
        let mut names = HashSet::new();
        for e in &t.events {
            assert!(
                names.insert(e.name.to_ascii_uppercase()),
                "{}: {} twice",
                t.table.name,
                e.name
            );
            let mut masks = HashSet::new();
            for m in &e.masks {
                assert!(
                    masks.insert(&m.name),
                    "{}: {}:{} twice",
                    t.table.name,
                    e.name,
                    m.name
                );
                assert!(
                    m.value.is_some() || m.all || m.bit.is_some(),
                    "{}: {}:{} has no value",
                    t.table.name,
                    e.name,
                    m.name
                );
                assert!(!m.desc.is_empty());
            }
            for d in &e.default {
                assert!(
                    e.mask(d).is_some(),
                    "{}: {} default {d} is not a mask",
                    t.table.name,
                    e.name
                );
            }
            assert!(
                !e.desc.is_empty(),
                "{}: {} has no description",
                t.table.name,
                e.name
            );
        }
        assert!(
            t.events.len() >= 40,
            "{}: only {} events",
            t.table.name,
            t.events.len()
        );
    }
}

#[test]
fn every_alias_resolves_on_every_model_of_its_table() {
    for t in tables() {
        for m in &t.table.matches {
            for [lo, hi] in &m.models {
                for model in [*lo, *hi] {
                    let cpu = CpuIdent {
                        vendor: t.table.vendor.clone(),
                        family: m.family,
                        model,
                        stepping: 0,
                        model_name: String::new(),
                    };
                    let resolver = Resolver {
                        cpu: &cpu,
                        table: Some(&t),
                    };
                    for alias in t.aliases.keys() {
                        let r = resolver.resolve(alias).unwrap_or_else(|e| {
                            panic!("{} model {model:#x}: {alias}: {e}", t.table.name)
                        });
                        assert_eq!(r.alias.as_deref(), Some(alias.as_str()));
                    }
                }
            }
        }
    }
}

#[test]
fn original_aliases_exist_where_the_hardware_has_them() {
    for (cpu, aliases) in [
        (
            "AuthenticAMD-15-41",
            &[
                "dcache_accesses",
                "dcache_misses",
                "L1_DTLBmiss_L2_DTLBhit",
                "L1_L2_DTLBmiss",
            ][..],
        ),
        (
            "AuthenticAMD-16-2",
            &[
                "dcache_accesses",
                "dcache_misses",
                "L1_DTLBmiss_L2_DTLBhit",
                "L1_L2_DTLBmiss",
            ],
        ),
        (
            "GenuineIntel-6-17",
            &["dcache_accesses", "dcache_misses", "L1_L2_DTLBmiss"],
        ),
        (
            "GenuineIntel-6-55",
            &[
                "cycles",
                "instructions",
                "branches",
                "branch_misses",
                "llc_references",
                "llc_misses",
                "dtlb_load_misses",
                "icache_misses",
            ],
        ),
        (
            "AuthenticAMD-26-2",
            &[
                "cycles",
                "instructions",
                "dcache_accesses",
                "dcache_misses",
                "L1_DTLBmiss_L2_DTLBhit",
            ],
        ),
    ] {
        let (_, t) = table_for(cpu);
        for a in aliases {
            assert!(t.aliases.contains_key(*a), "{cpu} lacks alias {a}");
        }
    }
}

// --- Test vectors, checked by hand against the vendors' documents -------------------------

#[test]
fn k8_vectors_from_the_bkdg() {
    // BKDG 26094: Data Cache Accesses 40h, Data Cache Misses 41h, L1 DTLB Miss and L2 DTLB Hit
    // 45h, L1 and L2 DTLB Miss 46h (no unit mask on K8).
    let k8 = "AuthenticAMD-15-41";
    assert_eq!(sel(k8, "dcache_accesses"), (0x40, 0, 0, false));
    assert_eq!(sel(k8, "dcache_misses"), (0x41, 0, 0, false));
    assert_eq!(sel(k8, "L1_DTLBmiss_L2_DTLBhit"), (0x45, 0, 0, false));
    assert_eq!(sel(k8, "L1_L2_DTLBmiss"), (0x46, 0, 0, false));
    assert_eq!(hw(k8, "DATA_CACHE_MISSES").config, 0x41);
    assert_eq!(hw(k8, "cycles").config, 0x76);
}

#[test]
fn fam10h_dtlb_masks_differ_between_barcelona_and_later_models() {
    // BKDG 31116: 45h/46h need unit masks; 1G-page bit (04h) only after Barcelona.
    assert_eq!(sel("AuthenticAMD-16-2", "L1_DTLBmiss_L2_DTLBhit").1, 0x03);
    assert_eq!(sel("AuthenticAMD-16-4", "L1_DTLBmiss_L2_DTLBhit").1, 0x07);
    assert!(matches!(
        Resolver {
            cpu: &parse_spec("AuthenticAMD-16-2").unwrap(),
            table: Some(&table_for("AuthenticAMD-16-2").1)
        }
        .resolve("L1_DTLB_MISS_AND_L2_DTLB_HIT:L2_1G_TLB_HIT"),
        Err(ResolveError::UnknownMask { .. })
    ));
    // 12-bit event select: event 1F0h unit mask 01h is PERF_TYPE_RAW 0x1000001f0.
    assert_eq!(
        hw(
            "AuthenticAMD-16-4",
            "MEMORY_CONTROLLER_REQUESTS:WRITE_REQUESTS"
        )
        .config
            & 0xF_0000_00FF,
        0x1_0000_00F0
    );
    assert_eq!(
        hw("AuthenticAMD-16-4", "r1000001f0")
            .fields
            .unwrap()
            .event_select,
        0x1F0
    );
}

#[test]
fn core2_vectors_from_the_sdm() {
    // SDM 3B: L1D_ALL_REF 43H/01H, L1D_REPL 45H/0FH; MEM_LOAD_RETIRED (CBH) only on PMC0,
    // FP_ASSIST (11H) only on PMC1; INST_RETIRED.ANY also on fixed counter 0.
    let c2 = "GenuineIntel-6-17";
    assert_eq!(sel(c2, "dcache_accesses"), (0x43, 0x01, 0, false));
    assert_eq!(sel(c2, "dcache_misses"), (0x45, 0x0F, 0, false));
    assert_eq!(hw(c2, "L1D_REPL").config, 0xF45);
    assert_eq!(hw(c2, "MEM_LOAD_RETIRED:L1D_MISS").counters, Some(vec![0]));
    assert_eq!(hw(c2, "FP_ASSIST").counters, Some(vec![1]));
    assert_eq!(hw(c2, "instructions").counters, Some(vec![0, 1, 32]));
    assert_eq!(hw(c2, "UNHALTED_REFERENCE_CYCLES").counters, Some(vec![34]));
}

#[test]
fn netburst_vectors_from_the_sdm_and_linux() {
    // SDM 3B NetBurst tables: global_power_events ESCR select 13H, CCCR select 06H, FSB_ESCR0/1;
    // instr_retired ESCR select 02H, CCCR select 04H, CRU_ESCR0/1 (3B8H/3B9H), counters 12,13,16
    // and 14,15,17. Linux P4 indexes: GLOBAL_POWER_EVENTS 24, INSTR_RETIRED 38.
    let p4 = "GenuineIntel-15-3";
    let g = hw(p4, "global_power_events:RUNNING").netburst.unwrap();
    assert_eq!(g.escr >> 25, 0x13);
    assert_eq!((g.escr >> 9) & 0xFFFF, 1);
    assert_eq!((g.cccr >> 13) & 7, 6);
    assert_eq!(g.escr_msrs, [0x3A2, 0x3A3]);
    assert_eq!(g.p4_index, 24);
    assert_eq!(hw(p4, "cycles").config, 0x3000_0200_0003_D000);
    let i = hw(p4, "instr_retired:NBOGUSNTAG").netburst.unwrap();
    assert_eq!(i.escr >> 25, 0x02);
    assert_eq!((i.cccr >> 13) & 7, 4);
    assert_eq!(i.escr_msrs, [0x3B8, 0x3B9]);
    assert_eq!(i.escr_counters, [vec![12, 13, 16], vec![14, 15, 17]]);
    assert_eq!(i.p4_index, 38);
    // The "instructions" alias counts non-bogus and bogus untagged (mask bits 0 and 2), as Linux does.
    assert_eq!(
        (hw(p4, "instructions").netburst.unwrap().escr >> 9) & 0xFFFF,
        0b101
    );
}

#[test]
fn skylake_sp_vectors_from_intels_event_list() {
    // Intel perfmon SKX: L1D.REPLACEMENT 51H/01H, MEM_INST_RETIRED.ALL_LOADS D0H/81H,
    // LONGEST_LAT_CACHE.MISS 2EH/41H, DTLB_LOAD_MISSES.STLB_HIT 08H/20H,
    // CYCLE_ACTIVITY.STALLS_TOTAL A3H/04H CMask 4, BR_MISP_RETIRED.ALL_BRANCHES C5H/00H.
    let skx = "GenuineIntel-6-55-7";
    assert_eq!(sel(skx, "L1D.REPLACEMENT"), (0x51, 0x01, 0, false));
    assert_eq!(
        sel(skx, "MEM_INST_RETIRED:ALL_LOADS"),
        (0xD0, 0x81, 0, false)
    );
    assert_eq!(sel(skx, "llc_misses"), (0x2E, 0x41, 0, false));
    assert_eq!(sel(skx, "L1_DTLBmiss_L2_DTLBhit"), (0x08, 0x20, 0, false));
    assert_eq!(
        sel(skx, "CYCLE_ACTIVITY.STALLS_TOTAL"),
        (0xA3, 0x04, 4, false)
    );
    assert_eq!(hw(skx, "CYCLE_ACTIVITY.STALLS_TOTAL").config, 0x0400_04A3);
    assert_eq!(sel(skx, "branch_misses"), (0xC5, 0x00, 0, false));
    // MEM_INST_RETIRED.* is limited to the first four counters (Linux's SKL constraints).
    assert_eq!(
        hw(skx, "MEM_INST_RETIRED:ALL_LOADS").counters,
        Some(vec![0, 1, 2, 3])
    );
}

#[test]
fn zen_vectors_from_amds_event_lists() {
    // AMD PPRs: Retired Instructions C0h, Cycles not in Halt 76h, LsDispatch 29h,
    // L1 DTLB miss 45h (L2 hits in the low nibble, misses in the high nibble),
    // IC tag miss 18Eh/18h (a 12-bit event select: bits 35:32 hold the 1).
    for zen in [
        "AuthenticAMD-25-1",
        "AuthenticAMD-25-11",
        "AuthenticAMD-26-2",
    ] {
        assert_eq!(sel(zen, "instructions").0, 0xC0);
        assert_eq!(sel(zen, "cycles").0, 0x76);
        assert_eq!(sel(zen, "dcache_accesses"), (0x29, 0x07, 0, false));
        assert_eq!(sel(zen, "L1_DTLBmiss_L2_DTLBhit"), (0x45, 0x0F, 0, false));
        assert_eq!(sel(zen, "L1_L2_DTLBmiss"), (0x45, 0xF0, 0, false));
        assert_eq!(hw(zen, "icache_misses").config, 0x1_0000_188E);
    }
    // Retired SSE/AVX FLOPs can exceed 15 per cycle and need an even/odd counter pair.
    assert!(hw("AuthenticAMD-25-11", "RETIRED_SSE_AVX_FLOPS:ANY").pair);
}

#[test]
fn names_raw_codes_perf_terms_and_modifiers() {
    let (cpu, table) = table_for("GenuineIntel-6-55");
    let r = Resolver {
        cpu: &cpu,
        table: Some(&table),
    };
    let ev = r.resolve("cpu/event=0x41,umask=0x0,cmask=1,inv/").unwrap();
    assert!(matches!(ev.kind, EventKind::Hardware(ref h) if h.config == 0x0180_0041));
    let ev = r.resolve("r003c:u").unwrap();
    assert!(ev.exclude_kernel && !ev.exclude_user);
    assert!(matches!(ev.kind, EventKind::Hardware(ref h) if h.config == 0x3c));
    let ev = r.resolve("task-clock:k").unwrap();
    assert_eq!(ev.kind, EventKind::Software { config: 1 });
    assert!(ev.exclude_user);
    assert_eq!(
        r.resolve("inst_retired.any_p").unwrap().name,
        "INST_RETIRED:ANY_P"
    );
    match r.resolve("llc_mises") {
        Err(ResolveError::Unknown { suggestion, .. }) => {
            assert_eq!(suggestion.as_deref(), Some("llc_misses"))
        }
        other => panic!("expected a suggestion, got {other:?}"),
    }
    assert!(matches!(
        r.resolve("BR_INST_RETIRED:NOPE"),
        Err(ResolveError::UnknownMask { .. })
    ));
    assert!(matches!(
        r.resolve("cpu/event=0x1ff/"),
        Err(ResolveError::Bad { .. })
    ));
}

#[test]
fn unsupported_cpu_knows_software_and_raw_events_only() {
    let cpu = parse_spec("GenuineIntel-6-3A").unwrap();
    assert!(TableSource::default().for_cpu(&cpu).unwrap().is_none());
    let r = Resolver {
        cpu: &cpu,
        table: None,
    };
    assert!(r.resolve("page-faults").is_ok());
    assert!(r.resolve("r00c0").is_ok());
    assert!(matches!(
        r.resolve("cycles"),
        Err(ResolveError::NoTable { .. })
    ));
}

#[test]
fn event_lists_split_on_space_and_comma_but_not_inside_terms() {
    use arum_events::resolve::split_event_list;
    assert_eq!(
        split_event_list("a b,c  cpu/event=0x41,umask=0x1/,d"),
        ["a", "b", "c", "cpu/event=0x41,umask=0x1/", "d"]
    );
}
