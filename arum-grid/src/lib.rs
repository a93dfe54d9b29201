//! The column layout of every table arum prints: cells padded to their column's display width,
//! one space either side, a space between columns, no borders; chosen columns aligned right; a
//! cell may hold several lines. This is the layout `tabled` draws with `Style::blank()` (the
//! unit tests check that both give the same text, byte for byte), drawn here directly because a
//! report is written on every run and arum's fixed cost per run is what it is compared on
//! (`benchmarks/render-cost` prints the two engines' cost side by side).

#![forbid(unsafe_code)]

use std::ops::{Bound, RangeBounds};

use unicode_width::UnicodeWidthStr;

/// Rows of cells; the first row is usually the header (it is laid out like any other).
#[derive(Debug, Default, Clone)]
pub struct Grid {
    rows: Vec<Vec<String>>,
    right: Vec<(Bound<usize>, Bound<usize>)>,
}

impl Grid {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push_record<I, S>(&mut self, row: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rows.push(row.into_iter().map(Into::into).collect());
    }

    pub fn count_records(&self) -> usize {
        self.rows.len()
    }

    /// Aligns the columns in `columns` to the right (the others stay left-aligned).
    pub fn align_right(mut self, columns: impl RangeBounds<usize>) -> Self {
        self.right
            .push((columns.start_bound().cloned(), columns.end_bound().cloned()));
        self
    }

    fn is_right(&self, column: usize) -> bool {
        self.right.iter().any(|r| r.contains(&column))
    }

    /// The rows, as pushed.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// The ranges of columns aligned to the right, as given to [`Grid::align_right`].
    pub fn right_aligned(&self) -> &[(Bound<usize>, Bound<usize>)] {
        &self.right
    }

    /// Appends the grid to `out`, each line after `indent` and without trailing blanks.
    pub fn write_to(&self, out: &mut String, indent: &str) {
        #[cfg(feature = "recording")]
        RECORDED.with(|r| {
            if let Some(grids) = r.borrow_mut().as_mut() {
                grids.push((self.clone(), indent.to_string()));
            }
        });
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return;
        }
        // Each cell's width (its widest line) and number of lines, measured once.
        let measured: Vec<Vec<(usize, usize)>> = self
            .rows
            .iter()
            .map(|row| row.iter().map(|cell| measure(cell)).collect())
            .collect();
        let mut widths = vec![0; columns];
        for row in &measured {
            for (w, &(cell_width, _)) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell_width);
            }
        }
        let right: Vec<bool> = (0..columns).map(|c| self.is_right(c)).collect();
        let mut line = String::new();
        for (row, sizes) in self.rows.iter().zip(&measured) {
            let height = sizes.iter().map(|s| s.1).max().unwrap_or(1);
            for i in 0..height {
                line.clear();
                for (c, &width) in widths.iter().enumerate() {
                    let (cell, (block, lines)) = match row.get(c) {
                        Some(cell) => (cell.as_str(), sizes[c]),
                        None => ("", (0, 1)),
                    };
                    let (text, text_width) = match (lines, i) {
                        (1, 0) => (cell, block),
                        (1, _) => ("", 0),
                        _ => {
                            let text = cell.split('\n').nth(i).unwrap_or("");
                            (text, line_width(text))
                        }
                    };
                    line.push_str(if c == 0 { " " } else { "  " });
                    if right[c] {
                        // A cell's lines move as a block, left-aligned within it.
                        push_spaces(&mut line, width - block);
                        line.push_str(text);
                        push_spaces(&mut line, block - text_width);
                    } else {
                        line.push_str(text);
                        if c + 1 < columns {
                            push_spaces(&mut line, width - text_width);
                        }
                    }
                    line.push(' ');
                }
                out.push_str(indent);
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
    }
}

