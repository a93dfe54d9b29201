//! Each kind of name resolves to the encoding its table, the kernel's ABI or the user gives:
//! software events, raw codes, PMU terms, aliases, table events with unit masks, generic events,
//! other PMUs' sysfs events, and the `:u`/`:k` modifiers on all of them.

use super::*;
use crate::table::Unit;

#[test]
fn software_events_by_every_name_with_or_without_a_table() {
    for model in [
        Model::with_table(SKYLAKE_SP, "intel-skylakex"),
        Model::without_table(AMD_NO_TABLE),
    ] {
        for (name, others, config) in SOFTWARE_EVENTS {
            for n in std::iter::once(name).chain(others.iter()) {
                let ev = model.ok(n);
                assert_eq!(ev.kind, EventKind::Software { config: *config }, "{n}");
                assert_eq!(
                    (ev.name.as_str(), &ev.source),
                    (*name, &EncodingSource::Software)
                );
                let t = &ev.targets[..];
                assert_eq!(t.len(), 1);
                assert_eq!(
                    (t[0].pmu.as_str(), t[0].perf_type, t[0].config),
                    ("software", PERF_TYPE_SOFTWARE, *config)
                );
                assert!(is_software(n) && needs_no_table(n), "{n}");
                // perf's `software/NAME/` is the same event.
                assert_eq!(model.ok(&format!("software/{n}/")).kind, ev.kind, "{n}");
            }
        }
    }
    assert!(!is_software("cycles") && !needs_no_table("cycles"));
}

#[test]
fn raw_codes_are_read_in_the_register_layout_of_the_cpus_vendor() {
    // Intel: event 3CH, unit mask 01H with UMASK2 02H (bits 47:40), any (21), cmask 2 (31:24).
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    let ev = skx.ok("r2000220013c");
    assert_eq!(
        (ev.name.as_str(), ev.alias.as_deref()),
        ("r2000220013c", None)
    );
    assert_eq!(ev.source, EncodingSource::Raw);
    let h = hw_of(&ev);
    assert_eq!(
        (h.config, h.perf_type, h.raw),
        (0x200_0220_013C, PERF_TYPE_RAW, true)
    );
    assert_eq!(
        skx.sel("r2000220013c"),
        (0x3C, 0x0201, 2, false, false, true)
    );
    // AMD: bits 35:32 are the event select's upper nibble; bit 21 is no field.
    let zen = Model::with_table(ZEN4, "amd-zen4");
    assert_eq!(zen.sel("r1002000f0"), (0x1F0, 0x00, 0, false, false, false));
    assert_eq!(zen.hw("r1002000f0").config, 0x1_0020_00F0);
    // NetBurst: an ESCR/CCCR pair, no select fields.
    let p4 = Model::with_table(NETBURST, "intel-netburst");
    let h = p4.hw("r300002000003d000");
    assert_eq!((h.config, h.fields), (0x3000_0200_0003_D000, None));
    // Leading zeros are allowed; the code opens on every core type of a hybrid part.
    assert_eq!(skx.hw("r0000000000000000003c").config, 0x3C);
    let adl = Model::with_table(ALDER_LAKE, "intel-alderlake");
    let mut units: Vec<Unit> = adl.ok("r00c0").targets.iter().map(|t| t.unit).collect();
    units.sort();
    assert_eq!(units, [Unit::CpuCore, Unit::CpuAtom]);
    assert!(needs_no_table("r003c:u"));
    assert!(!needs_no_table("r") && !needs_no_table("r3g"));
}

