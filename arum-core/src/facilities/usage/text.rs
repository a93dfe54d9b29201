//! The text of the usage section: times, memory, faults, switches, I/O.

use arum_units::{duration, percent, size};

use super::model::{PeakMethod, Usage};
use crate::render::text::{row, section};

/// The usage section: one aligned row per figure.
pub fn render(out: &mut String, u: &Usage) {
    section(out, Some("Resource usage"), &rows(u));
}

fn rows(u: &Usage) -> Vec<[String; 2]> {
    let mut rows = vec![
        row("user time", duration::format_ns(u.user_ns as f64)),
        row("system time", duration::format_ns(u.system_ns as f64)),
        row(
            "application elapsed time",
            duration::format_ns(u.wall_ns as f64),
        ),
        row(
            "cpu utilisation",
            percent::format_fraction(u.cpu_utilisation),
        ),
    ];
    if let Some(p) = &u.peak_memory {
        rows.push(row(
            "peak resident memory",
            format!(
                "{} ({})",
                size::format(p.peak_rss_bytes as f64),
                p.method.describe()
            ),
        ));
        if p.method != PeakMethod::Rusage {
            rows.push(row(
                "peak threads / processes",
                format!("{} / {}", p.peak_threads, p.peak_processes),
            ));
        }
    }
    rows.extend([
        row(
            "ru_maxrss (largest process)",
            size::format(u.rusage_maxrss_bytes as f64),
        ),
        row("minor page faults", u.minor_faults),
        row("major page faults", u.major_faults),
        row("voluntary context switches", u.voluntary_context_switches),
        row(
            "involuntary context switches",
            u.involuntary_context_switches,
        ),
        row("block input operations", u.block_input_ops),
        row("block output operations", u.block_output_ops),
        row("signals received", u.signals_received),
    ]);
    for e in &u.estimates {
        rows.push(row(&e.label, e.describe()));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::testing::{has_line, line, line_number};
    use crate::report::testing::fixture;

    fn text(u: &Usage) -> String {
        let mut out = String::new();
        render(&mut out, u);
        out
    }

    #[test]
    fn times_and_sizes_are_in_units_a_reader_reads() {
        let out = text(&fixture().usage);
        assert!(out.starts_with("\nResource usage\n"), "{out}");
        assert_eq!(line(&out, "user time"), "user time 1.569 ms");
        assert_eq!(line(&out, "system time"), "system time 0 ns");
        assert_eq!(
            line(&out, "application elapsed"),
            "application elapsed time 254.8 ms"
        );
        assert_eq!(line(&out, "cpu utilisation"), "cpu utilisation 0.6157%");
        assert_eq!(
            line(&out, "peak resident"),
            "peak resident memory 1.66 MiB (sampled proportional set size of the tree)"
        );
        assert_eq!(
            line(&out, "ru_maxrss"),
            "ru_maxrss (largest process) 3.133 MiB"
        );
        assert_eq!(line(&out, "minor page faults"), "minor page faults 108");
    }

    #[test]
    fn the_peak_rows_need_a_peak_and_estimates_follow_the_counts() {
        let mut u = fixture().usage;
        u.peak_memory = None;
        u.estimates = vec![arum_calibrate::saved::Estimate {
            event: "context_switches".into(),
            label: "estimated time in context switches".into(),
            count: 5,
            cost_ns: 2000.0,
            estimated_ns: 10_000.0,
            estimated_low_ns: 9000.0,
            estimated_high_ns: 11_000.0,
            source: "tasks.switch".into(),
        }];
        let out = text(&u);
        assert!(!has_line(&out, "peak resident") && !has_line(&out, "peak threads"));
        let estimate = line(&out, "estimated time in context switches");
        assert!(
            estimate.contains("in 5 context switches") && estimate.contains("from tasks.switch"),
            "{estimate}"
        );
        assert!(
            line_number(&out, "estimated time") > line_number(&out, "signals received"),
            "{out}"
        );
    }
}
