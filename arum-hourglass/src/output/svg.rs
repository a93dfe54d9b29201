//! The execution trace of a window drawn as SVG, as the paper's Figures 3 and 6: one row per
//! thread, each interval of uninterrupted CPU time a bar (coloured by CPU, so migrations show),
//! gaps as the white between bars; periodic jobs with their release (a tick above the bar) and
//! deadline (green when met, red when missed); timer wake-ups as dots. The legend names the CPUs
//! and the marks the window shows. Drawn with plotters, as every plot arum writes.

use std::collections::BTreeSet;

use arum_units::duration;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::experiment::Experiment;
use crate::threads::RunResult;
use crate::trace::{Interval, Job, Record, Wake};

/// The picture's layout, in pixels.
const WIDTH: u32 = 1200;
/// The thread labels, left of the time axis.
const LEFT: u32 = 230;
const RIGHT: u32 = 20;
/// The title and the legend, above the rows.
const TOP: u32 = 50;
const ROW: u32 = 40;
/// A bar's height, and the room above it in its row (for the release ticks).
const BAR: u32 = 18;
const ABOVE: u32 = 8;
/// The time axis and its description, below the rows.
const AXIS: u32 = 50;

/// Colours for CPUs 0, 1, ... (cycled).
const CPU_COLOURS: [RGBColor; 8] = [
    RGBColor(0x6e, 0x6e, 0x6e),
    RGBColor(0x3b, 0x73, 0xb9),
    RGBColor(0xc2, 0x78, 0x1b),
    RGBColor(0x4d, 0x9a, 0x4d),
    RGBColor(0x8e, 0x4f, 0xa3),
    RGBColor(0xb8, 0x42, 0x3b),
    RGBColor(0x2f, 0x9c, 0x9c),
    RGBColor(0x9c, 0x8f, 0x2f),
];
const MET: RGBColor = RGBColor(0x2a, 0x8a, 0x2a);
const MISSED: RGBColor = RGBColor(0xd0, 0x1c, 0x1c);
const WAKE: RGBColor = RGBColor(0xd0, 0x7a, 0x1c);
const RULE: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);
const GREY: RGBColor = RGBColor(0x55, 0x55, 0x55);

fn cpu_colour(cpu: u16) -> RGBColor {
    CPU_COLOURS[cpu as usize % CPU_COLOURS.len()]
}

fn e<E: std::fmt::Display>(err: E) -> String {
    err.to_string()
}

/// The marks a legend explains, in the order it lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Mark {
    Release,
    Met,
    Missed,
    Wake,
}

impl Mark {
    fn label(self) -> &'static str {
        match self {
            Mark::Release => "release",
            Mark::Met => "deadline met",
            Mark::Missed => "deadline missed",
            Mark::Wake => "timer wake-up",
        }
    }

    fn colour(self) -> RGBColor {
        match self {
            Mark::Release => BLACK,
            Mark::Met => MET,
            Mark::Missed => MISSED,
            Mark::Wake => WAKE,
        }
    }
}

/// Where rows and times fall in the chart's units: one row is one unit, the first row the
/// highest; a row's bar spans `ABOVE` to `ABOVE + BAR` pixels below the row's top.
struct Layout {
    rows: usize,
    from_s: f64,
    to_s: f64,
    /// One pixel, in rows.
    unit: f64,
    /// One pixel, in seconds.
    one_px: f64,
}

impl Layout {
    fn bar_top(&self, thread: usize) -> f64 {
        (self.rows - thread) as f64 - ABOVE as f64 * self.unit
    }

    fn bar_bottom(&self, thread: usize) -> f64 {
        self.bar_top(thread) - BAR as f64 * self.unit
    }

    /// Whether [a, b] overlaps the window.
    fn visible(&self, a: f64, b: f64) -> bool {
        b >= self.from_s && a <= self.to_s
    }

    /// Whether the instant `at` is in the window.
    fn shows(&self, at: f64) -> bool {
        (self.from_s..=self.to_s).contains(&at)
    }
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// What the window shows of a run's records: the bars, the marks' lines and dots, and the CPUs
/// and kinds of mark the legend lists.
#[derive(Default)]
struct Shapes {
    cpus: BTreeSet<u16>,
    marks: BTreeSet<Mark>,
    bars: Vec<Rectangle<(f64, f64)>>,
    lines: Vec<PathElement<(f64, f64)>>,
    dots: Vec<Circle<(f64, f64), i32>>,
}

impl Shapes {
    fn of(run: &RunResult, at: &Layout) -> Shapes {
        let mut shapes = Shapes::default();
        for r in &run.records {
            match r {
                Record::Interval(iv) => shapes.interval(run, iv, at),
                Record::Job(j) => shapes.job(run, j, at),
                Record::Wake(w) => shapes.wake(run, w, at),
            }
        }
        shapes
    }

