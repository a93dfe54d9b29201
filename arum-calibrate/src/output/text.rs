//! The text rendering: a header on the machine and the clock, one table per group (median, its
//! 90% confidence interval, mean, sd, min, max, samples, cycles, a one-line histogram, and the
//! prediction when one was given), then cache levels, the file cache, peers and notes; with
//! `--histograms`, every histogram in full.

use std::fmt::Write;

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Modify, Style};

use super::{fmt_as, fmt_bytes, fmt_ns, fmt_rate};
use crate::model::{Calibration, Measurement, Status, Unit};
use crate::stats::histogram::Histogram;
use crate::stats::repeat::Stop;
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
        "{} | {} ({} family {} model {:#x} stepping {}) | Linux {} | {} of {} CPUs | {:.1} GiB",
        m.host,
        m.cpu_model_name,
        m.cpu_vendor,
        m.cpu_family,
        m.cpu_model,
        m.cpu_stepping,
        m.kernel_release,
        m.allowed_cpus.len(),
        m.online_cpus,
        m.memory_total_bytes as f64 / (1u64 << 30) as f64
    );
    let t = &m.tsc;
    let _ =
        writeln!(
        out,
        "TSC {:.3} GHz ({}, calibrated against CLOCK_MONOTONIC, spread {:.3}%); fenced timer pair \
         {:.0} cycles, subtracted from single samples; batch loop {:.2} cycles per iteration",
        t.hz / 1e9,
        if t.invariant { "invariant" } else { "NOT invariant" },
        t.spread * 100.0,
        t.timer_overhead_ticks,
        t.loop_overhead_ticks
    );
    let r = &cal.run;
    let _ =
        writeln!(
        out,
        "Run: {:.1} s{}; each figure repeated until the 90% CI of its median is within ±{}% or {} \
         ms passed (* where the limit came first){}",
        r.elapsed_ms as f64 / 1000.0,
        if r.quick { ", --quick" } else { "" },
        r.ci_target * 100.0,
        r.time_limit_ms,
        r.other_load
            .map(|l| format!("; other processes used {:.0}% of the CPUs meanwhile", l * 100.0))
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
    let mut b = Builder::default();
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
    b.push_record(head);
    let mut skipped = Vec::new();
    for m in ms {
        let Some(s) = &m.summary else {
            if let Status::Skipped { reason } = &m.status {
                skipped.push((m.name.clone(), reason.clone()));
            }
            continue;
        };
        let f = |v: f64| fmt_as(m.unit, v, s.median);
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
                .map(|c| format!("{:.0}", c.median))
                .unwrap_or_default(),
            m.histogram.as_ref().map(sparkline).unwrap_or_default(),
        ];
        if predictions {
            match &m.prediction {
                Some(p) => {
                    row.push(f(p.value));
                    row.push(p.ratio.map(|r| format!("{r:.2}")).unwrap_or_default());
                }
                None => row.extend([String::new(), String::new()]),
            }
        }
        b.push_record(row);
    }
    let mut t = b.build();
    t.with(Style::blank())
        .with(Modify::new(Columns::new(1..9)).with(Alignment::right()));
    for line in t.to_string().lines() {
        let _ = writeln!(out, " {}", line.trim_end());
    }
    for (name, reason) in skipped {
        let _ = writeln!(out, "  {name}: skipped: {reason}");
    }
    for m in ms {
        for n in &m.notes {
            if !n.starts_with("server ") {
                let _ = writeln!(out, "  {}: {n}", m.name);
            }
        }
        if let Some(p) = &m.prediction {
            if let (Some(h), Some(sw)) = (p.hardware, p.software) {
                let _ = writeln!(
                    out,
                    "  {}: predicted {} hardware + {} software{}",
                    m.name,
                    fmt_as(m.unit, h, p.value),
                    fmt_as(m.unit, sw, p.value),
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
    let _ = cal;
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
    let mut b = Builder::default();
    b.push_record([
        "level",
        "reported (sysfs)",
        "reported (CPUID)",
        "detected",
        "detected/reported",
        "plateau -> next plateau",
    ]);
    for (i, cmp) in c.comparison.iter().enumerate() {
        let find = |v: &[crate::groups::memory::caches::CacheLevel]| {
            v.iter()
                .find(|l| l.level == cmp.level && l.holds_data())
                .map(|l| fmt_bytes(l.size_bytes))
                .unwrap_or_else(|| "-".into())
        };
        let d = c.detected.get(i);
        b.push_record([
            format!("L{}", cmp.level),
            find(&c.reported.sysfs),
            find(&c.reported.cpuid),
            cmp.detected_bytes
                .map(fmt_bytes)
                .unwrap_or_else(|| "not seen".into()),
            cmp.ratio.map(|r| format!("{r:.2}")).unwrap_or_default(),
            d.filter(|_| cmp.detected_bytes.is_some())
                .map(|d| format!("{} -> {}", fmt_ns(d.latency_ns), fmt_ns(d.next_latency_ns)))
                .unwrap_or_default(),
        ]);
    }
    let mut t = b.build();
    t.with(Style::blank());
    for line in t.to_string().lines() {
        let _ = writeln!(out, " {}", line.trim_end());
    }
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
            let _ = writeln!(out, "  (reads from the device: {})", fmt_rate(u));
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
    let mut b = Builder::default();
    b.push_record([
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
        let f = |v: Option<f64>| match (v, c.unit) {
            (Some(v), Unit::Ns) => fmt_ns(v),
            (Some(v), Unit::BytesPerS) => fmt_rate(v),
            (None, _) => "-".into(),
        };
        b.push_record([
            c.what.clone(),
            f(c.ours),
            f(c.peer),
            f(c.peer_printed),
            c.peer_cpu_share
                .map(|s| format!("{:.0}%", s * 100.0))
                .unwrap_or_else(|| "-".into()),
            c.ratio
                .map(|r| format!("{r:.2}"))
                .unwrap_or_else(|| "-".into()),
            match c.within_factor_2 {
                Some(true) => "yes".into(),
                Some(false) => "NO".into(),
                None => "-".into(),
            },
            c.peer_command.clone(),
        ]);
    }
    let mut t = b.build();
    t.with(Style::blank())
        .with(Modify::new(Columns::new(1..7)).with(Alignment::right()));
    for line in t.to_string().lines() {
        let _ = writeln!(out, " {}", line.trim_end());
    }
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
        let max = h.counts.iter().copied().max().unwrap_or(1).max(1);
        for (i, &c) in h.counts.iter().enumerate() {
            let bar = "#".repeat(((c * 50).div_ceil(max)) as usize);
            let _ = writeln!(
                out,
                "  {:>12} | {bar:<50} {c}",
                fmt_as(m.unit, h.edge(i), s.median)
            );
        }
    }
}
