//! The text rendering: a header on the machine and the clock, one table per group (median, its
//! 90% confidence interval, mean, sd, min, max, samples, cycles, a one-line histogram, and the
//! prediction when one was given), then cache levels, the file cache, peers and notes; with
//! `--histograms`, every histogram in full.

use std::fmt::Write;
use std::time::Duration;

use arum_grid::Grid;
use arum_units::{duration, percent, quantity, rate, size};

use super::{figure, Figures};
use crate::model::{Calibration, Measurement, Status};
use crate::stats::histogram::Histogram;
use crate::stats::repeat::Stop;
use crate::stats::Summary;
use crate::suite;

pub fn render(cal: &Calibration, full_histograms: bool) -> String {
    let mut out = String::new();
    header(&mut out, cal);
    let predictions = cal.measurements.iter().any(|m| m.prediction.is_some());
    for g in suite::groups() {
        let ms: Vec<&Measurement> = cal
            .measurements
            .iter()
            .filter(|m| m.group == g.name)
            .collect();
        if ms.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{}", g.title.to_uppercase());
        table(&mut out, cal, &ms, predictions);
        match g.name {
            "memory" => caches(&mut out, cal),
            "files" => files(&mut out, cal),
            "network" => network(&mut out, cal),
            _ => {}
        }
    }
    peers(&mut out, cal);
    if !cal.notes.is_empty() {
        let _ = writeln!(out, "\nNOTES");
        for n in &cal.notes {
            let _ = writeln!(out, " - {n}");
        }
    }
    if full_histograms {
        histograms(&mut out, cal);
    }
    out
}

fn header(out: &mut String, cal: &Calibration) {
    let m = &cal.machine;
    let _ = writeln!(out, "ARUM CALIBRATION ({})", cal.schema);
    let _ = writeln!(
        out,
        "{} | {} ({} family {} model {:#x} stepping {}) | Linux {} | {} of {} CPUs | {}",
        m.host,
        m.cpu_model_name,
        m.cpu_vendor,
        m.cpu_family,
        m.cpu_model,
        m.cpu_stepping,
        m.kernel_release,
        m.allowed_cpus.len(),
        m.online_cpus,
        size::format(m.memory_total_bytes as f64)
    );
    let t = &m.tsc;
    let _ = writeln!(
        out,
        "TSC {:.3} GHz ({}, calibrated against CLOCK_MONOTONIC, spread {}); fenced timer pair \
         {} cycles, subtracted from single samples; batch loop {} cycles per iteration",
        t.hz / 1e9,
        if t.invariant {
            "invariant"
        } else {
            "NOT invariant"
        },
        percent::format_fraction(t.spread),
        quantity::format(t.timer_overhead_ticks.round()),
        quantity::format(t.loop_overhead_ticks)
    );
    let r = &cal.run;
    let _ = writeln!(
        out,
        "Run: {}{}; each figure repeated until the 90% CI of its median is within ±{} or {} \
         passed (* where the limit came first){}",
        duration::format(Duration::from_millis(r.elapsed_ms)),
        if r.quick { ", --quick" } else { "" },
        percent::format_fraction(r.ci_target),
        duration::format(Duration::from_millis(r.time_limit_ms)),
        r.other_load
            .map(|l| format!(
                "; other processes used {} of the CPUs meanwhile",
                percent::format_fraction(l)
            ))
            .unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "Cycles are TSC cycles; times are net of the timer's own cost."
    );
}

const BARS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The histogram in one line of block characters, bins scaled to the fullest.
pub fn sparkline(h: &Histogram) -> String {
    let max = h.counts.iter().copied().max().unwrap_or(0).max(1);
    h.counts
        .iter()
        .map(|&c| {
            if c == 0 {
                ' '
            } else {
                BARS[(1 + (c * 7 / max) as usize).min(8)]
            }
        })
        .collect()
}

fn table(out: &mut String, cal: &Calibration, ms: &[&Measurement], predictions: bool) {
    let mut grid = Grid::new();
    let mut head = vec![
        "measurement",
        "median",
        "90% CI",
        "mean",
        "sd",
        "min",
        "max",
        "n",
        "cycles",
        "histogram",
    ];
    if predictions {
        head.extend(["predicted", "meas/pred"]);
    }
    grid.push_record(head);
    let mut skipped = Vec::new();
    for m in ms {
        let Some(s) = &m.summary else {
            if let Status::Skipped { reason } = &m.status {
                skipped.push((m.name.clone(), reason.clone()));
            }
            continue;
        };
        grid.push_record(row(m, s, predictions));
    }
    grid.align_right(1..9).write_to(out, " ");
    for (name, reason) in skipped {
        let _ = writeln!(out, "  {name}: skipped: {reason}");
    }
    notes(out, ms);
    let _ = cal;
}

