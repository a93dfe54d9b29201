//! The execution trace of a window drawn as SVG, as the paper's Figures 3 and 6: one row per
//! thread, each interval of uninterrupted CPU time a bar (coloured by CPU, so migrations show),
//! gaps as the white between bars; periodic jobs with their release (tick above the row) and
//! deadline (green when met, red when missed); timer wake-ups as dots with their lateness.

use svg::node::element::{Circle, Group, Line, Rectangle, Text, Title};
use svg::Document;

use crate::experiment::Experiment;
use crate::span::{show, show_ns};
use crate::threads::RunResult;
use crate::trace::{End, Record};

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 230.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 50.0;
const ROW: f64 = 36.0;
const BAR: f64 = 18.0;
const AXIS: f64 = 50.0;

/// Colours for CPUs 0, 1, ... (cycled).
const CPU_COLOURS: [&str; 8] = [
    "#6e6e6e", "#3b73b9", "#c2781b", "#4d9a4d", "#8e4fa3", "#b8423b", "#2f9c9c", "#9c8f2f",
];

/// The window [from, from + span] in seconds from the run's start.
pub fn render(exp: &Experiment, run: &RunResult, from_s: f64, span_s: f64) -> String {
    let rows = exp.threads.len();
    let plot_w = WIDTH - LEFT - RIGHT;
    let height = TOP + rows as f64 * ROW + AXIS;
    let to_s = from_s + span_s;
    let x = |s: f64| LEFT + (s - from_s) / span_s * plot_w;
    let row_y = |thread: usize| TOP + thread as f64 * ROW;
    let secs = |tsc: u64| run.secs(tsc);
    let visible = |a: f64, b: f64| b >= from_s && a <= to_s;

    let mut doc = Document::new()
        .set("xmlns", "http://www.w3.org/2000/svg")
        .set("viewBox", (0, 0, WIDTH as i64, height as i64))
        .set("width", WIDTH)
        .set("height", height)
        .set("font-family", "sans-serif")
        .set("font-size", 12)
        .add(
            Rectangle::new()
                .set("width", "100%")
                .set("height", "100%")
                .set("fill", "white"),
        )
        .add(
            Text::new(format!(
                "arum hourglass: {} threads, {} of {} from {} (GAP {})",
                rows,
                show_ns(span_s * 1e9),
                show(exp.duration),
                show_ns(from_s * 1e9),
                show_ns(run.gap_ns)
            ))
            .set("x", 10)
            .set("y", 22)
            .set("font-size", 15),
        );

    let mut cpus_seen = std::collections::BTreeSet::new();
    for (i, t) in exp.threads.iter().enumerate() {
        let y = row_y(i);
        doc = doc
            .add(
                Text::new(format!("{i}: {}", t.workload))
                    .set("x", 10)
                    .set("y", y + BAR * 0.55),
            )
            .add(
                Text::new(t.priority.to_string())
                    .set("x", 10)
                    .set("y", y + BAR * 0.55 + 13.0)
                    .set("font-size", 10)
                    .set("fill", "#555"),
            )
            .add(
                Line::new()
                    .set("x1", LEFT)
                    .set("x2", WIDTH - RIGHT)
                    .set("y1", y + BAR)
                    .set("y2", y + BAR)
                    .set("stroke", "#ddd"),
            );
    }

    let mut bars = Group::new();
    let mut marks = Group::new();
    for r in &run.records {
        match r {
            Record::Interval(iv) => {
                let (a, b) = (secs(iv.start), secs(iv.end));
                if !visible(a, b) {
                    continue;
                }
                cpus_seen.insert(iv.cpu);
                let (xa, xb) = (x(a.max(from_s)), x(b.min(to_s)));
                let why = match iv.ended {
                    End::Gap { switched: false } => "interrupted (no task switch)",
                    End::Gap { switched: true } => "another task ran",
                    End::Yield => "yielded",
                    End::Block => "blocked",
                    End::Finish => "finished",
                };
                bars = bars.add(
                    Rectangle::new()
                        .set("x", xa)
                        .set("y", row_y(iv.thread as usize))
                        .set("width", (xb - xa).max(0.3))
                        .set("height", BAR)
                        .set("fill", CPU_COLOURS[iv.cpu as usize % CPU_COLOURS.len()])
                        .add(Title::new(format!(
                            "thread {} on CPU {}: {} to {} ({}), then {why}",
                            iv.thread,
                            iv.cpu,
                            show_ns(a * 1e9),
                            show_ns(b * 1e9),
                            show_ns((b - a) * 1e9)
                        ))),
                );
            }
            Record::Job(j) => {
                let (rel, dl, fin) = (secs(j.release), secs(j.deadline), secs(j.finish));
                if !visible(rel, dl.max(fin)) {
                    continue;
                }
                let y = row_y(j.thread as usize);
                if (from_s..=to_s).contains(&rel) {
                    marks = marks.add(
                        Line::new()
                            .set("x1", x(rel))
                            .set("x2", x(rel))
                            .set("y1", y - 6.0)
                            .set("y2", y)
                            .set("stroke", "black"),
                    );
                }
                if (from_s..=to_s).contains(&dl) {
                    let (colour, word) = if j.met() {
                        ("#2a8a2a", "met")
                    } else {
                        ("#d01c1c", "missed")
                    };
                    marks = marks.add(
                        Line::new()
                            .set("x1", x(dl))
                            .set("x2", x(dl))
                            .set("y1", y - 4.0)
                            .set("y2", y + BAR + 4.0)
                            .set("stroke", colour)
                            .set("stroke-width", 2)
                            .add(Title::new(format!(
                                "deadline {word}: released {}, due {}, served {}",
                                show_ns(rel * 1e9),
                                show_ns(dl * 1e9),
                                show_ns(fin * 1e9)
                            ))),
                    );
                }
            }
            Record::Wake(w) => {
                let at = secs(w.at);
                if !(from_s..=to_s).contains(&at) {
                    continue;
                }
                marks = marks.add(
                    Circle::new()
                        .set("cx", x(at))
                        .set("cy", row_y(w.thread as usize) + BAR / 2.0)
                        .set("r", 2.5)
                        .set("fill", "#d07a1c")
                        .add(Title::new(format!(
                            "woke at {} on CPU {}, {} late",
                            show_ns(at * 1e9),
                            w.cpu,
                            show_ns(w.lateness_ns as f64)
                        ))),
                );
            }
        }
    }
    doc = doc.add(bars).add(marks);
    doc = axis(doc, from_s, span_s, TOP + rows as f64 * ROW, x);
    let mut lx = LEFT;
    for cpu in cpus_seen {
        doc = doc
            .add(
                Rectangle::new()
                    .set("x", lx)
                    .set("y", 30)
                    .set("width", 12)
                    .set("height", 10)
                    .set("fill", CPU_COLOURS[cpu as usize % CPU_COLOURS.len()]),
            )
            .add(
                Text::new(format!("CPU {cpu}"))
                    .set("x", lx + 16.0)
                    .set("y", 39),
            );
        lx += 70.0;
    }
    doc.to_string()
}

/// A time axis with ticks at 1, 2 or 5 times a power of ten.
fn axis(mut doc: Document, from_s: f64, span_s: f64, y: f64, x: impl Fn(f64) -> f64) -> Document {
    doc = doc.add(
        Line::new()
            .set("x1", LEFT)
            .set("x2", WIDTH - RIGHT)
            .set("y1", y)
            .set("y2", y)
            .set("stroke", "black"),
    );
    let raw = span_s / 10.0;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p);
    let mut t = (from_s / step).ceil() * step;
    while t <= from_s + span_s + step * 1e-9 {
        doc = doc
            .add(
                Line::new()
                    .set("x1", x(t))
                    .set("x2", x(t))
                    .set("y1", y)
                    .set("y2", y + 5.0)
                    .set("stroke", "black"),
            )
            .add(
                Text::new(show_ns((t * 1e9).round()))
                    .set("x", x(t))
                    .set("y", y + 18.0)
                    .set("text-anchor", "middle"),
            );
        t += step;
    }
    doc.add(
        Text::new("time from the start of the run")
            .set("x", LEFT + (WIDTH - LEFT - RIGHT) / 2.0)
            .set("y", y + 38.0)
            .set("text-anchor", "middle")
            .set("fill", "#555"),
    )
}
