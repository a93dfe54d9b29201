//! The usage section of the page, under the run's header: the command, how it ended, the
//! machine and the rank, then the usage figures and arum's own phases.

use crate::render::html::page::{esc, para, section};
use crate::report::model::Report;

/// The usage section, under the run's header: the command, how it ended, the machine, the
/// rank, then the usage figures and arum's own phases.
pub fn render(r: &Report) -> String {
    let m = &r.metadata;
    let mut body = format!(
        "<p>Command: <code>{}</code>, {}.</p>\n",
        esc(&shell_words::join(&r.command.argv)),
        esc(&r.exit.describe())
    );
    body.push_str(&para(&format!(
        "{} on {} ({} {}, {} online CPUs, {} {}), started {}.",
        m.arum_version,
        m.host,
        m.cpu.vendor,
        m.cpu.model_name,
        m.online_cpus,
        m.arch,
        m.kernel_release,
        m.start_time_utc
    )));
    if let Some(rank) = &r.rank {
        body.push_str(&para(&format!(
            "Rank {} of {} ({}).",
            rank.rank,
            rank.size.map_or("?".into(), |s| s.to_string()),
            rank.launcher
        )));
    }
    body.push_str(&crate::facilities::usage::html::render(&r.usage));
    let s = &r.self_timing;
    // Phase 3 (writing the reports) is not shown: the page is written within it, and is the
    // same page `arum html` makes of the saved report afterwards.
    body.push_str(&para(&format!(
        "arum's own phases: set-up {} µs + {} µs, post-processing {} µs + {} µs.",
        s.setup_phase1_us, s.setup_phase2_us, s.post_phase1_us, s.post_phase2_us
    )));
    section("usage", "Resource usage", &body)
}
