//! `--html FILE`: the report as one self-contained page (style inlined, plots as inline SVG
//! drawn by plotters, nothing fetched when it is viewed), one collapsible section per facility.
//!
//! Each section is a module with `render(&Report) -> Option<String>` (None when its facility
//! did not run); adding a section is one module and one line in `SECTIONS`. `runs` renders a
//! series of runs (arum.runs/1) the same way.

mod ambient;
mod counters;
mod functions;
mod intervals;
mod noise;
mod notes;
mod page;
mod plot;
pub mod runs;
pub mod saved;
mod summary;
mod syscalls;
mod tasks;
mod views;

use crate::report::model::Report;

type Section = fn(&Report) -> Option<String>;

/// The sections of a run's page, in order.
const SECTIONS: &[Section] = &[
    summary::render,
    counters::render,
    intervals::render,
    ambient::render,
    functions::render,
    tasks::render,
    syscalls::render,
    views::render,
    noise::render,
    notes::render,
];

/// The page of one run.
pub fn render(report: &Report) -> String {
    let title = format!("arum: {}", shell_words::join(&report.command.argv));
    let lead = page::para(&format!(
        "{}, {}.",
        report.exit.describe(),
        crate::metrics::Unit::Nanoseconds.format(report.usage.wall_ns as f64)
    ));
    let body: String = SECTIONS.iter().filter_map(|s| s(report)).collect();
    page::document(&title, &lead, &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testing::report;

    #[test]
    fn a_bare_run_has_its_usage_and_notes_and_no_facility_sections() {
        let mut r = report(1_500_000_000, 0);
        r.warnings.push("a <warning> & more".into());
        let page = render(&r);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("id=\"usage\""));
        assert!(page.contains("id=\"notes\""));
        assert!(page.contains("1.500 s"), "wall time");
        assert!(
            page.contains("a &lt;warning&gt; &amp; more"),
            "escaped warning"
        );
        for absent in [
            "counters",
            "intervals",
            "ambient",
            "functions",
            "tasks",
            "noise",
            "syscalls",
            "views",
        ] {
            assert!(!page.contains(&format!("id=\"{absent}\"")), "{absent}");
        }
        assert!(!page.contains("<svg"), "no facility, no plot");
    }
}
