//! The clients section for people.

use arum_units::quantity::grouped;

use super::model::ClientsReport;
use crate::render::text::{row, section};

pub fn render(out: &mut String, c: &ClientsReport) {
    let mut rows = vec![
        row("requests completed", grouped(c.requests)),
        row("requests per second", format!("{:.1}", c.per_second)),
        row("failed requests", grouped(c.failed)),
        row(
            "client copies that reported",
            c.copies_reporting.to_string(),
        ),
    ];
    if !c.unreadable.is_empty() {
        rows.push(row("unreadable count lines", c.unreadable.join(" | ")));
    }
    section(out, Some("Clients (arum suite)"), &rows);
}
