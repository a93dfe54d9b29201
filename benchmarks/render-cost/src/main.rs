//! `benchmarks/render-cost`: what laying out the text report costs with arum-grid, and with
//! tabled (the engine arum-grid stands in for), on the report of a real run
//! (`arum-core/tests/fixtures/report.json`), in one run with the two interleaved.
//!
//! The report's tables are those `arum_core::report::text::render` lays out (recorded with
//! `arum_grid::recording`); both engines lay out the same tables to the same text, which is
//! checked before anything is timed. The whole report (its figures formatted, its tables laid
//! out with arum-grid) is timed in the same rounds, so that the share of the layout in a
//! report's cost shows too.
//!
//! Usage: cargo run --release -p render-cost -- [REPORTS] [ROUNDS] [REPORT.json]
//! (defaults: 2000 reports a round, 20 rounds, the fixture).

mod engines;
mod rounds;

use arum_core::report::model::Report;
use arum_units::duration;
use rounds::Contender;

const FIXTURE: &str = include_str!("../../../arum-core/tests/fixtures/report.json");

/// The report of a real run, with counters, intervals, ambient samples and warnings.
fn fixture() -> Result<Report, String> {
    serde_json::from_str(FIXTURE).map_err(|e| format!("the fixture does not read: {e}"))
}

struct Args {
    reports: u32,
    rounds: u32,
    report: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut count = |what: &str, default: u32| {
        match args.next() {
        None => Ok(default),
        Some(a) => match a.parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "{what} is a count above 0, not {a:?}; usage: render-cost [REPORTS] [ROUNDS] [REPORT.json]"
            )),
        },
    }
    };
    let reports = count("REPORTS", 2000)?;
    let rounds = count("ROUNDS", 20)?;
    Ok(Args {
        reports,
        rounds,
        report: args.next(),
    })
}

fn report(path: Option<&str>) -> Result<Report, String> {
    let Some(path) = path else {
        return fixture();
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| {
        format!("{path} is not an arum JSON report ({e}); write one with arum --format json")
    })
}

fn run() -> Result<(), String> {
    let args = args()?;
    let report = report(args.report.as_deref())?;
    let (text, tables) = arum_grid::recording(|| arum_core::report::text::render(&report, true));
    if engines::arum_grid(&tables) != engines::tabled(&tables) {
        return Err("arum-grid and tabled lay out this report's tables differently: \
                    the costs of different texts do not compare (cargo test -p arum-grid shows how)"
            .into());
    }
    let contenders = [
        Contender {
            name: "arum-grid",
            run: Box::new(|| engines::arum_grid(&tables)),
        },
        Contender {
            name: "tabled",
            run: Box::new(|| engines::tabled(&tables)),
        },
        Contender {
            name: "whole report",
            run: Box::new(|| arum_core::report::text::render(&report, true)),
        },
    ];
    let times = rounds::measure(&contenders, args.reports, args.rounds);
    let ratios: Vec<f64> = times[1].iter().zip(&times[0]).map(|(t, g)| t / g).collect();
    let (grid, tabled, whole) = (
        arum_stats::median(&times[0]).unwrap_or(f64::NAN),
        arum_stats::median(&times[1]).unwrap_or(f64::NAN),
        arum_stats::median(&times[2]).unwrap_or(f64::NAN),
    );
    let lowest = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = ratios.iter().copied().fold(0.0, f64::max);
    println!(
        "render-cost: the text report of {} ({} tables, {} lines); {} reports a round, {} rounds, \
         the contenders interleaved; medians of the rounds",
        args.report
            .as_deref()
            .unwrap_or("arum-core/tests/fixtures/report.json"),
        tables.len(),
        text.lines().count(),
        args.reports,
        args.rounds
    );
    for (c, t) in contenders.iter().zip(&times) {
        println!(
            "  {:<13} {} per report",
            c.name,
            duration::format_ns(arum_stats::median(t).unwrap_or(f64::NAN))
        );
    }
    println!(
        "  tabled / arum-grid, the tables' layout: {:.2} (rounds {lowest:.2} to {highest:.2})",
        arum_stats::median(&ratios).unwrap_or(f64::NAN)
    );
    println!(
        "  the whole report with tabled instead (whole - arum-grid + tabled): {}, {:.2} times \
         the report with arum-grid",
        duration::format_ns(whole - grid + tabled),
        (whole - grid + tabled) / whole
    );
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("render-cost: {e}");
        std::process::exit(2);
    }
}
