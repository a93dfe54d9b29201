//! A report as the store keeps it: what identifies the run, its metrics by name, its JSON.

use arum_history::{Commit, Machine, Record};

use crate::report::metrics;
use crate::report::model::Report;

/// Where one report sits: its command's label in a series, labels, commit, index, status.
pub struct Context<'a> {
    pub command: &'a str,
    pub labels: &'a [(String, String)],
    pub commit: Option<&'a Commit>,
    pub run_index: u64,
    pub exit_status: i32,
}

pub fn of_report(report: &Report, c: &Context<'_>) -> Record {
    let m = &report.metadata;
    Record {
        started_unix_ns: m.start_time_unix_ns,
        machine: Machine {
            host: m.host.clone(),
            cpu_key: m.cpu.key(),
            cpu_name: m.cpu.model_name.clone(),
            kernel: m.kernel_release.clone(),
            cpus: u32::try_from(m.online_cpus).unwrap_or(u32::MAX),
        },
        arum_version: m.arum_version.clone(),
        command: c.command.to_string(),
        labels: c.labels.to_vec(),
        commit: c.commit.cloned(),
        run_index: c.run_index,
        exit_status: c.exit_status,
        metrics: metrics::of_report(report)
            .into_iter()
            .map(|m| (m.name, m.value))
            .collect(),
        report: crate::report::json::render(report),
    }
}