#[test]
fn pmu_terms_set_the_select_fields_in_the_vendors_layout() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    let ev = skx.ok("cpu/event=0x3c,umask=0x1,cmask=2,inv,edge,any/");
    assert_eq!(
        (ev.name.as_str(), &ev.source),
        (
            "cpu/event=0x3c,umask=0x1,cmask=2,inv,edge,any/",
            &EncodingSource::Raw
        )
    );
    assert_eq!(
        hw_of(&ev).config,
        0x3C | 0x01 << 8 | 1 << 18 | 1 << 21 | 1 << 23 | 2 << 24
    );
    // The metric files' `PMU@terms@`, terms in any order, decimal or hex, spaces around them.
    assert_eq!(skx.hw("cpu@ umask=1 , event=60 @").config, 0x13C);
    // A unit mask over 8 bits fills UMASK2.
    assert_eq!(
        skx.hw("cpu/event=0xc2,umask=0x8010/").config,
        0x8000_0000_10C2
    );
    // `config=` is the whole config, whatever the fields say; the fields are read back from it.
    let h = skx.hw("cpu/event=0x3c,config=0x1234/");
    assert_eq!((h.config, h.fields.unwrap().event_select), (0x1234, 0x34));
    // The MSR value terms all go to config1.
    for key in ["config1", "offcore_rsp", "ldlat", "frontend"] {
        let h = skx.hw(&format!("cpu/event=0xb7,umask=1,{key}=0x10/"));
        assert_eq!((h.config, h.config1), (0x1B7, 0x10), "{key}");
    }
    // Sampling, naming and grouping terms change nothing counted.
    assert_eq!(
        skx.hw("cpu/event=0x3c,period=1000,freq=1,name=x,metric-id=y,percore,pebs/")
            .config,
        0x3C
    );
    // AMD: a 12-bit event select goes to bits 35:32.
    let zen = Model::with_table(ZEN4, "amd-zen4");
    assert_eq!(zen.hw("cpu/event=0x18e,umask=0x18/").config, 0x1_0000_188E);
}

#[test]
fn a_named_event_takes_terms_after_its_name_or_before_the_slash() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    // Without terms it is the table's event, and says so.
    let plain = skx.ok("cpu/INST_RETIRED.ANY_P/");
    assert_eq!(hw_of(&plain).config, 0xC0);
    assert!(
        matches!(plain.source, EncodingSource::Table { ref table, .. } if table == "intel-skylakex")
    );
    // With terms the user gave the encoding: INST_RETIRED.ANY_P with cmask 10 and invert counts
    // cycles with no instruction retired.
    let ev = skx.ok("cpu/INST_RETIRED.ANY_P,cmask=10,inv/");
    assert_eq!(ev.source, EncodingSource::Raw);
    assert_eq!(hw_of(&ev).config, 0xC0 | 1 << 23 | 10 << 24);
    // `EVENT/terms/` (the metric files' `OCR.X@offcore_rsp=..@`): the event before the slash.
    assert_eq!(
        skx.sel("CYCLE_ACTIVITY.STALLS_TOTAL/cmask=2/"),
        (0xA3, 0x04, 2, false, false, false)
    );
    // An alias works there too.
    assert_eq!(
        skx.sel("cpu/dcache_misses,edge/"),
        (0x51, 0x01, 0, false, true, false)
    );
    // A hybrid part's core type, by its PMU: that core type only.
    let adl = Model::with_table(ALDER_LAKE, "intel-alderlake");
    let atom = adl.ok("cpu_atom/event=0x3c/");
    assert_eq!(atom.targets.len(), 1);
    assert_eq!(atom.targets[0].unit, Unit::CpuAtom);
}

#[test]
fn aliases_name_the_models_own_event() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    let ev = skx.ok("dcache_misses");
    assert_eq!(
        (ev.name.as_str(), ev.alias.as_deref()),
        ("L1D.REPLACEMENT", Some("dcache_misses"))
    );
    assert_eq!(
        skx.sel("dcache_misses"),
        (0x51, 0x01, 0, false, false, false)
    );
    // Case-insensitive, and perf's other spellings of a generic name find its alias.
    assert_eq!(skx.ok("DCACHE_MISSES").name, "L1D.REPLACEMENT");
    let cycles = skx.ok("cpu-cycles");
    assert_eq!(
        (cycles.name.as_str(), cycles.alias.as_deref()),
        ("CPU_CLK_UNHALTED.THREAD", Some("cycles"))
    );
    // An alias a core type lacks opens on the others only.
    let adl = Model::with_table(ALDER_LAKE, "intel-alderlake");
    let units = |n: &str| {
        let mut u: Vec<Unit> = adl.ok(n).targets.iter().map(|t| t.unit).collect();
        u.sort();
        u
    };
    assert_eq!(units("dcache_misses"), [Unit::CpuCore]);
    assert_eq!(units("icache_misses"), [Unit::CpuAtom]);
    assert_eq!(units("cycles"), [Unit::CpuCore, Unit::CpuAtom]);
}

