//! The two layouts of a report's tables: arum-grid's, and tabled's blank style as arum drew its
//! tables with it (the rows in a `Builder`, `Style::blank()`, the right-aligned columns, each
//! line indented and trimmed; arum-grid's unit tests check that both give the same text).

use std::fmt::Write;

use arum_grid::Grid;
use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Modify, Style};

/// One table of the report as the report lays it out: the grid and its indent.
pub type Table = (Grid, String);

/// Lays out every table with arum-grid.
pub fn arum_grid(tables: &[Table]) -> String {
    let mut out = String::new();
    for (grid, indent) in tables {
        grid.write_to(&mut out, indent);
    }
    out
}

/// Lays out every table with tabled.
pub fn tabled(tables: &[Table]) -> String {
    let mut out = String::new();
    for (grid, indent) in tables {
        tabled_one(&mut out, grid, indent);
    }
    out
}

fn tabled_one(out: &mut String, grid: &Grid, indent: &str) {
    if grid.rows().is_empty() {
        return;
    }
    let mut b = Builder::default();
    for row in grid.rows() {
        b.push_record(row.iter().map(String::as_str));
    }
    let mut t = b.build();
    t.with(Style::blank());
    for &range in grid.right_aligned() {
        t.with(Modify::new(Columns::new(range)).with(Alignment::right()));
    }
    for line in t.to_string().lines() {
        let _ = writeln!(out, "{indent}{}", line.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_engines_lay_out_the_fixtures_tables_alike() {
        let report = crate::fixture().expect("the fixture reads");
        let (_, tables) = arum_grid::recording(|| arum_core::report::text::render(&report, true));
        assert!(tables.len() >= 5, "{} tables", tables.len());
        assert_eq!(arum_grid(&tables), tabled(&tables));
    }
}
