//! `arum.runs/1`: the series as it is, every run's report included.

use crate::series::result::RunSet;

pub fn render(set: &RunSet) -> String {
    let mut s = serde_json::to_string_pretty(set).expect("a run set always serialises");
    s.push('\n');
    s
}
