//! The human report: "ARUM REPORT", the run's header, one aligned section per facility in the
//! order of `report::sections`, then arum's own phases and the warnings.

use std::fmt::Write;

use crate::facilities::tasks::text::TOP_THREADS;
use crate::render::text::{abbreviated, row, section};
use crate::report::model::Report;
use crate::report::sections::{TextOptions, SECTIONS};

/// The self-timing row of phase 3 (see `SelfTiming::post_phase3_us`).
pub const PHASE3_LABEL: &str = "post-processing phase 3 (writing the report)";

pub fn render(r: &Report, show_self_timing: bool) -> String {
    render_with(
        r,
        &TextOptions {
            show_self_timing,
            top_threads: Some(TOP_THREADS),
            cpu_rows: Some(crate::render::fold::CPU_ROWS),
        },
    )
}

pub fn render_with(r: &Report, options: &TextOptions) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "ARUM REPORT");
    section(&mut out, None, &header_rows(r));
    for s in SECTIONS {
        (s.text)(r, options, &mut out);
    }
    if options.show_self_timing {
        let t = &r.self_timing;
        section(
            &mut out,
            Some("arum self-timing (microseconds)"),
            &[
                row(
                    "set-up phase 1 (arguments, data structures)",
                    t.setup_phase1_us,
                ),
                row(
                    "set-up phase 2 (events, counter configuration)",
                    t.setup_phase2_us,
                ),
                row(
                    "post-processing phase 1 (reading counters)",
                    t.post_phase1_us,
                ),
                row(
                    "post-processing phase 2 (resource usage, report)",
                    t.post_phase2_us,
                ),
            ]
            .into_iter()
            .chain(t.post_phase3_us.map(|us| row(PHASE3_LABEL, us)))
            .chain(t.samplers.iter().map(sampler_row))
            .collect::<Vec<_>>(),
        );
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

/// A sampler thread's samples and CPU time, in the self-timing's microseconds.
fn sampler_row(s: &crate::header::SamplerCost) -> [String; 2] {
    let spaced = s.stretched_to_ns.map_or(String::new(), |ns| {
        format!(
            ", up to {} apart ({}% CPU budget)",
            arum_units::duration::format_ns(ns as f64),
            s.budget_percent.max(1)
        )
    });
    row(
        &format!("sampler {} (samples, CPU)", s.name),
        format!("{}, {}{spaced}", s.ticks, s.cpu_ns / 1000),
    )
}

fn header_rows(r: &Report) -> Vec<[String; 2]> {
    let m = &r.metadata;
    let mut rows = vec![
        row("command", abbreviated(&shell_words::join(&r.command.argv))),
        row(
            "exit status",
            format!("{} ({})", r.exit.status, r.exit.describe()),
        ),
        row("started (UTC)", &m.start_time_utc),
        row(
            "host",
            format!("{} ({} {})", m.host, m.arch, m.kernel_release),
        ),
        row(
            "cpu",
            format!(
                "{} [{}, stepping {}], {} online",
                m.cpu.model_name,
                m.cpu.key(),
                m.cpu.stepping,
                m.online_cpus
            ),
        ),
    ];
    if let Some(rank) = &r.rank {
        let size = rank.size.map_or(String::new(), |n| format!(" of {n}"));
        let job = rank
            .job_id
            .as_ref()
            .map_or(String::new(), |j| format!(", job {j}"));
        rows.push(row(
            "rank",
            format!("{}{size} ({}{job})", rank.rank, rank.launcher),
        ));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facilities::functions::model::FunctionsReport;
    use crate::facilities::syscalls::model::SyscallsReport;
    use crate::facilities::tasks::model::{TaskUsage, TasksReport, ThreadRecord};
    use crate::header::RankInfo;
    use crate::render::testing::{has_line, line, line_number};
    use crate::report::testing::{fixture, report};

    /// The fixture with every section filled: small ones where the fixture has none.
    fn every_section() -> Report {
        let mut r = fixture();
        r.clients = Some(
            crate::facilities::clients::model::ClientsReport::from_counts("10 0\n", 1_000_000_000),
        );
        r.functions = Some(FunctionsReport {
            off_reason: Some("no uprobe PMU".into()),
            probe_cost: Default::default(),
            policy: Default::default(),
            functions: Vec::new(),
            records: Default::default(),
            perturbation: Default::default(),
            interval_ms: None,
            intervals: Vec::new(),
            estimate_axis: Default::default(),
            engine: None,
            engine_note: None,
            classes: Vec::new(),
            first_call_ns: None,
            first_call_spread_ns: None,
            unrecorded: 0,
        });
        r.noise = Some(arum_hourglass::NoiseReport {
            gap_ns: 1000.0,
            tsc_hz: 1e9,
            kernel_hz: None,
            cpus: Vec::new(),
            failed: Vec::new(),
            lines: vec!["cpu 0: quiet".into()],
        });
        r.tasks = Some(TasksReport::default());
        r.syscalls = Some(SyscallsReport {
            off_reason: Some("no permission".into()),
            ..SyscallsReport::default()
        });
        r.views = Some(crate::facilities::views::testing::views());
        r
    }

    /// The first line of section `s` rendered by itself.
    fn title(s: &crate::report::sections::Section, r: &Report, o: &TextOptions) -> String {
        let mut out = String::new();
        (s.text)(r, o, &mut out);
        let first = out.lines().find(|l| !l.trim().is_empty());
        first
            .unwrap_or_else(|| panic!("{} wrote nothing", s.key))
            .trim()
            .to_string()
    }

    #[test]
    fn sections_come_in_the_order_of_the_table_after_the_header() {
        let r = every_section();
        let options = TextOptions {
            show_self_timing: false,
            top_threads: Some(TOP_THREADS),
            cpu_rows: Some(crate::render::fold::CPU_ROWS),
        };
        let out = render_with(&r, &options);
        assert!(out.starts_with("ARUM REPORT\n"), "{out}");
        let mut previous = line_number(&out, "cpu ");
        for s in SECTIONS {
            let at = line_number(&out, &title(s, &r, &options));
            assert!(at > previous, "section {} out of order:\n{out}", s.key);
            previous = at;
        }
        assert!(!has_line(&out, "arum self-timing"), "{out}");
    }

    #[test]
    fn a_run_without_optional_sections_has_usage_only() {
        let out = render(&report(1_000_000, 0), false);
        assert!(has_line(&out, "Resource usage"), "{out}");
        for title in [
            "Performance counters",
            "Ambient",
            "Functions",
            "Per-task",
            "System",
        ] {
            assert!(!has_line(&out, title), "{title} in:\n{out}");
        }
    }

    #[test]
    fn the_header_names_the_command_the_exit_the_host_and_the_rank() {
        let mut r = report(1_000_000, 3);
        r.command.argv = vec!["sh".into(), "-c".into(), "exit 3".into()];
        r.rank = Some(RankInfo {
            rank: 2,
            size: Some(4),
            local_rank: None,
            job_id: Some("81".into()),
            launcher: "slurm".into(),
        });
        let out = render(&r, false);
        assert_eq!(line(&out, "command"), "command sh -c 'exit 3'");
        assert_eq!(
            line(&out, "exit status"),
            "exit status 3 (exited with status 3)"
        );
        assert_eq!(line(&out, "host"), "host h (x86_64 r)");
        assert_eq!(
            line(&out, "cpu"),
            "cpu m [AuthenticAMD-25-1, stepping 1], 2 online"
        );
        assert_eq!(line(&out, "rank"), "rank 2 of 4 (slurm, job 81)");
        assert!(line_number(&out, "rank") < line_number(&out, "Resource usage"));
    }

    #[test]
    fn self_timing_on_request_and_warnings_last() {
        let mut r = fixture();
        r.warnings = vec!["the clock jumped".into()];
        let out = render(&r, true);
        assert_eq!(
            line(&out, "set-up phase 1"),
            "set-up phase 1 (arguments, data structures) 1834"
        );
        assert!(line_number(&out, "arum self-timing") > line_number(&out, "Ambient"));
        assert_eq!(out.lines().last(), Some("warning: the clock jumped"));
    }

    #[test]
    fn per_task_lists_are_cut_to_the_top_unless_every_thread_is_asked_for() {
        let mut r = report(1_000_000, 0);
        let threads = TOP_THREADS as u32 + 2;
        r.tasks = Some(TasksReport {
            threads: (1..=threads)
                .map(|tid| ThreadRecord {
                    tid,
                    usage: TaskUsage {
                        cpu_ns: u64::from(tid) * 1000,
                        ..TaskUsage::default()
                    },
                    ..ThreadRecord::default()
                })
                .collect(),
            ..TasksReport::default()
        });
        let out = render(&r, false);
        assert_eq!(
            line(&out, "Threads by CPU time"),
            format!(
                "Threads by CPU time (top {TOP_THREADS} of {threads}; --per-task=all for every one)"
            )
        );
        let every = TextOptions {
            show_self_timing: false,
            top_threads: None,
            cpu_rows: None,
        };
        let out = render_with(&r, &every);
        assert_eq!(
            line(&out, "Threads by CPU time"),
            format!("Threads by CPU time (all {threads})")
        );
    }
}
