//! The clients section of the HTML page.

use arum_units::quantity::grouped;

use super::model::ClientsReport;
use crate::render::html::page::{facts, section};

pub fn render(c: &ClientsReport) -> String {
    let rows = vec![
        ("requests completed", grouped(c.requests)),
        ("requests per second", format!("{:.1}", c.per_second)),
        ("failed requests", grouped(c.failed)),
        (
            "client copies that reported",
            c.copies_reporting.to_string(),
        ),
    ];
    section("clients", "Clients (arum suite)", &facts(&rows))
}
