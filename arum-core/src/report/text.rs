//! The human report: "ARUM REPORT", the run's header, one aligned section per facility in the
//! order of `report::sections`, then arum's own phases and the warnings.

use std::fmt::Write;

use crate::facilities::tasks::text::TOP_THREADS;
use crate::render::text::{abbreviated, row, section};
use crate::report::model::Report;
use crate::report::sections::{TextOptions, SECTIONS};

pub fn render(r: &Report, show_self_timing: bool) -> String {
    render_with(
        r,
        &TextOptions {
            show_self_timing,
            top_threads: Some(TOP_THREADS),
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
            ],
        );
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
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
