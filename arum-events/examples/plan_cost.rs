//! What naming events costs arum at start-up, measured inside one fresh process: from nothing
//! to a placed plan (CPUID, the CPU's table found among the compiled-in ones, names resolved,
//! counters chosen). benchmarks/tables.sh runs it many times; the first call of each process
//! pays the page faults of the table data it touches, as arum's start-up does.
//! Usage: plan_cost [--cpu SPEC] EVENT...

use std::time::Instant;

use arum_events::cpu::{parse_spec, CpuIdent};
use arum_events::plan::plan;
use arum_events::table::TableSource;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let spec = match args.first().map(String::as_str) {
        Some("--cpu") if args.len() >= 2 => {
            let s = args.remove(1);
            args.remove(0);
            Some(s)
        }
        _ => None,
    };
    let t0 = Instant::now();
    let (cpu, pmu) = match &spec {
        Some(s) => (parse_spec(s).expect("a valid --cpu"), None),
        None => {
            let c = CpuIdent::detect().expect("CPUID");
            let p = c.detect_pmu();
            (c, p)
        }
    };
    let needs_table = !args.iter().all(|s| arum_events::resolve::needs_no_table(s));
    let table = if needs_table {
        TableSource::new(None).for_cpu(&cpu).expect("tables")
    } else {
        None
    };
    let p = plan(&args, &cpu, table, pmu);
    let ns = t0.elapsed().as_nanos();
    assert_eq!(p.events.len(), args.len(), "{:?}", p.hardware_off);
    println!("{ns}");
}
