//! Derived metrics: selecting by name or group, planning the events they need, evaluating them
//! after a run; a metric whose events cannot be counted says why and has no value.

use arum_events::cpu::parse_spec;
use arum_events::metrics::{evaluate, select, RunFacts, ToolValues};
use arum_events::plan::{plan_with, Machine, Plan};
use arum_events::table::TableSource;

fn plan_for(cpu: &str, metrics: &[&str], facts: &RunFacts) -> Plan {
    let cpu = parse_spec(cpu).unwrap();
    let table = TableSource::default().for_cpu(&cpu).unwrap();
    let names: Vec<String> = metrics.iter().map(|s| s.to_string()).collect();
    plan_with(&[], &names, &Machine::named(&cpu, table), facts)
}

/// Counts for the plan's events by name (missing: "not counted").
fn counts(plan: &Plan, values: &[(&str, f64)]) -> Vec<Result<f64, String>> {
    plan.events
        .iter()
        .map(|e| {
            values
                .iter()
                .find(|(n, _)| *n == e.event.name)
                .map(|(_, v)| *v)
                .ok_or_else(|| "ENOENT".to_string())
        })
        .collect()
}

#[test]
fn a_common_metric_on_a_cpu_without_a_table() {
    let p = plan_for(
        "GenuineIntel-19-1",
        &["insn_per_cycle"],
        &RunFacts::default(),
    );
    assert_eq!(p.metrics.len(), 1);
    let m = &p.metrics[0];
    assert_eq!(
        (m.name.as_str(), m.table.as_str()),
        ("insn_per_cycle", "common")
    );
    assert_eq!(m.unavailable, None);
    let names: Vec<&str> = p.events.iter().map(|e| e.event.name.as_str()).collect();
    assert_eq!(names, ["cycles", "instructions"]);
    assert!(p.events.iter().all(|e| !e.requested));
    let v = evaluate(
        &p.metrics,
        &counts(&p, &[("instructions", 3e9), ("cycles", 2e9)]),
        &ToolValues::default(),
        &RunFacts::default(),
        Some(&p.events),
    );
    assert_eq!(v[0].value, Some(1.5));
    assert_eq!(v[0].unit_label, "instructions");
    assert_eq!(
        v[0].above_threshold,
        Some(false),
        "threshold: insn_per_cycle < 1"
    );
    // An event that was not counted: no value, and why — never 0.
    let v = evaluate(
        &p.metrics,
        &counts(&p, &[("instructions", 3e9)]),
        &ToolValues::default(),
        &RunFacts::default(),
        Some(&p.events),
    );
    assert_eq!(v[0].value, None);
    assert!(v[0]
        .why_not
        .as_deref()
        .unwrap()
        .contains("cycles was not counted (ENOENT)"));
    // A zero denominator is not a value either.
    let v = evaluate(
        &p.metrics,
        &counts(&p, &[("instructions", 3e9), ("cycles", 0.0)]),
        &ToolValues::default(),
        &RunFacts::default(),
        None,
    );
    assert_eq!(v[0].value, None);
    assert!(v[0].why_not.is_some());
}

#[test]
fn topdown_level_1_inlines_the_metrics_it_names_and_follows_smt() {
    let facts = RunFacts {
        smt_on: false,
        ..RunFacts::default()
    };
    let p = plan_for("GenuineIntel-6-55-4", &["tma_frontend_bound"], &facts);
    let m = &p.metrics[0];
    assert_eq!(m.unavailable, None, "{m:?}");
    assert!(m
        .definitions
        .iter()
        .any(|(n, _)| n == "tma_info_thread_slots"));
    let ids: Vec<&str> = m.inputs.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(
        ids,
        ["CPU_CLK_UNHALTED.THREAD", "IDQ_UOPS_NOT_DELIVERED.CORE"]
    );
    let c = counts(
        &p,
        &[
            ("CPU_CLK_UNHALTED.THREAD", 1e9),
            ("IDQ_UOPS_NOT_DELIVERED.CORE", 1e9),
        ],
    );
    let v = evaluate(
        &p.metrics,
        &c,
        &ToolValues::default(),
        &facts,
        Some(&p.events),
    );
    // 1e9 undelivered slots of 4 × 1e9: 25 %, above the 15 % threshold.
    assert_eq!(v[0].raw, Some(0.25));
    assert_eq!((v[0].value, v[0].unit_label.as_str()), (Some(25.0), "%"));
    assert_eq!(v[0].above_threshold, Some(true));
    // With SMT on and per-thread counting, the core's clocks come from other events.
    let smt = RunFacts {
        smt_on: true,
        ..RunFacts::default()
    };
    let p = plan_for("GenuineIntel-6-55-4", &["tma_frontend_bound"], &smt);
    let ids: Vec<&str> = p.metrics[0].inputs.iter().map(|i| i.id.as_str()).collect();
    assert!(
        ids.contains(&"CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE"),
        "{ids:?}"
    );
}