    /// A bar in the CPU's colour, at least a pixel wide.
    fn interval(&mut self, run: &RunResult, iv: &Interval, at: &Layout) {
        let (a, b) = (run.secs(iv.start), run.secs(iv.end));
        if !at.visible(a, b) {
            return;
        }
        self.cpus.insert(iv.cpu);
        let (a, b) = (a.max(at.from_s), b.min(at.to_s));
        let row = iv.thread as usize;
        self.bars.push(Rectangle::new(
            [
                (a, at.bar_top(row)),
                (b.max(a + at.one_px), at.bar_bottom(row)),
            ],
            cpu_colour(iv.cpu).filled(),
        ));
    }

    /// The release as a tick above the bar, the deadline as a line across it.
    fn job(&mut self, run: &RunResult, j: &Job, at: &Layout) {
        let (rel, dl, fin) = (
            run.secs(j.release),
            run.secs(j.deadline),
            run.secs(j.finish),
        );
        if !at.visible(rel, dl.max(fin)) {
            return;
        }
        let row = j.thread as usize;
        if at.shows(rel) {
            self.marks.insert(Mark::Release);
            self.lines.push(PathElement::new(
                vec![
                    (rel, at.bar_top(row) + 6.0 * at.unit),
                    (rel, at.bar_top(row)),
                ],
                BLACK.stroke_width(1),
            ));
        }
        if at.shows(dl) {
            let mark = if j.met() { Mark::Met } else { Mark::Missed };
            self.marks.insert(mark);
            self.lines.push(PathElement::new(
                vec![
                    (dl, at.bar_top(row) + 4.0 * at.unit),
                    (dl, at.bar_bottom(row) - 4.0 * at.unit),
                ],
                mark.colour().stroke_width(2),
            ));
        }
    }

    /// A dot in the middle of the bar.
    fn wake(&mut self, run: &RunResult, w: &Wake, at: &Layout) {
        let t = run.secs(w.at);
        if !at.shows(t) {
            return;
        }
        self.marks.insert(Mark::Wake);
        let row = w.thread as usize;
        let centre = (at.bar_top(row) + at.bar_bottom(row)) / 2.0;
        self.dots.push(Circle::new((t, centre), 3, WAKE.filled()));
    }
}

/// The window [from, from + span] in seconds from the run's start.
pub fn render(
    exp: &Experiment,
    run: &RunResult,
    from_s: f64,
    span_s: f64,
) -> Result<String, String> {
    let rows = exp.threads.len();
    let height = TOP + rows as u32 * ROW + AXIS;
    let to_s = from_s + span_s;
    let at = Layout {
        rows,
        from_s,
        to_s,
        unit: 1.0 / ROW as f64,
        one_px: span_s / (WIDTH - LEFT - RIGHT) as f64,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        root.draw(&Text::new(
            title(exp, run, from_s, span_s),
            (10, 8),
            ("sans-serif", 19),
        ))
        .map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .margin_top(TOP)
            .margin_right(RIGHT)
            .set_label_area_size(LabelAreaPosition::Left, LEFT)
            .set_label_area_size(LabelAreaPosition::Bottom, AXIS)
            .build_cartesian_2d(from_s..to_s, 0.0..rows.max(1) as f64)
            .map_err(e)?;
        // Whole nanoseconds: the ticks' positions carry rounding noise far below that.
        let time = |s: &f64| duration::format_ns((s * 1e9).round());
        chart
            .configure_mesh()
            .disable_mesh()
            .disable_y_axis()
            .x_labels(10)
            .x_label_formatter(&time)
            .x_desc("time from the start of the run")
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(e)?;
        thread_rows(&root, &mut chart, exp, &at)?;
        let shapes = Shapes::of(run, &at);
        chart.draw_series(shapes.bars).map_err(e)?;
        chart.draw_series(shapes.lines).map_err(e)?;
        chart.draw_series(shapes.dots).map_err(e)?;
        legend(&root, &shapes.cpus, &shapes.marks)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// The picture's title: the threads, the window and the run's GAP.
fn title(exp: &Experiment, run: &RunResult, from_s: f64, span_s: f64) -> String {
    format!(
        "arum hourglass: {} threads, {} of {} from {} (GAP {})",
        exp.threads.len(),
        duration::format_ns(span_s * 1e9),
        duration::format(exp.duration),
        duration::format_ns(from_s * 1e9),
        duration::format_ns(run.gap_ns)
    )
}

/// Each thread's label and priority left of its row, and a rule under its bar.
fn thread_rows(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &mut Chart<'_, '_>,
    exp: &Experiment,
    at: &Layout,
) -> Result<(), String> {
    for (i, t) in exp.threads.iter().enumerate() {
        let (_, y) = chart.backend_coord(&(at.from_s, at.bar_top(i)));
        root.draw(&Text::new(
            format!("{i}: {}", t.workload),
            (10, y),
            ("sans-serif", 15),
        ))
        .map_err(e)?;
        root.draw(&Text::new(
            t.priority.to_string(),
            (10, y + 16),
            ("sans-serif", 13).into_font().color(&GREY),
        ))
        .map_err(e)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(at.from_s, at.bar_bottom(i)), (at.to_s, at.bar_bottom(i))],
                RULE,
            )))
            .map_err(e)?;
    }
    Ok(())
}