#[cfg(feature = "recording")]
thread_local! {
    /// The grids laid out on this thread while [`recording`] runs.
    static RECORDED: std::cell::RefCell<Option<Vec<(Grid, String)>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f`, and returns what it returned with every grid it laid out on this thread, each with
/// its indent, in order: the tables a real rendering draws, to lay out again with another engine
/// (`benchmarks/render-cost` measures the report's tables so). With the feature `recording`
/// only: arum itself does not pay for it.
#[cfg(feature = "recording")]
pub fn recording<R>(f: impl FnOnce() -> R) -> (R, Vec<(Grid, String)>) {
    let outer = RECORDED.with(|r| r.replace(Some(Vec::new())));
    let result = f();
    let grids = RECORDED.with(|r| r.replace(outer)).unwrap_or_default();
    (result, grids)
}

/// A cell's width (its widest line) and its number of lines.
fn measure(cell: &str) -> (usize, usize) {
    if !cell.contains('\n') {
        return (line_width(cell), 1);
    }
    cell.split('\n')
        .fold((0, 0), |(w, n), l| (w.max(line_width(l)), n + 1))
}

/// The display width of one line: its length when it is printable ASCII (nearly always).
fn line_width(line: &str) -> usize {
    if line.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        line.len()
    } else {
        line.width()
    }
}

fn push_spaces(s: &mut String, mut n: usize) {
    const SPACES: &str = "                                                                ";
    while n > 0 {
        let k = n.min(SPACES.len());
        s.push_str(&SPACES[..k]);
        n -= k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;
    use tabled::builder::Builder;
    use tabled::settings::object::Columns;
    use tabled::settings::{Alignment, Modify, Style};

    /// What the report printed when tabled drew it: blank style, the right-aligned columns, each
    /// line indented and trimmed.
    fn tabled(rows: &[Vec<&str>], right: std::ops::Range<usize>, indent: &str) -> String {
        let mut b = Builder::default();
        for r in rows {
            b.push_record(r.iter().copied());
        }
        let mut t = b.build();
        t.with(Style::blank())
            .with(Modify::new(Columns::new(right)).with(Alignment::right()));
        let mut out = String::new();
        for line in t.to_string().lines() {
            let _ = writeln!(out, "{indent}{}", line.trim_end());
        }
        out
    }

    fn grid(rows: &[Vec<&str>], right: std::ops::Range<usize>, indent: &str) -> String {
        let mut g = Grid::new();
        for r in rows {
            g.push_record(r.iter().copied());
        }
        let mut out = String::new();
        g.align_right(right).write_to(&mut out, indent);
        out
    }

    #[test]
    fn lays_out_as_tabled_blank_style_does() {
        let cases: Vec<(Vec<Vec<&str>>, std::ops::Range<usize>)> = vec![
            (
                vec![
                    vec!["Event", "CPU", "Count", "% running"],
                    vec!["task-clock", "0", "808,635", "100.0"],
                    vec!["page-faults", "1", "74", "100.0"],
                ],
                1..3,
            ),
            (
                vec![
                    vec!["command", "sleep 0.25"],
                    vec!["started (UTC)", "2026-11-22T07:53:04Z"],
                ],
                2..2,
            ),
            // Ragged rows, empty cells, a trailing empty column, wide and combining characters.
            (
                vec![
                    vec!["Event", "Total", "% running", "Encoding", ""],
                    vec!["µs per call", "not supported", "", "table (k~p)"],
                    vec!["日本語", "1", "2", "", "note"],
                    vec!["e\u{301}", "12", ""],
                ],
                1..3,
            ),
            // Cells of several lines.
            (
                vec![
                    vec!["name", "value"],
                    vec!["two\nlines", "x"],
                    vec!["a", "1\n22\n333"],
                ],
                1..2,
            ),
            (vec![vec!["only"]], 0..1),
            (vec![], 0..0),
        ];
        for (rows, right) in cases {
            for indent in [" ", "  "] {
                assert_eq!(
                    grid(&rows, right.clone(), indent),
                    tabled(&rows, right.clone(), indent),
                    "rows {rows:?}, right-aligned {right:?}"
                );
            }
        }
    }

    #[test]
    #[cfg(feature = "recording")]
    fn recording_returns_the_grids_laid_out_in_order() {
        let draw = |cell: &str, indent: &str| {
            let mut out = String::new();
            let mut g = Grid::new();
            g.push_record([cell, "1"]);
            g.align_right(1..).write_to(&mut out, indent);
            out
        };
        let (text, outer) = recording(|| {
            let a = draw("a", " ");
            // A recording inside another keeps its own grids; the outer one goes on after it.
            let (b, inner) = recording(|| draw("b", " "));
            assert_eq!(inner.len(), 1);
            assert_eq!(inner[0].0.rows()[0][0], "b");
            a + &b + &draw("c", "  ")
        });
        assert_eq!(text, "  a   1\n  b   1\n   c   1\n");
        let cells: Vec<(&str, &str)> = outer
            .iter()
            .map(|(g, indent)| (g.rows()[0][0].as_str(), indent.as_str()))
            .collect();
        assert_eq!(cells, [("a", " "), ("c", "  ")]);
        assert_eq!(
            outer[0].0.right_aligned(),
            &[(Bound::Included(1), Bound::Unbounded)]
        );
    }

    proptest::proptest! {
        #[test]
        fn any_table_lays_out_as_tabled_does(
            rows in proptest::collection::vec(
                proptest::collection::vec("[a-z0-9 µ日.,%()\n-]{0,8}", 0..5),
                0..6,
            ),
            from in 0usize..5,
            len in 0usize..5,
        ) {
            let rows: Vec<Vec<&str>> =
                rows.iter().map(|r| r.iter().map(String::as_str).collect()).collect();
            let right = from..from + len;
            proptest::prop_assert_eq!(
                grid(&rows, right.clone(), " "),
                tabled(&rows, right, " ")
            );
        }
    }
}
