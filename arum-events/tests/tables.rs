//! The event tables: every table is compiled in and consistent, and encodings match values
//! checked by hand against the vendors' manuals and event lists.

use std::collections::HashSet;

use arum_events::cpu::{parse_spec, CpuIdent};
use arum_events::resolve::{EncodingSource, EventKind, HwEvent, ResolveError, Resolver};
use arum_events::table::{Table, TableSource};

fn tables() -> Vec<Table> {
    TableSource::default()
        .all()
        .expect("every built-in table is there")
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
    let r = Resolver::new(&cpu, Some(table))
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
    assert!(all.len() >= 55, "{} tables", all.len());
    for t in &all {
        let mut names = HashSet::new();
        for e in t.events() {
            assert!(
                names.insert((e.unit(), e.name().to_ascii_uppercase())),
                "{}: {} twice",
                t.name(),
                e.name()
            );
            let mut masks = HashSet::new();
            for m in e.masks() {
                assert!(
                    masks.insert(m.name().to_ascii_uppercase()),
                    "{}: {}:{} twice",
                    t.name(),
                    e.name(),
                    m.name()
                );
                assert!(!m.desc().is_empty());
            }
            for d in e.defaults() {
                assert!(
                    e.mask(d).is_some(),
                    "{}: {} default {d}",
                    t.name(),
                    e.name()
                );
            }
            assert!(
                !e.desc().is_empty(),
                "{}: {} has no description",
                t.name(),
                e.name()
            );
            // Every value says where it came from when two event lists were compared.
            if t.sources().iter().any(|(k, _)| *k == "p") && t.sources().len() > 1 {
                let src = if e.has_masks() && !e.plain() {
                    e.masks().next().unwrap().src()
                } else {
                    e.src()
                };
                assert!(!src.is_empty(), "{}: {} has no src", t.name(), e.name());
            }
        }
        assert!(
            t.event_count() >= 20,
            "{}: only {} events",
            t.name(),
            t.event_count()
        );
        assert!(!t.sources().is_empty(), "{} names no source", t.name());
    }
}

#[test]
fn every_alias_resolves_on_every_model_of_its_table() {
    for t in tables() {
        for m in t.matches() {
            for [lo, hi] in &m.models {
                for model in [*lo, *hi] {
                    let cpu = CpuIdent {
                        vendor: t.vendor().into(),
                        family: m.family,
                        model,
                        stepping: m.steppings.as_ref().map_or(0, |s| s[0][0]),
                        model_name: String::new(),
                    };
                    let resolver = Resolver::new(&cpu, Some(t));
                    for alias in t.alias_names() {
                        let r = resolver.resolve(alias).unwrap_or_else(|e| {
                            panic!("{} model {model:#x}: {alias}: {e}", t.name())
                        });
                        assert_eq!(r.alias.as_deref(), Some(alias), "{}", t.name());
                        assert!(matches!(r.source, EncodingSource::Table { .. }));
                    }
                }
            }
        }
    }
}

#[test]
fn no_two_tables_claim_the_same_cpu() {
    let all = tables();
    for t in &all {
        for m in t.matches() {
            for [lo, hi] in &m.models {
                for model in [*lo, *hi] {
                    let stepping = m.steppings.as_ref().map_or(0, |s| s[0][0]);
                    let cpu = CpuIdent {
                        vendor: t.vendor().into(),
                        family: m.family,
                        model,
                        stepping,
                        model_name: String::new(),
                    };
                    let claim: Vec<&str> = all
                        .iter()
                        .filter(|o| o.matches_cpu(&cpu))
                        .map(|o| o.name())
                        .collect();
                    assert_eq!(claim, [t.name()], "{}", cpu.key());
                }
            }
        }
    }
}