/// One line under the title: a swatch per CPU the window shows, then the marks it shows.
fn legend(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    cpus: &BTreeSet<u16>,
    marks: &BTreeSet<Mark>,
) -> Result<(), String> {
    const Y: i32 = 30;
    let mut x = LEFT as i32;
    let mut entry = |swatch: &dyn Fn(i32) -> Result<(), String>, label: &str| {
        swatch(x)?;
        root.draw(&Text::new(
            label.to_string(),
            (x + 16, Y - 1),
            ("sans-serif", 15),
        ))
        .map_err(e)?;
        x += 16 + 7 * label.chars().count() as i32 + 20;
        Ok::<(), String>(())
    };
    for &cpu in cpus {
        entry(
            &|x| {
                root.draw(&Rectangle::new(
                    [(x, Y), (x + 12, Y + 10)],
                    cpu_colour(cpu).filled(),
                ))
                .map_err(e)
            },
            &format!("CPU {cpu}"),
        )?;
    }
    for &mark in marks {
        entry(
            &|x| match mark {
                Mark::Wake => root
                    .draw(&Circle::new((x + 6, Y + 5), 3, WAKE.filled()))
                    .map_err(e),
                _ => root
                    .draw(&PathElement::new(
                        vec![(x + 6, Y - 2), (x + 6, Y + 12)],
                        mark.colour().stroke_width(2),
                    ))
                    .map_err(e),
            },
            mark.label(),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::clock::Timebase;
    use crate::experiment::{Priority, ThreadSpec, Workload};
    use crate::kernel::KernelFacts;
    use crate::threads::TscFacts;
    use crate::trace::{End, Interval, Job, Wake};

    /// A run of two threads whose TSC counts nanoseconds from 0.
    fn run_of(records: Vec<Record>) -> (Experiment, RunResult) {
        let exp = Experiment {
            duration: Duration::from_millis(100),
            threads: vec![
                ThreadSpec::default(),
                ThreadSpec {
                    workload: Workload::Periodic {
                        amount: Duration::from_millis(1),
                        period: Duration::from_millis(5),
                    },
                    priority: Priority::RTMED,
                    ..Default::default()
                },
            ],
            records: 100,
            gap: crate::experiment::GapChoice::Auto { factor: 10.0 },
            deep_idle: false,
        };
        let run = RunResult {
            tsc: TscFacts {
                hz: 1e9,
                spread: 0.0,
                invariant: true,
                rdtscp: true,
            },
            timebase: Timebase {
                tsc0: 0,
                mono0_ns: 0,
                hz: 1e9,
            },
            gap_ticks: 300,
            gap_ns: 300.0,
            threads: vec![],
            records,
            dropped: 0,
            kernel: KernelFacts {
                release: "6.1".into(),
                hz: Some(250),
                hz_source: None,
                tick_mode: None,
                nohz_full: vec![],
                preempt: None,
                local_timer_hz: vec![],
                stolen_ms: vec![],
            },
            notes: vec![],
        };
        (exp, run)
    }

    fn interval(thread: u16, cpu: u16, from_ms: u64, to_ms: u64) -> Record {
        Record::Interval(Interval {
            thread,
            cpu,
            start: from_ms * 1_000_000,
            end: to_ms * 1_000_000,
            ended: End::Gap { switched: true },
        })
    }

    /// The attributes of every `<tag ...>` of `svg`, by name.
    fn elements(svg: &str, tag: &str) -> Vec<std::collections::HashMap<String, String>> {
        svg.split(&format!("<{tag} "))
            .skip(1)
            .map(|rest| {
                let attrs = &rest[..rest.find('>').unwrap()];
                attrs
                    .split('"')
                    .collect::<Vec<_>>()
                    .chunks(2)
                    .filter(|kv| kv.len() == 2)
                    .map(|kv| {
                        (
                            kv[0].trim().trim_end_matches('=').to_string(),
                            kv[1].to_string(),
                        )
                    })
                    .collect()
            })
            .collect()
    }

    /// The text of every `<text>` of `svg`.
    fn texts(svg: &str) -> Vec<&str> {
        svg.split("<text ")
            .skip(1)
            .map(|rest| {
                let inner = &rest[rest.find('>').unwrap() + 1..];
                inner[..inner.find("</text>").unwrap()].trim()
            })
            .collect()
    }

    fn number(attrs: &std::collections::HashMap<String, String>, name: &str) -> f64 {
        attrs[name].parse().unwrap()
    }

    #[test]
    fn a_bar_where_each_thread_ran_in_its_own_row() {
        let _one = crate::exclusive();
        let (exp, run) = run_of(vec![
            interval(0, 0, 10, 20),
            interval(1, 1, 20, 25),
            interval(0, 1, 30, 40),
            // Outside the window [0, 50 ms]: not drawn.
            interval(0, 0, 60, 70),
        ]);
        let svg = render(&exp, &run, 0.0, 0.05).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        let texts = texts(&svg);
        // One label per thread, in order, each with its priority.
        let labels: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()) && t.contains(": "))
            .collect();
        assert_eq!(labels, ["0: CPU", "1: PERIODIC 1 ms 5 ms"], "{svg}");
        assert!(texts.contains(&"RTMED (SCHED_FIFO 50)"));
        // The bars: a rectangle of a CPU's colour BAR pixels high (the legend's swatches are
        // smaller), by row.
        let colour = |cpu: u16| {
            let RGBColor(r, g, b) = cpu_colour(cpu);
            format!("#{r:02X}{g:02X}{b:02X}")
        };
        let bars: Vec<_> = elements(&svg, "rect")
            .into_iter()
            .filter(|r| number(r, "height") == BAR as f64)
            .collect();
        assert_eq!(bars.len(), 3, "{svg}");
        let (b0, b1, b2) = (&bars[0], &bars[1], &bars[2]);
        assert_eq!(b0["fill"], colour(0));
        assert_eq!(b1["fill"], colour(1));
        assert_eq!(b2["fill"], colour(1), "the migration shows");
        // Thread 0's bars share a row above thread 1's, one row apart.
        assert_eq!(number(b0, "y"), number(b2, "y"));
        assert!((number(b1, "y") - number(b0, "y") - ROW as f64).abs() <= 1.0);
        // Along the time axis: 10 ms of a 50 ms window is a fifth of the plot.
        let plot = (WIDTH - LEFT - RIGHT) as f64;
        for (bar, from_ms, ms) in [(b0, 10.0, 10.0), (b1, 20.0, 5.0), (b2, 30.0, 10.0)] {
            let x = LEFT as f64 + from_ms / 50.0 * plot;
            assert!((number(bar, "x") - x).abs() <= 2.0, "{bar:?}");
            assert!(
                (number(bar, "width") - ms / 50.0 * plot).abs() <= 2.0,
                "{bar:?}"
            );
        }
        // The legend names the CPUs seen; no job, no deadline.
        assert!(texts.contains(&"CPU 0") && texts.contains(&"CPU 1"));
        assert!(!svg.contains("deadline"));
    }

    #[test]
    fn jobs_and_wake_ups_as_marks_with_their_legend() {
        let _one = crate::exclusive();
        let ms = |n: u64| n * 1_000_000;
        let (exp, run) = run_of(vec![
            Record::Job(Job {
                thread: 1,
                release: ms(5),
                deadline: ms(10),
                finish: ms(7),
            }),
            Record::Job(Job {
                thread: 1,
                release: ms(10),
                deadline: ms(15),
                finish: ms(16),
            }),
            Record::Wake(Wake {
                thread: 1,
                cpu: 0,
                at: ms(20),
                lateness_ns: 12_000,
            }),
        ]);
        let svg = render(&exp, &run, 0.0, 0.05).unwrap();
        let texts = texts(&svg);
        for label in [
            "release",
            "deadline met",
            "deadline missed",
            "timer wake-up",
        ] {
            assert!(texts.contains(&label), "{label}: {svg}");
        }
        // The met deadline green, the missed red, each drawn once plus its legend entry.
        let strokes = |c: RGBColor| {
            let RGBColor(r, g, b) = c;
            svg.matches(&format!("stroke=\"#{r:02X}{g:02X}{b:02X}\""))
                .count()
        };
        assert_eq!(strokes(MET), 2);
        assert_eq!(strokes(MISSED), 2);
        // A window before the job shows none of it.
        let svg = render(&exp, &run, 0.0, 0.004).unwrap();
        assert!(!svg.contains("deadline"));
    }
}
