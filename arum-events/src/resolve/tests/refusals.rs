//! Each way a name is refused, with the error that says why: unknown names (with the closest
//! known one), modifiers that are none, bad terms, raw codes and fields out of range, events and
//! masks the model lacks, events that need a mask, masks that cannot be combined, and PMUs that
//! are not there.

use proptest::prelude::*;

use super::*;

fn unknown(model: &Model, name: &str) -> (String, Option<String>) {
    match model.err(name) {
        ResolveError::Unknown { name, suggestion } => (name, suggestion),
        e => panic!("{name}: {e:?}"),
    }
}

fn bad(model: &Model, name: &str) -> String {
    match model.err(name) {
        ResolveError::Bad { why, .. } => why,
        e => panic!("{name}: {e:?}"),
    }
}

#[test]
fn unknown_names_suggest_the_closest_known_one() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    for (typo, meant) in [
        ("task-clok", "task-clock"),
        ("dcache_mises", "dcache_misses"),
        ("L1-dcache-load-mises", "L1-dcache-load-misses"),
        ("CYCLE_ACTIVTY.STALLS_TOTAL", "CYCLE_ACTIVITY.STALLS_TOTAL"),
    ] {
        assert_eq!(unknown(&skx, typo), (typo.into(), Some(meant.into())));
        let shown = skx.err(typo).to_string();
        assert!(
            shown.contains(&format!("(did you mean '{meant}'?)")),
            "{shown}"
        );
        assert!(shown.contains("`arum list`"), "{shown}");
    }
    // Nothing close: no suggestion.
    assert_eq!(unknown(&skx, "zzzz"), ("zzzz".into(), None));
    assert!(!skx.err("zzzz").to_string().contains("did you mean"));
    // A table's event is unknown where that table is not.
    let amd = Model::without_table(AMD_NO_TABLE);
    assert_eq!(unknown(&amd, "DATA_CACHE_MISSES").0, "DATA_CACHE_MISSES");
}

#[test]
fn a_modifier_other_than_u_k_uk_ku_is_part_of_the_name() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    assert_eq!(unknown(&skx, "cycles:x").0, "cycles:x");
    assert_eq!(
        unknown(&skx, "task-clock:"),
        ("task-clock:".into(), Some("task-clock".into()))
    );
    assert_eq!(unknown(&skx, ":u").0, "");
    // After a table event it is a unit mask the event lacks.
    match skx.err("INST_RETIRED.ANY_P:x") {
        ResolveError::UnknownMask { event, mask, .. } => {
            assert_eq!((event.as_str(), mask.as_str()), ("INST_RETIRED", "x"))
        }
        e => panic!("{e:?}"),
    }
    assert!(!is_software("task-clock:x"));
}