/// A measurement's cells: its figures, its samples, cycles and histogram, and its prediction.
fn row(m: &Measurement, s: &Summary, predictions: bool) -> Vec<String> {
    let figures = Figures::like(m.unit, s.median);
    let f = |v: f64| figures.format(v);
    let star = if m.stop == Some(Stop::Converged) {
        ""
    } else {
        "*"
    };
    let mut row = vec![
        m.name.clone(),
        format!("{}{star}", f(s.median)),
        format!("{} - {}", f(s.ci90_low), f(s.ci90_high)),
        f(s.mean),
        f(s.sd),
        f(s.min),
        f(s.max),
        format!(
            "{}{}",
            s.n,
            if m.per_sample > 1 {
                format!("x{}", m.per_sample)
            } else {
                String::new()
            }
        ),
        m.cycles
            .as_ref()
            .map(|c| quantity::format(c.median.round()))
            .unwrap_or_default(),
        m.histogram.as_ref().map(sparkline).unwrap_or_default(),
    ];
    if predictions {
        match &m.prediction {
            Some(p) => {
                row.push(f(p.value));
                row.push(p.ratio.map(quantity::format).unwrap_or_default());
            }
            None => row.extend([String::new(), String::new()]),
        }
    }
    row
}

/// The measurements' notes (but the server's), and how their predictions were made.
fn notes(out: &mut String, ms: &[&Measurement]) {
    for m in ms {
        for n in &m.notes {
            if !n.starts_with("server ") {
                let _ = writeln!(out, "  {}: {n}", m.name);
            }
        }
        if let Some(p) = &m.prediction {
            if let (Some(h), Some(sw)) = (p.hardware, p.software) {
                let figures = Figures::like(m.unit, p.value);
                let _ = writeln!(
                    out,
                    "  {}: predicted {} hardware + {} software{}",
                    m.name,
                    figures.format(h),
                    figures.format(sw),
                    p.note
                        .as_ref()
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default()
                );
            } else if let Some(n) = &p.note {
                let _ = writeln!(out, "  {}: prediction: {n}", m.name);
            }
        }
    }
}

fn caches(out: &mut String, cal: &Calibration) {
    let Some(c) = &cal.findings.caches else {
        return;
    };
    let _ = writeln!(
        out,
        "\n Cache levels from the latency curve ({}; transparent huge pages: {})",
        if c.huge_pages {
            "buffer in huge pages"
        } else {
            "4 KiB pages: TLB misses add to large sizes"
        },
        c.thp_mode
    );
    let mut grid = Grid::new();
    grid.push_record([
        "level",
        "reported (sysfs)",
        "reported (CPUID)",
        "detected",
        "detected/reported",
        "plateau -> next plateau",
    ]);
    for (i, cmp) in c.comparison.iter().enumerate() {
        let find = |v: &[crate::model::findings::CacheLevel]| {
            v.iter()
                .find(|l| l.level == cmp.level && l.holds_data())
                .map(|l| size::format(l.size_bytes as f64))
                .unwrap_or_else(|| "-".into())
        };
        let d = c.detected.get(i);
        grid.push_record([
            format!("L{}", cmp.level),
            find(&c.reported.sysfs),
            find(&c.reported.cpuid),
            cmp.detected_bytes
                .map(|b| size::format(b as f64))
                .unwrap_or_else(|| "not seen".into()),
            cmp.ratio.map(quantity::format).unwrap_or_default(),
            d.filter(|_| cmp.detected_bytes.is_some())
                .map(|d| {
                    format!(
                        "{} -> {}",
                        duration::format_ns(d.latency_ns),
                        duration::format_ns(d.next_latency_ns)
                    )
                })
                .unwrap_or_default(),
        ]);
    }
    grid.write_to(out, " ");
    for n in &c.notes {
        let _ = writeln!(out, "  {n}");
    }
}

fn files(out: &mut String, cal: &Calibration) {
    if let Some(f) = &cal.findings.files {
        let _ = writeln!(
            out,
            "\n Files in {} ({}){}",
            f.dir,
            f.fs_type,
            f.direct_unsupported
                .as_ref()
                .map(|d| format!("; {d}"))
                .unwrap_or_default()
        );
    }
    if let Some(fc) = &cal.findings.file_cache {
        let _ = writeln!(out, " File cache: {}", fc.conclusion);
        if let Some(u) = fc.uncached_bytes_per_s {
            let _ = writeln!(
                out,
                "  (reads from the device: {})",
                rate::format_bytes_per_s(u)
            );
        }
    }
}

