//! The report's renderings of one fixed run (`fixtures/report.json`, a real run with counters,
//! `-I` intervals, ambient samples and warnings): the JSON layout is a golden file, the text and
//! CSV renderings are snapshots, so any change to a rendering shows in review.

use arum_core::report::model::Report;
use arum_core::report::{render, Format};

const FIXTURE: &str = include_str!("fixtures/report.json");

fn fixture() -> Report {
    serde_json::from_str(FIXTURE).expect("the fixture matches the report model")
}

#[test]
fn json_layout_is_unchanged_byte_for_byte() {
    // The model must read the fixture and write it back identically: no field renamed, moved,
    // retyped or dropped, numbers in the same form.
    let again = render(&fixture(), Format::Json, false);
    if let Some((n, (a, b))) = FIXTURE
        .lines()
        .zip(again.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        panic!("line {}: fixture {a:?}, rendered {b:?}", n + 1);
    }
    assert_eq!(
        FIXTURE.lines().count(),
        again.lines().count(),
        "line counts"
    );
}

#[test]
fn text_report() {
    insta::assert_snapshot!(render(&fixture(), Format::Text, true));
}

#[test]
fn csv_report() {
    insta::assert_snapshot!(render(&fixture(), Format::Csv, false));
}