#[test]
fn bad_terms_are_refused_with_the_reason() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    assert!(bad(&skx, "cpu/foo=1/").contains("unknown term 'foo'"));
    assert!(bad(&skx, "cpu/event=x/").contains("event=x is not a number"));
    assert!(bad(&skx, "cpu/umask=/").contains("umask= is not a number"));
    assert!(bad(&skx, "cpu/event=0x1ffffffffffffffff/").contains("is not a number"));
    assert!(bad(&skx, "software//").contains("needs an event name"));
    assert!(bad(&skx, "software/cycles/").contains("'cycles' is not a software event"));
    // NetBurst's ESCR/CCCR pairs have no select fields to set.
    let p4 = Model::with_table(NETBURST, "intel-netburst");
    assert!(bad(&p4, "cpu/event=0x3c/").contains("NetBurst events are named natively"));
    // Another PMU's terms go through its formats.
    let sysfs = Sysfs::new(&[("cpu", 4, "0-15")]);
    let r = skx.resolver().with_pmus(Some(&sysfs.pmus));
    match r.resolve("msr/foo=1/") {
        Err(ResolveError::Bad { why, .. }) => assert!(why.contains("has no term 'foo'"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn raw_codes_wider_than_64_bits_are_refused() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    assert_eq!(
        skx.err("r10000000000000000:u"),
        ResolveError::Bad {
            spec: "r10000000000000000".into(),
            why: "raw code does not fit in 64 bits".into()
        }
    );
    // Not hexadecimal: no raw code, an unknown name.
    assert_eq!(unknown(&skx, "r12g").0, "r12g");
}

proptest! {
    /// Every 64-bit value is a raw code, in either case, with leading zeros or not; one hex
    /// digit more than 64 bits hold is refused.
    #[test]
    fn a_raw_code_is_its_config(
        config in any::<u64>(),
        zeros in 0usize..4,
        upper in any::<bool>(),
    ) {
        let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
        let hex = format!("{}{config:x}", "0".repeat(zeros));
        let hex = if upper { hex.to_ascii_uppercase() } else { hex };
        prop_assert_eq!(skx.hw(&format!("r{hex}")).config, config);
        let wide = format!("r1{config:016x}");
        let refused = matches!(skx.err(&wide), ResolveError::Bad { .. });
        prop_assert!(refused, "{}", wide);
    }

    /// A field beyond the vendor's layout is refused, never cut to fit: Intel's event select
    /// has 8 bits and its unit mask 16 (UMASK2), AMD's event select 12 bits and its unit mask
    /// 8; the counter mask has 8 on both.
    #[test]
    fn a_field_beyond_the_vendors_layout_is_refused(
        which in 0usize..3,
        amd in any::<bool>(),
        over in prop_oneof![1u64..=0x1_0000, any::<u64>()],
        wraps in any::<bool>(),
    ) {
        let (model, max) = if amd {
            (Model::with_table(ZEN4, "amd-zen4"), [0xFFF, 0xFF, 0xFF])
        } else {
            (Model::with_table(SKYLAKE_SP, "intel-skylakex"), [0xFF, 0xFFFF, 0xFF])
        };
        let field = ["event", "umask", "cmask"][which];
        let max = max[which];
        let at_max = format!("cpu/{field}={max:#x}/");
        prop_assert!(model.resolver().resolve(&at_max).is_ok(), "{}", at_max);
        // Past the maximum, or a value whose low 32 bits are within it.
        let value = if wraps {
            (over << 32) | (over % (max + 1))
        } else {
            max.saturating_add(over)
        };
        prop_assume!(value > max);
        let beyond = format!("cpu/{field}={value:#x}/");
        let refused = matches!(
            model.resolver().resolve(&beyond),
            Err(ResolveError::Bad { ref why, .. }) if why.contains("out of range")
        );
        prop_assert!(refused, "{}", beyond);
    }
}

#[test]
fn out_of_range_says_the_vendors_limits() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    let why = bad(&skx, "cpu/event=0x100/");
    assert!(
        why.contains("event ≤ 0xff, umask ≤ 0xffff, cmask ≤ 0xff"),
        "{why}"
    );
    let zen = Model::with_table(ZEN4, "amd-zen4");
    let why = bad(&zen, "cpu/umask=0x100/");
    assert!(
        why.contains("event ≤ 0xfff, umask ≤ 0xff, cmask ≤ 0xff"),
        "{why}"
    );
}

#[test]
fn events_the_model_lacks_are_refused_with_its_family_and_model() {
    // Family 10h: retired x87 ops (1C0H) from model 4 on.
    let barcelona = Model::with_table(BARCELONA, "amd-fam10h");
    let e = barcelona.err("RETIRED_X87_OPS");
    assert_eq!(
        e,
        ResolveError::NotOnModel {
            name: "RETIRED_X87_OPS".into(),
            family: 0x10,
            model: 2
        }
    );
    assert!(e.to_string().contains("(family 0x10, model 0x2)"), "{e}");
    assert!(Model::with_table(SHANGHAI, "amd-fam10h")
        .resolver()
        .resolve("RETIRED_X87_OPS")
        .is_ok());
    // K8: thermal status from revision D (model 20H) on; its ALL mask is every mask the model
    // has (DRAM ECC errors only, then the clock masks from revision F).
    let rev_c = Model::with_table(K8_REV_C, "amd-k8");
    assert!(matches!(
        rev_c.err("THERMAL_STATUS_AND_ECC_ERRORS"),
        ResolveError::NotOnModel {
            family: 0xF,
            model: 0xF,
            ..
        }
    ));
    let rev_f = Model::with_table(K8_REV_F, "amd-k8");
    assert_eq!(rev_f.sel("THERMAL_STATUS_AND_ECC_ERRORS").1, 0x8F);
    assert_eq!(
        Model::with_table("AuthenticAMD-15-21", "amd-k8")
            .sel("THERMAL_STATUS_AND_ECC_ERRORS:ALL")
            .1,
        0x80
    );
    // A mask of a later model: refused, and the valid ones listed are this model's.
    match barcelona.err("L1_DTLB_MISS_AND_L2_DTLB_HIT:L2_1G_TLB_HIT") {
        ResolveError::UnknownMask { valid, .. } => {
            assert_eq!(valid, ["L2_4K_TLB_HIT", "L2_2M_TLB_HIT", "ALL"])
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn unit_masks_are_checked() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    let e = skx.err("BR_INST_RETIRED.NOPE");
    let ResolveError::UnknownMask { event, mask, valid } = &e else {
        panic!("{e:?}")
    };
    assert_eq!((event.as_str(), mask.as_str()), ("BR_INST_RETIRED", "NOPE"));
    assert!(valid.iter().any(|v| v == "ALL_BRANCHES"));
    assert!(e.to_string().contains("has no unit mask 'NOPE'"), "{e}");
    // An event with masks and no default needs one named.
    for (model, event) in [
        (Model::with_table(SHANGHAI, "amd-fam10h"), "MAB_REQUESTS"),
        (Model::with_table(CORE2, "intel-core2"), "MEM_LOAD_RETIRED"),
    ] {
        let e = model.err(event);
        let ResolveError::NeedsMask { valid, .. } = &e else {
            panic!("{e:?}")
        };
        assert!(
            e.to_string()
                .contains(&format!("e.g. {event}:{}", valid[0])),
            "{e}"
        );
    }
}

#[test]
fn masks_that_set_more_than_the_unit_mask_are_not_combined() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    for (name, odd) in [
        // Each its own counter mask.
        (
            "CYCLE_ACTIVITY.CYCLES_L3_MISS:STALLS_L3_MISS",
            "STALLS_L3_MISS",
        ),
        // Counter mask and invert.
        ("INST_RETIRED.ANY_P:TOTAL_CYCLES", "TOTAL_CYCLES"),
        // Each its own load-latency threshold (config1).
        (
            "MEM_TRANS_RETIRED.LOAD_LATENCY_GT_128:LOAD_LATENCY_GT_16",
            "LOAD_LATENCY_GT_16",
        ),
        // Its own event select.
        ("CPU_CLK_UNHALTED.THREAD_P:REF_TSC", "REF_TSC"),
    ] {
        let why = bad(&skx, name);
        assert!(
            why.starts_with(&format!("unit mask {odd} has its own")),
            "{name}: {why}"
        );
    }
}

#[test]
fn pmus_that_are_not_there_are_refused() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    let no_pmu = |r: Resolver, name: &str| match r.resolve(name) {
        Err(ResolveError::NoPmu { pmu, why }) => (pmu, why),
        other => panic!("{name}: {other:?}"),
    };
    // For a CPU named with --cpu, only the core PMU is known.
    let (pmu, why) = no_pmu(skx.resolver(), "msr/tsc/");
    assert_eq!(pmu, "msr");
    assert!(why.contains("--cpu"), "{why}");
    let (pmu, _) = no_pmu(skx.resolver(), "cpu_atom/event=0x3c/");
    assert_eq!(pmu, "cpu_atom");
    // A hybrid part has no `cpu` PMU, but one per core type.
    let adl = Model::with_table(ALDER_LAKE, "intel-alderlake");
    assert_eq!(no_pmu(adl.resolver(), "cpu/event=0x3c/").0, "cpu");
    // On the machine: a PMU that is not there, an event it lacks.
    let sysfs = Sysfs::new(&[("cpu", 4, "0-15")]);
    let here = || skx.resolver().with_pmus(Some(&sysfs.pmus));
    assert!(no_pmu(here(), "uncore_imc/event=1/")
        .1
        .contains("is not on this machine"));
    assert!(no_pmu(here(), "msr/nope/")
        .1
        .contains("has no event 'nope'"));
}