#[test]
fn every_metric_expression_parses() {
    let mut n = 0;
    for t in tables().into_iter().chain(TableSource::default().common()) {
        for m in t.metrics() {
            arum_metrics::Expr::parse(m.expr())
                .unwrap_or_else(|e| panic!("{}: {}: {e}", t.name(), m.name()));
            if let Some(th) = m.threshold() {
                arum_metrics::Expr::parse(th)
                    .unwrap_or_else(|e| panic!("{}: {} threshold: {e}", t.name(), m.name()));
            }
            n += 1;
        }
    }
    assert!(n > 5000, "{n} metrics");
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
            assert!(!t.alias(a).is_empty(), "{cpu} lacks alias {a}");
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
    let (c, t) = table_for("AuthenticAMD-16-2");
    assert!(matches!(
        Resolver::new(&c, Some(t)).resolve("L1_DTLB_MISS_AND_L2_DTLB_HIT:L2_1G_TLB_HIT"),
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
    // INST_RETIRED.PREC_DIST only on counter 1 (the event list's Counter field); cycles also
    // on fixed counter 1.
    assert_eq!(hw(skx, "INST_RETIRED.PREC_DIST").counters, Some(vec![1]));
    assert_eq!(hw(skx, "cycles").counters, Some(vec![0, 1, 2, 3, 33]));
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
    let r = Resolver::new(&cpu, Some(table));
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
        "INST_RETIRED.ANY_P"
    );
    assert_eq!(
        r.resolve("INST_RETIRED:ANY_P").unwrap().name,
        "INST_RETIRED.ANY_P"
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
fn a_cpu_without_a_table_counts_generic_architectural_and_legacy_events() {
    // A future Intel family and a future AMD family: no table, yet the common names resolve
    // to the kernel's generic events, with CPUID's architectural (Intel) or the legacy (AMD)
    // encoding for the register back-end.
    for (spec, cycles_raw) in [("GenuineIntel-19-1", 0x3c), ("AuthenticAMD-31-0", 0x76)] {
        let cpu = parse_spec(spec).unwrap();
        assert!(
            TableSource::default().for_cpu(&cpu).unwrap().is_none(),
            "{spec}"
        );
        let r = Resolver::new(&cpu, None);
        assert!(r.resolve("page-faults").is_ok());
        assert!(r.resolve("r00c0").is_ok());
        let c = r.resolve("cycles").unwrap();
        assert_eq!(c.source, EncodingSource::Generic);
        assert_eq!((c.targets[0].perf_type, c.targets[0].config), (0, 0));
        let EventKind::Hardware(h) = &c.kind else {
            panic!()
        };
        assert!(h.raw);
        assert_eq!(h.config, cycles_raw, "{spec}");
        assert!(matches!(
            h.register_source,
            Some(EncodingSource::Architectural | EncodingSource::AmdLegacy)
        ));
        // perf's spellings and ARUM's.
        for n in [
            "branch-misses",
            "branch_misses",
            "llc_misses",
            "cache-misses",
            "ref-cycles",
        ] {
            assert_eq!(
                r.resolve(n).unwrap().source,
                EncodingSource::Generic,
                "{spec} {n}"
            );
        }
        // A cache event has no register encoding: only the kernel knows it.
        let l1 = r.resolve("L1-dcache-load-misses").unwrap();
        assert_eq!(
            (l1.targets[0].perf_type, l1.targets[0].config),
            (3, 0x10000)
        );
        let EventKind::Hardware(h) = &l1.kind else {
            panic!()
        };
        assert!(!h.raw && h.register_source.is_none());
        // ARUM's own names fall back to the nearest generic event.
        let d = r.resolve("dcache_misses").unwrap();
        assert_eq!(d.name, "L1-dcache-load-misses");
        assert_eq!(d.alias.as_deref(), Some("dcache_misses"));
        assert!(matches!(
            r.resolve("cycle"),
            Err(ResolveError::Unknown { .. })
        ));
    }
}

#[test]
fn a_table_gives_the_precise_encoding_of_generic_names_and_says_so() {
    let (cpu, t) = table_for("GenuineIntel-6-55-4");
    let r = Resolver::new(&cpu, Some(t));
    for (name, config) in [
        ("cycles", 0x3c_u64),
        ("cpu-cycles", 0x3c),
        ("instructions", 0xc0),
        ("cache-misses", 0x412e),
        ("branch-misses", 0xc5),
        ("branch-instructions", 0xc4),
    ] {
        let e = r.resolve(name).unwrap();
        let EncodingSource::Table { table, src, origin } = &e.source else {
            panic!("{name}: {:?}", e.source)
        };
        assert_eq!(table, "intel-skylakex");
        assert!(
            !src.is_empty() && origin.contains("skylakex"),
            "{src} {origin}"
        );
        assert_eq!(
            (e.targets[0].perf_type, e.targets[0].config),
            (4, config),
            "{name}"
        );
    }
    // Generic names the table does not map stay generic.
    assert_eq!(
        r.resolve("dTLB-load-misses").unwrap().source,
        EncodingSource::Generic
    );
}

#[test]
fn decimal_models_get_a_hint_with_their_hex_form() {
    let src = TableSource::default();
    let has = |c: &CpuIdent| src.for_cpu(c).ok().flatten().map(|t| t.title().to_string());
    let cpu = parse_spec("6-23").unwrap();
    assert_eq!((cpu.vendor.as_str(), cpu.model), ("GenuineIntel", 0x23));
    let hint = arum_events::cpu::decimal_model_hint("6-23", &cpu, has).unwrap();
    assert!(hint.contains("did you mean 6-17 (model 0x17"), "{hint}");
    // A model that has a table, or a hex model, gets none.
    let skx = parse_spec("6-55").unwrap();
    assert!(arum_events::cpu::decimal_model_hint("6-55", &skx, has).is_none());
    let future = parse_spec("GenuineIntel-19-1").unwrap();
    assert!(arum_events::cpu::decimal_model_hint("GenuineIntel-19-1", &future, has).is_none());
}

#[test]
fn spec_forms_users_type() {
    let k = |s: &str| parse_spec(s).map(|c| (c.vendor, c.family, c.model, c.stepping));
    assert_eq!(
        k("GenuineIntel-6-55-7"),
        Ok(("GenuineIntel".into(), 6, 0x55, 7))
    );
    assert_eq!(k("intel-6-0x55"), Ok(("GenuineIntel".into(), 6, 0x55, 0)));
    assert_eq!(k("amd-25-1"), Ok(("AuthenticAMD".into(), 25, 1, 0)));
    assert_eq!(k("0x19-1"), Ok(("AuthenticAMD".into(), 25, 1, 0)));
    assert_eq!(k("25-21-0"), Ok(("AuthenticAMD".into(), 25, 0x21, 0)));
    // Family 15 is both vendors'.
    assert!(k("15-4").unwrap_err().contains("more than one vendor"));
    assert!(k("GenuineIotel-6-55").is_err());
    assert!(k("6").is_err());
    assert!(k("6-100").is_err());
}

#[test]
fn event_lists_split_on_space_and_comma_but_not_inside_terms() {
    use arum_events::resolve::split_event_list;
    assert_eq!(
        split_event_list("a b,c  cpu/event=0x41,umask=0x1/,d"),
        ["a", "b", "c", "cpu/event=0x41,umask=0x1/", "d"]
    );
}

#[test]
fn every_tables_names_could_exist_and_misspellings_cannot() {
    // Every event, `EVENT.MASK` spelling and alias of every table is a name that some machine
    // knows: never refused as a misspelling.
    let source = TableSource::default();
    for t in tables() {
        for e in t.events() {
            assert!(source.could_exist(e.name()), "{}: {}", t.name(), e.name());
        }
        for a in t.aliases() {
            assert!(source.could_exist(a.name()), "{}: {}", t.name(), a.name());
        }
    }
    assert!(source.could_exist("INST_RETIRED.ANY"));
    // Machine-dependent syntax is never judged here: tracepoints, masks, PMU terms.
    for name in [
        "sched:nosuch",
        "EVENT:MASK",
        "cpu/event=0x3c/",
        "cpu@event=1@",
    ] {
        assert!(source.could_exist(name), "{name}");
    }
}

proptest::proptest! {
    /// Names of letters no table uses (non-ASCII, digits mixed in) exist on no machine.
    #[test]
    fn non_ascii_names_are_misspellings(name in "[äöüßéñçøåłžğ][a-zäöüßéñ0-9_.-]{0,24}") {
        proptest::prop_assert!(!TableSource::default().could_exist(&name), "{}", name);
    }
}