#[test]
fn table_events_by_name_with_their_unit_masks() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    // `EVENT.MASK`, `EVENT:MASK`, any case: the table's spelling comes back.
    for n in [
        "INST_RETIRED.ANY_P",
        "INST_RETIRED:ANY_P",
        "inst_retired.any_p",
    ] {
        assert_eq!(skx.ok(n).name, "INST_RETIRED.ANY_P", "{n}");
        assert_eq!(skx.hw(n).config, 0xC0, "{n}");
    }
    // A plain event counts its own unit mask; a mask named with dots is one mask.
    assert_eq!(skx.sel("L1D"), (0x51, 0x01, 0, false, false, false));
    let ocr = skx.hw("OFFCORE_RESPONSE.ALL_DATA_RD.ANY_RESPONSE");
    assert_eq!((ocr.config, ocr.config1, ocr.msr), (0x1B7, 0x10491, 0x1A6));
    let ldlat = skx.hw("MEM_TRANS_RETIRED.LOAD_LATENCY_GT_128");
    assert_eq!((ldlat.config1, ldlat.msr), (128, 0x3F6));
    // A mask's own event select and counters replace the event's (fixed counter 2 only).
    let ref_tsc = skx.hw("CPU_CLK_UNHALTED.REF_TSC");
    assert_eq!((ref_tsc.config, ref_tsc.counters), (0x300, Some(vec![34])));
    // Masks combine: values OR-ed, counters those all allow, both named.
    let ev = skx.ok("INST_RETIRED.ANY:PREC_DIST");
    assert_eq!(ev.name, "INST_RETIRED.ANY:PREC_DIST");
    assert_eq!(hw_of(&ev).config, 0x1C0);
    assert_eq!(hw_of(&ev).counters, Some(vec![1]));
    // One mask: the description says which.
    assert!(skx.hw("L1D.REPLACEMENT").desc.contains(" — "));
    // Where the value came from: the mask's source key and what that key stands for.
    let EncodingSource::Table { table, src, origin } = skx.ok("L1D.REPLACEMENT").source else {
        panic!("not from the table")
    };
    assert_eq!((table.as_str(), src.as_str()), ("intel-skylakex", "k,p"));
    assert!(
        origin.contains("tools/perf/pmu-events/arch/x86/skylakex"),
        "{origin}"
    );
    // AMD, lower case with dots, several masks.
    let zen = Model::with_table(ZEN4, "amd-zen4");
    let ev = zen.ok("ls_dispatch.ld_dispatch:store_dispatch");
    assert_eq!(ev.name, "ls_dispatch.ld_dispatch:store_dispatch");
    assert_eq!(zen.sel("ls_dispatch.ld_dispatch:store_dispatch").1, 0x03);
}

#[test]
fn an_event_without_a_mask_named_counts_its_defaults() {
    // Family 10h L1 DTLB miss/L2 hit: default ALL, every other mask the model has.
    let barcelona = Model::with_table(BARCELONA, "amd-fam10h");
    let shanghai = Model::with_table(SHANGHAI, "amd-fam10h");
    let e = "L1_DTLB_MISS_AND_L2_DTLB_HIT";
    assert_eq!(barcelona.ok(e).name, format!("{e}:ALL"));
    assert_eq!(barcelona.sel(e).1, 0x03);
    assert_eq!(shanghai.sel(e).1, 0x07, "1G pages after Barcelona");
    assert_eq!(
        shanghai.sel(&format!("{e}:L2_4K_TLB_HIT:L2_2M_TLB_HIT")).1,
        0x03
    );
    // 12-bit event select 1C0H with its default mask.
    assert_eq!(shanghai.hw("RETIRED_X87_OPS").config, 0x1_0000_07C0);
}

