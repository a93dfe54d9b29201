//! Reports made up for the tests of the renderers, series, comparisons and merges.

use crate::header::{CommandInfo, ExitInfo, LaunchHow, Metadata};
use crate::report::model::Report;

/// A report of a run of `x` that took `wall_ns` and ended with `status`.
pub fn report(wall_ns: u64, status: i32) -> Report {
    let meta: Metadata = serde_json::from_value(serde_json::json!({
        "arum_version": "test", "host": "h", "kernel_release": "r", "kernel_version": "v",
        "arch": "x86_64",
        "cpu": {"vendor": "AuthenticAMD", "family": 25, "model": 1, "stepping": 1, "model_name": "m"},
        "online_cpus": 2, "start_time_utc": "t", "start_time_unix_ns": 0
    }))
    .expect("metadata fixture");
    let mut r = Report::new(
        meta,
        CommandInfo {
            argv: vec!["x".into()],
            how: LaunchHow::Argv,
            launch: None,
        },
        ExitInfo {
            status,
            code: Some(status),
            signal: None,
            signal_name: None,
            core_dumped: false,
        },
    );
    r.usage.wall_ns = wall_ns;
    r
}

/// The report of a real run (`tests/fixtures/report.json`): counters, `-I` intervals, ambient
/// samples and warnings.
pub fn fixture() -> Report {
    serde_json::from_str(include_str!("../../tests/fixtures/report.json"))
        .expect("the fixture matches the report model")
}
