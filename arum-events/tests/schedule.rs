//! Counter placement under each family's constraints.

use arum_events::cpu::parse_spec;
use arum_events::plan::plan;
use arum_events::table::TableSource;

fn plan_for(cpu: &str, events: &[&str]) -> arum_events::plan::Plan {
    let cpu = parse_spec(cpu).unwrap();
    let table = TableSource::default().for_cpu(&cpu).unwrap();
    let specs: Vec<String> = events.iter().map(|s| s.to_string()).collect();
    plan(&specs, &cpu, table, None)
}

fn counters(p: &arum_events::plan::Plan) -> Vec<u32> {
    p.events
        .iter()
        .filter_map(|e| e.placement.map(|p| p.counter))
        .collect()
}

#[test]
fn core2_places_pmc0_and_pmc1_only_events_and_fixed_ones() {
    let p = plan_for(
        "GenuineIntel-6-17",
        &[
            "MEM_LOAD_RETIRED:L1D_MISS",
            "FP_ASSIST",
            "instructions",
            "cycles",
            "task-clock",
        ],
    );
    assert_eq!(p.hardware_off, None);
    assert_eq!(counters(&p), [0, 1, 32, 33]);
    assert_eq!(p.events.len(), 5, "the software event is kept");
}

#[test]
fn core2_conflict_names_both_events() {
    let p = plan_for(
        "GenuineIntel-6-17",
        &[
            "MEM_LOAD_RETIRED:L1D_MISS",
            "CYCLES_DIV_BUSY",
            "page-faults",
        ],
    );
    let reason = p
        .hardware_off
        .expect("two PMC0-only events cannot be counted together");
    assert!(
        reason.contains("CYCLES_DIV_BUSY") && reason.contains("MEM_LOAD_RETIRED:L1D_MISS"),
        "{reason}"
    );
    assert!(reason.contains("counter 0"), "{reason}");
    assert_eq!(p.events.len(), 1, "only the software event remains");
}

#[test]
fn too_many_events_for_the_counters() {
    let p = plan_for(
        "AuthenticAMD-15-41",
        &[
            "dcache_accesses",
            "dcache_misses",
            "L1_DTLBmiss_L2_DTLBhit",
            "L1_L2_DTLBmiss",
            "cycles",
        ],
    );
    let reason = p.hardware_off.unwrap();
    assert!(reason.starts_with("too many events: 5"), "{reason}");
}

#[test]
fn netburst_pairs_escrs_and_counters() {
    let p = plan_for(
        "GenuineIntel-15-3",
        &["cycles", "instructions", "branch_misses", "llc_misses"],
    );
    assert_eq!(p.hardware_off, None, "{:?}", p.hardware_off);
    let placed: Vec<_> = p.events.iter().map(|e| e.placement.unwrap()).collect();
    // Every event got its own counter and its own ESCR.
    let mut c: Vec<u32> = placed.iter().map(|p| p.counter).collect();
    let mut e: Vec<u32> = placed.iter().map(|p| p.escr_msr.unwrap()).collect();
    c.dedup();
    e.sort_unstable();
    e.dedup();
    assert_eq!((c.len(), e.len()), (4, 4));
    // instr_retired and mispred_branch_retired share CRU_ESCR0/1: a third CRU_ESCR0/1 event fails.
    let p = plan_for(
        "GenuineIntel-15-3",
        &["instructions", "branch_misses", "uops_retired:NBOGUS"],
    );
    let reason = p.hardware_off.expect("only two CRU_ESCR0/1 exist");
    assert!(
        reason.contains("ESCR 0x3b8") && reason.contains("ESCR 0x3b9"),
        "{reason}"
    );
}

#[test]
fn zen_pair_events_take_an_even_odd_pair() {
    let p = plan_for(
        "AuthenticAMD-25-11",
        &["instructions", "RETIRED_SSE_AVX_FLOPS:ANY", "cycles"],
    );
    assert_eq!(p.hardware_off, None);
    let flops = p.events[1].placement.unwrap().counter;
    assert_eq!(flops % 2, 0);
    for other in [0, 2] {
        let c = p.events[other].placement.unwrap().counter;
        assert!(
            c != flops && c != flops + 1,
            "pair {flops}/{} is reserved",
            flops + 1
        );
    }
}