#[test]
fn groups_select_their_metrics_and_unknown_names_are_errors() {
    let cpu = parse_spec("GenuineIntel-6-55-4").unwrap();
    let src = TableSource::default();
    let t = src.for_cpu(&cpu).unwrap();
    let l1 = select(t, src.common(), &["TopdownL1".into()]).unwrap();
    let names: Vec<&str> = l1.iter().map(|s| s.metric.name()).collect();
    for n in [
        "tma_frontend_bound",
        "tma_bad_speculation",
        "tma_backend_bound",
        "tma_retiring",
    ] {
        assert!(names.contains(&n), "{n} not in {names:?}");
    }
    let err = select(t, src.common(), &["nope".into()]).unwrap_err();
    assert!(err.contains("arum list --metrics"), "{err}");
}

#[test]
fn metrics_that_need_what_cannot_be_counted_say_why() {
    // DRAM bandwidth reads uncore events, which ARUM does not count.
    let p = plan_for(
        "GenuineIntel-6-55-4",
        &["tma_info_system_dram_bw_use"],
        &RunFacts::default(),
    );
    let why = p.metrics[0].unavailable.as_deref().unwrap();
    assert!(why.contains("UNC_M_CAS_COUNT"), "{why}");
    assert!(p.events.is_empty(), "no event is counted for it");
    let v = evaluate(
        &p.metrics,
        &[],
        &ToolValues::default(),
        &RunFacts::default(),
        None,
    );
    assert_eq!(v[0].value, None);
    assert_eq!(v[0].why_not.as_deref(), Some(why));
    // A metric on the msr PMU can be planned only for the machine arum runs on.
    let p = plan_for(
        "GenuineIntel-6-55-4",
        &["tma_info_system_turbo_utilization"],
        &RunFacts::default(),
    );
    if let Some(why) = &p.metrics[0].unavailable {
        assert!(
            why.contains("msr") || why.contains("aperf") || why.contains("tsc"),
            "{why}"
        );
    }
    // duration_time is the run's wall time.
    let p = plan_for(
        "GenuineIntel-6-55-4",
        &["tma_info_system_time"],
        &RunFacts::default(),
    );
    assert_eq!(p.metrics[0].unavailable, None);
    let tools = ToolValues {
        duration_ns: 2.5e9,
        ..ToolValues::default()
    };
    let v = evaluate(&p.metrics, &[], &tools, &RunFacts::default(), None);
    assert_eq!(
        v[0].raw,
        Some(2.5e9),
        "duration_time in ns, as perf gives it"
    );
}

#[test]
fn metrics_on_this_machine_use_its_pmus() {
    // Whatever this host is: a metric that reads msr/tsc/ is available exactly when the msr PMU
    // with its tsc event exists here.
    let cpu = arum_events::cpu::CpuIdent::detect().expect("x86 CPUID");
    let table = TableSource::default().for_cpu(&cpu).unwrap();
    let pmus = arum_events::sysfs::Pmus::system();
    let m = Machine::this(&cpu, table, &pmus);
    let facts = RunFacts::this_machine(&cpu, false);
    let p = plan_with(&["msr/tsc/".into()], &[], &m, &facts);
    let has_tsc = pmus.get("msr").is_some_and(|p| p.event("tsc").is_some());
    assert_eq!(p.hardware_off.is_none(), has_tsc, "{:?}", p.hardware_off);
    if has_tsc {
        assert_eq!(p.events[0].event.targets[0].pmu, "msr");
    } else {
        eprintln!("this host has no msr PMU with a tsc event: checked that msr/tsc/ is refused");
    }
    assert!(facts.num_cpus_online >= 1);
}

/// perf stat's words for its common metrics answer on every CPU: `IPC` on Zen 3, Bulldozer and
/// Skylake-SP (whose tables have no metric of that name; Intel's is tma_info_thread_ipc) is
/// insn_per_cycle; `-` and `_` are alike.
#[test]
fn the_names_perf_stat_prints_select_the_common_metrics_everywhere() {
    let src = TableSource::default();
    for (cpu, ipc) in [
        ("AuthenticAMD-25-1", "insn_per_cycle"),
        ("AuthenticAMD-15-2", "insn_per_cycle"),
        ("GenuineIntel-6-55-4", "insn_per_cycle"),
    ] {
        let t = src.for_cpu(&parse_spec(cpu).unwrap()).unwrap();
        let got = select(t, src.common(), &["IPC".into()]).unwrap();
        assert_eq!(got.len(), 1, "{cpu}");
        assert_eq!(got[0].metric.name(), ipc, "{cpu}");
    }
    let zen3 = src
        .for_cpu(&parse_spec("AuthenticAMD-25-1").unwrap())
        .unwrap();
    for (alias, name) in [
        ("GHz", "cycles_frequency"),
        ("cpus-utilized", "CPUs_utilized"),
        ("branch-miss-rate", "branch_miss_rate"),
        ("BRANCH_MISS_RATE", "branch_miss_rate"),
    ] {
        let got = select(zen3, src.common(), &[alias.into()]).unwrap();
        assert_eq!(got[0].metric.name(), name, "{alias}");
    }
}
