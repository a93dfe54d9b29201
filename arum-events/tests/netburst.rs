//! NetBurst tagging, checked against the SDM (vol. 3B, "Tagging Mechanism for Execution_event"
//! and "Metrics That Utilize Replay Tagging Mechanism").

use arum_events::cpu::parse_spec;
use arum_events::resolve::{EventKind, NetburstEncoding, ResolveError, Resolver};
use arum_events::table::TableSource;

fn nb(name: &str) -> Result<NetburstEncoding, ResolveError> {
    let cpu = parse_spec("GenuineIntel-15-3").unwrap();
    let t = TableSource::default().for_cpu(&cpu).unwrap().unwrap();
    let r = Resolver::new(&cpu, Some(t)).resolve(name)?;
    match r.kind {
        EventKind::Hardware(h) => Ok(h.netburst.expect("a NetBurst encoding")),
        _ => panic!("{name} is not a hardware event"),
    }
}

#[test]
fn execution_tagging_sets_tag_enable_and_the_tag_value() {
    // ESCR: tag enable is bit 4, the tag value bits 8:5; packed_SP_uop's event mask bit 15 is ALL.
    for event in [
        "packed_SP_uop",
        "packed_DP_uop",
        "scalar_SP_uop",
        "scalar_DP_uop",
        "64bit_MMX_uop",
        "128bit_MMX_uop",
        "x87_FP_uop",
    ] {
        let plain = nb(&format!("{event}:ALL")).unwrap();
        assert_eq!(plain.escr & 0x1F0, 0, "{event}: no tagging unless asked");
        let t = nb(&format!("{event}:ALL:TAG0:TAG2")).unwrap();
        assert_eq!(t.escr & 1 << 4, 1 << 4, "{event}: tag enable");
        assert_eq!(
            (t.escr >> 5) & 0xF,
            0b0101,
            "{event}: tag value bits 0 and 2"
        );
        assert_eq!(
            (t.escr >> 9) & 0xFFFF,
            1 << 15,
            "{event}: event mask ALL only"
        );
        // The event select (bits 30:25) is untouched by the tags.
        assert_eq!(t.escr >> 25, plain.escr >> 25, "{event}");
        // Linux's P4 config carries tag enable and value in the ESCR half.
        assert_eq!((t.perf_config() >> 32) as u32 & 0x1F0, t.escr & 0x1F0);
    }
    // packed_SP_uop: ESCR select 08H (SDM).
    assert_eq!(nb("packed_SP_uop:ALL").unwrap().escr >> 25, 0x08);
}

#[test]
fn replay_event_masks_hold_only_nbogus_and_bogus() {
    let n = nb("replay_event:NBOGUS").unwrap();
    assert_eq!((n.escr >> 9) & 0xFFFF, 0b01);
    assert_eq!(n.escr >> 25, 0x09, "replay_event's ESCR select is 09H");
    assert_eq!(
        (n.pebs_enable, n.pebs_matrix_vert, n.perf_metric),
        (0, 0, None)
    );
    let b = nb("replay_event:BOGUS").unwrap();
    assert_eq!((b.escr >> 9) & 0xFFFF, 0b10);
}

#[test]
fn replay_kinds_go_to_pebs_enable_and_matrix_vert_with_the_sdms_values() {
    // (kind, IA32_PEBS_ENABLE bits, MSR_PEBS_MATRIX_VERT bits, Linux P4_PEBS_METRIC index).
    let b = |bits: &[u32]| bits.iter().fold(0u32, |a, i| a | 1 << i);
    for (kind, pebs, vert, metric) in [
        ("L1_LD_MISS", b(&[0, 24, 25]), b(&[0]), 1),
        ("L2_LD_MISS", b(&[1, 24, 25]), b(&[0]), 2),
        ("DTLB_LD_MISS", b(&[2, 24, 25]), b(&[0]), 3),
        ("DTLB_ST_MISS", b(&[2, 24, 25]), b(&[1]), 4),
        ("DTLB_ALL_MISS", b(&[2, 24, 25]), b(&[0, 1]), 5),
        ("BR_MSP", b(&[15, 16, 24, 25]), b(&[4]), 6),
        ("MOB_LD_REPLAY", b(&[9, 24, 25]), b(&[0]), 7),
        ("SP_LD_RET", b(&[10, 24, 25]), b(&[0]), 8),
        ("SP_ST_RET", b(&[10, 24, 25]), b(&[1]), 9),
    ] {
        let e = nb(&format!("replay_event:NBOGUS:{kind}")).unwrap();
        // The ESCR event mask is NBOGUS alone: no kind lands in reserved ESCR bits.
        assert_eq!((e.escr >> 9) & 0xFFFF, 1, "{kind}");
        assert_eq!((e.pebs_enable, e.pebs_matrix_vert), (pebs, vert), "{kind}");
        assert_eq!(e.perf_metric, Some(metric), "{kind}");
        assert_eq!(e.perf_unsupported, None);
        // Linux carries the metric index in the CCCR half's reserved bits 6:0.
        assert_eq!(e.perf_config() & 0x7F, u64::from(metric), "{kind}");
        // Naming the kind alone implies NBOGUS.
        assert_eq!(nb(&format!("replay_event:{kind}")).unwrap(), e);
    }
    // Two kinds at once: the register back-end can program them, the perf back-end cannot.
    let two = nb("replay_event:NBOGUS:L1_LD_MISS:L2_LD_MISS").unwrap();
    assert_eq!(two.pebs_enable, b(&[0, 1, 24, 25]));
    assert!(two.perf_metric.is_none());
    assert!(two
        .perf_unsupported
        .unwrap()
        .contains("one replay-tagging metric"));
    assert!(matches!(
        nb("replay_event:L3_LD_MISS"),
        Err(ResolveError::UnknownMask { .. })
    ));
}
