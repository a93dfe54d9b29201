//! JSON rendering: the model as it is (serde_json writes numbers in the C locale).

use crate::report::model::Report;

pub fn render(report: &Report) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("the report model always serialises");
    s.push('\n');
    s
}
