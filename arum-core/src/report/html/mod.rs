//! `--html FILE`: the report as one self-contained page (style inlined, plots as inline SVG
//! drawn by plotters, nothing fetched when it is viewed), one collapsible section per row of
//! `report::sections`, then the warnings and notes. `series::html` renders a series of runs
//! (arum.runs/1) from the same pieces.

pub mod intervals;
mod notes;
pub mod usage;

use arum_units::duration;

use crate::render::html::page::{self, para};
use crate::report::model::Report;
use crate::report::sections::SECTIONS;

/// The page of one run.
pub fn render(report: &Report) -> String {
    let title = format!("arum: {}", shell_words::join(&report.command.argv));
    let lead = para(&format!(
        "{}, {}.",
        report.exit.describe(),
        duration::format_ns(report.usage.wall_ns as f64)
    ));
    let mut body: String = SECTIONS.iter().filter_map(|s| (s.html)(report)).collect();
    body.push_str(&notes::render(report));
    page::document(&title, &lead, &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::report;

    #[test]
    fn a_bare_run_has_its_usage_and_notes_and_no_facility_sections() {
        let mut r = report(1_500_000_000, 0);
        r.warnings.push("a <warning> & more".into());
        let page = render(&r);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("id=\"usage\""));
        assert!(page.contains("id=\"notes\""));
        assert!(page.contains("1.5 s"), "wall time");
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
