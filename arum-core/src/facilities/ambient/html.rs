//! `--ambient`: what the rest of the machine did, as time series (CPU busy share per CPU, the
//! launched tree's memory and threads, interrupts and switches) and a summary.

use crate::facilities::ambient::model::{AmbientReport, AmbientSample, CpuUtilisation, TreeSample};
use crate::render::html::page::{facts, figure, section, table};
use crate::render::html::plot::{self, Series};
use arum_units::quantity::grouped;
use arum_units::{duration, size};

pub fn render(a: &AmbientReport) -> String {
    let s = &a.summary;
    let mut body = summary_facts(a);
    if a.samples.len() >= 2 {
        body.push_str(&machine_plots(a));
    }
    if a.tree.len() >= 2 {
        body.push_str(&tree_plots(&a.tree));
    }
    body.push_str(&cpu_table(&s.cpu_utilisation));
    if !s.busiest_irqs.is_empty() {
        let rows: Vec<Vec<String>> = s
            .busiest_irqs
            .iter()
            .map(|i| vec![i.name.clone(), i.desc.clone(), i.count.to_string()])
            .collect();
        body.push_str(&table(&["interrupt", "source", "count"], &rows));
    }
    section("ambient", "The machine during the run", &body)
}

/// How the machine was sampled, and its activity and the tree's peaks in figures.
fn summary_facts(a: &AmbientReport) -> String {
    let s = &a.summary;
    facts(&[
        (
            "sampling interval",
            if a.interval_ms == 0 {
                "start and end only".into()
            } else {
                format!("{} ms", a.interval_ms)
            },
        ),
        ("samples", a.samples.len().to_string()),
        (
            "sampler CPU time",
            duration::format_ns(a.sampler_cpu_ns as f64),
        ),
        (
            "interrupts per second",
            format!("{:.1}", s.interrupts_per_second),
        ),
        (
            "context switches per second",
            format!("{:.1}", s.context_switches_per_second),
        ),
        ("processes created", grouped(s.processes_created)),
        (
            "CPU time of everything else",
            duration::format_ns(s.other_cpu_ns as f64),
        ),
        (
            "tree peak memory",
            size::format(s.tree_peak_rss_bytes as f64),
        ),
        ("tree peak threads", s.tree_peak_threads.to_string()),
    ])
}

/// The whole machine between samples: each CPU's busy share (a line per CPU, or beyond
/// `fold::CPU_ROWS` CPUs a heat map of CPU × time), and interrupts, context switches and
/// softirqs per second.
fn machine_plots(a: &AmbientReport) -> String {
    let busy = busy_series(a);
    let mut out = if busy.len() > crate::render::fold::CPU_ROWS {
        figure(busy_heatmap(&busy))
    } else {
        figure(plot::lines(
            "CPU busy share between samples",
            "seconds since the program started",
            "% busy",
            &busy,
            None,
            plot::YAxis::Linear,
        ))
    };
    let per_s = |f: fn(&AmbientSample) -> u64, name: &str| Series {
        name: name.into(),
        points: a
            .samples
            .windows(2)
            .filter(|w| long_enough(a, w))
            .map(|w| {
                let dt = w[1].t_ns.saturating_sub(w[0].t_ns).max(1) as f64 / 1e9;
                (
                    w[1].t_ns as f64 / 1e9,
                    f(&w[1]).saturating_sub(f(&w[0])) as f64 / dt,
                )
            })
            .collect(),
    };
    out.push_str(&figure(plot::lines(
        "Interrupts and context switches, whole machine",
        "seconds since the program started",
        "per second",
        &[
            per_s(|x| x.interrupts, "interrupts"),
            per_s(|x| x.context_switches, "context switches"),
            per_s(|x| x.softirqs, "softirqs"),
        ],
        None,
        plot::YAxis::Linear,
    )));
    out
}