#[test]
fn generic_events_where_the_table_has_no_alias_or_there_is_no_table() {
    // The kernel's cache event: its perf type and config, no register encoding.
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    let ev = skx.ok("dTLB-load-misses");
    assert_eq!(ev.source, EncodingSource::Generic);
    assert_eq!(
        (ev.targets[0].perf_type, ev.targets[0].config),
        (PERF_TYPE_HW_CACHE, 0x10003)
    );
    let h = hw_of(&ev);
    assert!(!h.raw && h.register_source.is_none());
    // Without a table: Intel's architectural encodings (CPUID leaf 0xA, assumed for --cpu),
    // with the fixed counters where one counts the event.
    let intel = Model::without_table(INTEL_NO_TABLE);
    for (name, config, counters) in [
        ("cycles", 0x3C, Some(vec![0, 1, 33])),
        ("instructions", 0xC0, Some(vec![0, 1, 32])),
        ("ref-cycles", 0x300, Some(vec![34])),
        ("bus-cycles", 0x13C, None),
        ("branch-misses", 0xC5, None),
    ] {
        let ev = intel.ok(name);
        assert_eq!(
            (ev.targets[0].perf_type, &ev.source),
            (PERF_TYPE_HARDWARE, &EncodingSource::Generic)
        );
        let h = hw_of(&ev);
        assert_eq!((h.config, h.counters), (config, counters), "{name}");
        assert_eq!(h.register_source, Some(EncodingSource::Architectural));
    }
    // No leaf 0xA: the kernel's event only.
    assert!(!hw_of(&intel.resolver().with_arch(None).resolve("cycles").unwrap()).raw);
    // AMD: the core events every family has.
    let amd = Model::without_table(AMD_NO_TABLE);
    let h = amd.hw("cycles");
    assert_eq!(
        (h.config, h.register_source),
        (0x76, Some(EncodingSource::AmdLegacy))
    );
    assert!(!amd.hw("cache-misses").raw);
    // ARUM's own names fall back to the kernel's nearest generic event.
    for (arum, generic) in [
        ("dcache_accesses", "L1-dcache-loads"),
        ("dcache_misses", "L1-dcache-load-misses"),
        ("L1_L2_DTLBmiss", "dTLB-load-misses"),
        ("icache_misses", "L1-icache-load-misses"),
    ] {
        let ev = amd.ok(arum);
        assert_eq!(
            (ev.name.as_str(), ev.alias.as_deref()),
            (generic, Some(arum))
        );
    }
}

#[test]
fn modifiers_exclude_kernel_or_user_on_every_kind_of_name() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    for name in [
        "task-clock",
        "r003c",
        "cpu/event=0x3c/",
        "cycles",
        "dcache_misses",
        "INST_RETIRED.ANY_P",
        "dTLB-load-misses",
    ] {
        let unmodified = skx.ok(name);
        for (m, excluded) in [
            (":u", (false, true)),
            (":k", (true, false)),
            (":uk", (false, false)),
            (":ku", (false, false)),
        ] {
            let spec = format!("{name}{m}");
            let ev = skx.ok(&spec);
            assert_eq!(ev.spec, spec);
            assert_eq!((ev.exclude_user, ev.exclude_kernel), excluded, "{spec}");
            assert_eq!(
                (&ev.name, &ev.targets),
                (&unmodified.name, &unmodified.targets),
                "{spec}"
            );
        }
    }
}

#[test]
fn other_pmus_by_their_sysfs_events_and_formats() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    let sysfs = Sysfs::new(&[("cpu", 4, "0-15")]);
    let r = skx.resolver().with_pmus(Some(&sysfs.pmus));
    let tsc = r.resolve("msr/tsc/").unwrap();
    assert_eq!(tsc.source, EncodingSource::Sysfs { pmu: "msr".into() });
    let t = &tsc.targets[0];
    assert_eq!(
        (t.pmu.as_str(), t.perf_type, t.config, &t.cpus),
        ("msr", 11, 0, &None)
    );
    assert_eq!(r.resolve("msr/event=5/").unwrap().targets[0].config, 5);
    // A core PMU's sysfs event the table lacks.
    let td = r.resolve("cpu/topdown-retiring/").unwrap();
    assert_eq!(td.source, EncodingSource::Sysfs { pmu: "cpu".into() });
    assert_eq!(hw_of(&td).config, 0x8000);
    // The core PMU's type and CPUs come from sysfs when it is there.
    let t = &r.resolve("cpu/event=0x3c/").unwrap().targets[0];
    assert_eq!(
        (t.perf_type, t.cpus.as_deref()),
        (4, Some(&(0..16).collect::<Vec<_>>()[..]))
    );
    // A tracepoint is looked up only on the machine itself, not for a CPU named with --cpu.
    assert!(matches!(
        skx.resolver().resolve("sched:sched_switch"),
        Err(ResolveError::Unknown { .. })
    ));
}

#[test]
fn every_name_a_tables_resolver_lists_is_known_to_it() {
    // `arum list` shows Resolver::candidates: none of them is unknown (a mask of another model
    // of the table, or an event that needs a mask, is refused for that reason instead).
    for key in [
        SKYLAKE_SP,
        ALDER_LAKE,
        CORE2,
        NETBURST,
        K8_REV_F,
        SHANGHAI,
        ZEN4,
        INTEL_NO_TABLE,
    ] {
        let model = Model::new(key);
        let r = model.resolver();
        for name in r.candidates() {
            if let Err(e @ ResolveError::Unknown { .. }) = r.resolve(&name) {
                panic!("{key}: {name}: {e}");
            }
        }
    }
}
