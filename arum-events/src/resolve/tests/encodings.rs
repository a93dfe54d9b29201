//! The register layouts: Intel's and AMD's select fields, and what the older tables do
//! differently (K8 and family 10h masks by model, Core 2's counter restrictions, NetBurst's
//! ESCR/CCCR pairs and replay tagging).

use proptest::prelude::*;

use super::*;

/// Select fields that fit `style`'s layout (AMD has no `any` bit).
fn fields(style: Style) -> impl Strategy<Value = Fields> {
    let (max_event, max_umask): (u32, u32) = match style {
        Style::Amd => (0xFFF, 0xFF),
        _ => (0xFF, 0xFFFF),
    };
    (
        0..=max_event,
        0..=max_umask,
        0..=0xFFu32,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(move |(event_select, umask, cmask, inv, edge, any)| Fields {
            event_select,
            umask,
            cmask,
            inv,
            edge,
            any: any && style == Style::Intel,
        })
}

/// `cpu/event=..,umask=..,cmask=..[,inv][,edge][,any]/`.
fn as_terms(f: &Fields) -> String {
    let mut terms = format!(
        "event={:#x},umask={:#x},cmask={}",
        f.event_select, f.umask, f.cmask
    );
    for (flag, set) in [("inv", f.inv), ("edge", f.edge), ("any", f.any)] {
        if set {
            terms.push(',');
            terms.push_str(flag);
        }
    }
    format!("cpu/{terms}/")
}

proptest! {
    /// The fields and the config are one encoding: either gives the other back.
    #[test]
    fn fields_and_config_round_trip_in_both_layouts(
        intel in fields(Style::Intel),
        amd in fields(Style::Amd),
    ) {
        prop_assert_eq!(Fields::from_config(Style::Intel, intel.config(Style::Intel)), intel);
        prop_assert_eq!(Fields::from_config(Style::Amd, amd.config(Style::Amd)), amd);
    }

    /// Terms, and the raw code of the config they give, resolve to the same fields, on each
    /// vendor's layout.
    #[test]
    fn terms_and_raw_codes_agree(intel in fields(Style::Intel), amd in fields(Style::Amd)) {
        for (key, table, f, style) in [
            (SKYLAKE_SP, "intel-skylakex", intel, Style::Intel),
            (ZEN4, "amd-zen4", amd, Style::Amd),
        ] {
            let model = Model::with_table(key, table);
            let by_terms = model.hw(&as_terms(&f));
            prop_assert_eq!(by_terms.config, f.config(style));
            prop_assert_eq!(by_terms.fields, Some(f));
            let by_code = model.hw(&format!("r{:x}", by_terms.config));
            prop_assert_eq!(by_code.fields, Some(f));
        }
    }
}

#[test]
fn the_layouts_differ_where_the_vendors_do() {
    // Bits 35:32: AMD's event select's upper nibble, nothing on Intel. Bits 47:40: Intel's
    // UMASK2, nothing on AMD. Bit 21: Intel's any-thread bit, nothing on AMD.
    let config = 0x5A << 40 | 0xA << 32 | 1 << 21 | 0x0102;
    let intel = Fields::from_config(Style::Intel, config);
    let amd = Fields::from_config(Style::Amd, config);
    assert_eq!(
        (intel.event_select, intel.umask, intel.any),
        (0x02, 0x5A01, true)
    );
    assert_eq!((amd.event_select, amd.umask, amd.any), (0xA02, 0x01, false));
}

#[test]
fn one_name_is_each_models_own_encoding() {
    // `cycles`: Intel's unhalted core cycles (3CH), AMD's (76H), NetBurst's global power
    // events (ESCR select 13H, CCCR select 06H) in Linux's P4 config.
    for (key, config) in [
        (SKYLAKE_SP, 0x3C),
        (CORE2, 0x3C),
        (INTEL_NO_TABLE, 0x3C),
        (K8_REV_F, 0x76),
        (SHANGHAI, 0x76),
        (ZEN4, 0x76),
        (AMD_NO_TABLE, 0x76),
        (NETBURST, 0x3000_0200_0003_D000),
    ] {
        assert_eq!(Model::new(key).hw("cycles").config, config, "{key}");
    }
}

#[test]
fn k8_events_have_no_masks_and_family_10h_masks_vary_by_model() {
    // K8 (BKDG 26094): data cache misses 41H, no unit mask.
    let k8 = Model::with_table(K8_REV_F, "amd-k8");
    assert_eq!(k8.ok("DATA_CACHE_MISSES").name, "DATA_CACHE_MISSES");
    assert_eq!(
        k8.sel("DATA_CACHE_MISSES"),
        (0x41, 0, 0, false, false, false)
    );
    // Family 10h: the same event name, a mask that only later models have.
    let barcelona = Model::with_table(BARCELONA, "amd-fam10h");
    let shanghai = Model::with_table(SHANGHAI, "amd-fam10h");
    let hit = "L1_DTLB_MISS_AND_L2_DTLB_HIT:L2_1G_TLB_HIT";
    assert!(barcelona.resolver().resolve(hit).is_err());
    assert_eq!(shanghai.sel(hit).1, 0x04);
}

#[test]
fn core2_events_keep_to_the_counters_that_count_them() {
    // SDM 3B: RS_UOPS_DISPATCHED_CYCLES on PMC0 only, whatever the ports; fixed counters 0
    // and 1 also count instructions and core cycles.
    let c2 = Model::with_table(CORE2, "intel-core2");
    let h = c2.hw("RS_UOPS_DISPATCHED_CYCLES:PORT_0:PORT_1");
    assert_eq!((h.fields.unwrap().umask, h.counters), (0x03, Some(vec![0])));
    assert_eq!(
        c2.ok("MEM_LOAD_RETIRED:L1D_MISS").name,
        "MEM_LOAD_RETIRED:L1D_MISS"
    );
    assert_eq!(c2.hw("CPU_CLK_UNHALTED").counters, Some(vec![0, 1, 33]));
    assert_eq!(c2.hw("CPU_CLK_UNHALTED:BUS").counters, None);
}

#[test]
fn netburst_names_carry_their_replay_kinds_and_take_no_fields() {
    let p4 = Model::with_table(NETBURST, "intel-netburst");
    // A replay kind alone implies NBOGUS; both are in the name.
    let ev = p4.ok("replay_event:L1_LD_MISS");
    assert_eq!(ev.name, "replay_event:NBOGUS:L1_LD_MISS");
    let h = hw_of(&ev);
    assert_eq!((h.fields, h.register_source.is_some()), (None, true));
    assert_eq!(h.config, h.netburst.as_ref().unwrap().perf_config());
    // A replay kind is no mask of another event.
    assert!(matches!(
        p4.err("global_power_events:L1_LD_MISS"),
        ResolveError::UnknownMask { .. }
    ));
    // A raw code has no select fields to read back.
    assert_eq!(p4.hw("r3c").fields, None);
    // Without a table (a NetBurst model ARUM does not know): raw codes still read as
    // NetBurst's, and generic events have no register encoding (no architectural events).
    let later = Model::without_table(NETBURST_NO_TABLE);
    assert_eq!(later.hw("r3c").fields, None);
    let cycles = later.hw("cycles");
    assert!(!cycles.raw && cycles.register_source.is_none());
}
