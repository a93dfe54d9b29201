//! The text report's building blocks: aligned two-column sections, indented tables, and a
//! command line short enough to read.

use std::fmt::Write;

use arum_grid::Grid;

/// Longest command line the text report prints whole (the JSON always has all of it).
const COMMAND_WIDTH: usize = 200;

pub fn abbreviated(command: &str) -> String {
    if command.len() <= COMMAND_WIDTH {
        return command.to_string();
    }
    let mut cut = COMMAND_WIDTH;
    while !command.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}… ({} bytes in all; the JSON report has the whole command)",
        &command[..cut],
        command.len()
    )
}

pub fn row(name: &str, value: impl ToString) -> [String; 2] {
    [name.to_string(), value.to_string()]
}

/// An aligned two-column block, indented under an optional title.
pub fn section(out: &mut String, title: Option<&str>, rows: &[[String; 2]]) {
    if let Some(t) = title {
        let _ = writeln!(out, "\n{t}");
    }
    let mut table = Grid::new();
    for r in rows {
        table.push_record(r.iter().cloned());
    }
    indented(out, &table);
}

/// Appends a rendered table, each line indented by one space and without trailing blanks.
pub fn indented(out: &mut String, table: &Grid) {
    table.write_to(out, " ");
}

/// Appends a table whose columns after the first are aligned to the right.
pub fn right_aligned(out: &mut String, table: Grid) {
    indented(out, &table.align_right(1..));
}