/// The launched tree over time: its resident memory, and its threads and processes.
fn tree_plots(tree: &[TreeSample]) -> String {
    let over_time = |name: &str, value: fn(&TreeSample) -> f64| Series {
        name: name.into(),
        points: tree
            .iter()
            .map(|t| (t.t_ns as f64 / 1e9, value(t)))
            .collect(),
    };
    let mut out = figure(plot::lines(
        "The launched tree's resident memory",
        "seconds since the program started",
        "MiB",
        &[over_time("resident", |t| {
            t.rss_bytes as f64 / (1 << 20) as f64
        })],
        None,
        plot::YAxis::Linear,
    ));
    out.push_str(&figure(plot::lines(
        "The launched tree's tasks",
        "seconds since the program started",
        "count",
        &[
            over_time("threads", |t| t.threads as f64),
            over_time("processes", |t| t.processes as f64),
        ],
        None,
        plot::YAxis::Counts,
    )));
    out
}

/// Each CPU's busy share and its parts over the run, in percent.
fn cpu_table(cpus: &[CpuUtilisation]) -> String {
    let rows: Vec<Vec<String>> = cpus
        .iter()
        .map(|c| {
            let p = &c.percent;
            [
                p.busy, p.user, p.system, p.iowait, p.irq, p.softirq, p.steal,
            ]
            .iter()
            .fold(vec![format!("CPU {}", c.cpu)], |mut row, v| {
                row.push(format!("{v:.1}"));
                row
            })
        })
        .collect();
    table(
        &[
            "CPU",
            "% busy",
            "% user",
            "% system",
            "% iowait",
            "% irq",
            "% softirq",
            "% steal",
        ],
        &rows,
    )
}

/// CPUs × time, each cell a CPU's busy share between two samples, from white (idle) to dark
/// (100%).
fn busy_heatmap(busy: &[Series]) -> plot::Drawn {
    let times: Vec<String> = busy
        .first()
        .map(|s| s.points.iter().map(|&(t, _)| format!("{t:.1} s")).collect())
        .unwrap_or_default();
    let names: Vec<String> = busy.iter().map(|s| s.name.clone()).collect();
    let values: Vec<Vec<f64>> = busy
        .iter()
        .map(|s| s.points.iter().map(|&(_, v)| v).collect())
        .collect();
    plot::heatmap(
        "CPU busy share between samples (white idle, dark blue 100%)",
        &names,
        &times,
        &values,
        plot::Shade::Upto(100.0),
    )
}

/// Each CPU's busy share between consecutive samples.
fn busy_series(a: &AmbientReport) -> Vec<Series> {
    let cpus: Vec<u32> = a
        .samples
        .first()
        .map(|s| s.cpus.iter().map(|c| c.cpu).collect())
        .unwrap_or_default();
    cpus.iter()
        .map(|&cpu| Series {
            name: format!("CPU {cpu}"),
            points: a
                .samples
                .windows(2)
                .filter(|w| long_enough(a, w))
                .filter_map(|w| {
                    let before = w[0].cpus.iter().find(|c| c.cpu == cpu)?;
                    let after = w[1].cpus.iter().find(|c| c.cpu == cpu)?;
                    let d = after.times.delta(&before.times);
                    let share = 100.0 * d.busy() as f64 / d.total().max(1) as f64;
                    Some((w[1].t_ns as f64 / 1e9, share))
                })
                .collect(),
        })
        .collect()
}

/// Whether two samples are far enough apart for a rate: the last sample, taken as the program
/// ended, can follow the one before by far less than the interval, and a share or a count over
/// a fraction of it says nothing.
fn long_enough(a: &AmbientReport, w: &[AmbientSample]) -> bool {
    let span = w[1].t_ns.saturating_sub(w[0].t_ns);
    span * 4 >= a.interval_ms * 1_000_000
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::fixture;

    // The fixture's two CPUs are lines; the same samples on 16 CPUs are a CPU × time heat map
    // with a row per CPU.
    #[test]
    fn many_cpus_are_a_heat_map_instead_of_lines() {
        let mut a = fixture().ambient.expect("the fixture sampled the machine");
        let page = render(&a);
        assert!(page.contains("CPU busy share between samples"), "{page}");
        assert!(!page.contains("dark blue 100%"), "{page}");
        for s in &mut a.samples {
            let template = s.cpus[0].clone();
            s.cpus = (0..16)
                .map(|cpu| {
                    let mut c = template.clone();
                    c.cpu = cpu;
                    c
                })
                .collect();
        }
        let page = render(&a);
        assert!(page.contains("dark blue 100%"), "{page}");
        assert!(page.lines().any(|l| l.trim() == "CPU 15"), "{page}");
    }
}