fn network(out: &mut String, cal: &Calibration) {
    let Some(n) = &cal.findings.network else {
        return;
    };
    if let Some(c) = &n.cpus {
        let _ = writeln!(out, "\n {c}");
    }
    if let Some(v) = &n.veth {
        let _ = writeln!(out, " veth pair: {v} (removed)");
    }
    if let Some(e) = &n.netem {
        let _ = writeln!(out, " netem: {e}");
    }
}

fn peers(out: &mut String, cal: &Calibration) {
    if cal.peers.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nPEERS (each peer ran, then ours again right after it)"
    );
    let mut grid = Grid::new();
    grid.push_record([
        "compared",
        "ours",
        "peer (ran)",
        "peer printed",
        "peer's CPU",
        "ours/peer",
        "within 2x",
        "peer command",
    ]);
    for c in &cal.peers {
        let f = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| figure(c.unit, v));
        grid.push_record([
            c.what.clone(),
            f(c.ours),
            f(c.peer),
            f(c.peer_printed),
            c.peer_cpu_share
                .map(percent::format_fraction)
                .unwrap_or_else(|| "-".into()),
            c.ratio.map_or_else(|| "-".into(), quantity::format),
            match c.within_factor_2 {
                Some(true) => "yes".into(),
                Some(false) => "NO".into(),
                None => "-".into(),
            },
            c.peer_command.clone(),
        ]);
    }
    grid.align_right(1..7).write_to(out, " ");
    for c in &cal.peers {
        let lead = if c.within_factor_2 == Some(false) {
            "differs by more than 2x: "
        } else {
            ""
        };
        let _ = writeln!(out, "  {}: {lead}{}", c.what, c.explanation);
        if let Some(m) = &c.missing {
            let _ = writeln!(out, "  {}: no comparison: {m}", c.what);
        }
    }
}

fn histograms(out: &mut String, cal: &Calibration) {
    let _ = writeln!(
        out,
        "\nHISTOGRAMS (bins from the minimum to the 99th percentile)"
    );
    for m in &cal.measurements {
        let (Some(h), Some(s)) = (&m.histogram, &m.summary) else {
            continue;
        };
        let _ = writeln!(
            out,
            "\n {} ({}), n = {}, {} above the last bin",
            m.name, m.title, s.n, h.above
        );
        let figures = Figures::like(m.unit, s.median);
        let max = h.counts.iter().copied().max().unwrap_or(1).max(1);
        for (i, &c) in h.counts.iter().enumerate() {
            let bar = "#".repeat(((c * 50).div_ceil(max)) as usize);
            let _ = writeln!(out, "  {:>12} | {bar:<50} {c}", figures.format(h.edge(i)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{fixture, Unit};

    #[test]
    fn a_row_shares_its_median_s_unit_and_the_columns_line_up() {
        let cal = fixture(&[
            ("timing.rdtsc", Unit::Ns, 10.0),
            ("tasks.fork", Unit::Ns, 100_000.0),
            ("memory.bandwidth.read.1cpu", Unit::BytesPerS, 12e9),
        ]);
        let text = render(&cal, true);
        let row = |name: &str| {
            text.lines()
                .find(|l| l.trim_start().starts_with(name))
                .unwrap_or_else(|| panic!("no row {name} in {text}"))
                .to_string()
        };
        let fork = row("tasks.fork");
        // median, the interval's two ends, mean, sd, min, max.
        assert_eq!(fork.matches(" µs").count(), 7, "{fork}");
        assert!(text.split_whitespace().all(|w| w != "us"), "{text}");
        // A rate is written in its own unit: the sd of 12 GB/s may be in MB/s.
        assert_eq!(row("memory.bandwidth").matches("B/s").count(), 7);
        assert!(
            text.contains("\nTASKS") && text.contains("\nHISTOGRAMS"),
            "{text}"
        );
        let head = text
            .lines()
            .skip_while(|l| !l.starts_with("TASKS"))
            .nth(1)
            .unwrap();
        // Right-aligned: the median ends under the end of its header (in characters: µ is two
        // bytes).
        let end_of = |line: &str, word: &str| {
            line[..line.find(word).unwrap() + word.len()]
                .chars()
                .count()
        };
        assert_eq!(
            end_of(head, "median"),
            end_of(&fork, "µs"),
            "{head}\n{fork}"
        );
    }
}
