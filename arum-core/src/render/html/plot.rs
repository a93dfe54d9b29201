//! Plots drawn by plotters' SVG back-end into strings the page inlines: time series, histograms,
//! heat maps. The styles follow arum calibrate's plots (white ground, captioned, labelled axes).

use std::ops::Range;

use arum_units::Unit;

use plotters::coord::ranged1d::AsRangedCoord;
use plotters::coord::ranged1d::SegmentValue;
use plotters::coord::Shift;
use plotters::prelude::*;

pub type Drawn = Result<String, String>;

const SIZE: (u32, u32) = (900, 380);

fn e<E: std::fmt::Display>(err: E) -> String {
    err.to_string()
}

/// A white drawing area of `size` writing SVG into `svg`.
fn ground(
    svg: &mut String,
    size: (u32, u32),
) -> Result<DrawingArea<SVGBackend<'_>, Shift>, String> {
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    Ok(root)
}

/// A chart on an SVG drawing area over the coordinates of `X` and `Y`.
type Chart<'a, 'b, X, Y> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>,
>;

/// The captioned chart of a line plot or histogram on `root`, `y_area` pixels for the y labels.
fn frame<'a, 'b, X: AsRangedCoord, Y: AsRangedCoord>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    y_area: u32,
    x: X,
    y: Y,
) -> Result<Chart<'a, 'b, X, Y>, String> {
    ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x, y)
        .map_err(e)
}

/// The divisor and axis label for values in `u`.
pub fn axis(u: Unit, values: &[f64]) -> (f64, &'static str) {
    let top = values.iter().copied().fold(0.0, |a: f64, v| a.max(v.abs()));
    match u {
        Unit::Nanoseconds if top >= 1e9 => (1e9, "s"),
        Unit::Nanoseconds if top >= 1e6 => (1e6, "ms"),
        Unit::Nanoseconds if top >= 1e3 => (1e3, "µs"),
        Unit::Nanoseconds => (1.0, "ns"),
        Unit::Microseconds if top >= 1e3 => (1e3, "ms"),
        Unit::Microseconds => (1.0, "µs"),
        Unit::Milliseconds => (1.0, "ms"),
        Unit::Seconds => (1.0, "s"),
        Unit::Bytes if top >= (1u64 << 20) as f64 => ((1u64 << 20) as f64, "MiB"),
        Unit::Bytes => (1024.0, "KiB"),
        Unit::Percent => (1.0, "%"),
        Unit::Fraction => (0.01, "%"),
        Unit::PerSecond => (1.0, "per second"),
        Unit::Count | Unit::Ratio => (1.0, "value"),
    }
}

/// One named line of a plot.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A padded range around `lo..hi` that plotters can draw, also for a single value.
fn span(lo: f64, hi: f64, from_zero: bool) -> (f64, f64) {
    let lo = if from_zero { lo.min(0.0) } else { lo };
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi > lo {
        let pad = (hi - lo) * 0.05;
        (if from_zero && lo >= 0.0 { lo } else { lo - pad }, hi + pad)
    } else {
        let pad = lo.abs().max(1.0) * 0.01;
        (lo - pad, hi + pad)
    }
}

/// Points drawn of one line at most: a long run sampled often would make pages of megabytes
/// that no screen can show.
const MAX_POINTS: usize = 2000;

/// At most `max` points of `points` (in x order): each of `max / 2` runs of consecutive points
/// keeps its lowest and highest, in their order, so spikes stay visible.
fn thin(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max < 2 {
        return points.to_vec();
    }
    let buckets = max / 2;
    let mut out = Vec::with_capacity(max);
    for b in 0..buckets {
        let run = &points[b * points.len() / buckets..(b + 1) * points.len() / buckets];
        let lo = run
            .iter()
            .enumerate()
            .min_by(|a, b| a.1 .1.total_cmp(&b.1 .1));
        let hi = run
            .iter()
            .enumerate()
            .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1));
        if let (Some((i, &l)), Some((j, &h))) = (lo, hi) {
            match i.cmp(&j) {
                std::cmp::Ordering::Less => out.extend([l, h]),
                std::cmp::Ordering::Greater => out.extend([h, l]),
                std::cmp::Ordering::Equal => out.push(l),
            }
        }
    }
    out
}

/// How the y axis maps values.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum YAxis {
    Linear,
    /// Powers of ten (values below 1 drawn at 1): for quantities spanning orders of magnitude.
    Log,
    /// Whole numbers sampled now and then (threads, processes): each value holds until the
    /// next sample (steps, not slopes between samples), and the axis is labelled at whole
    /// numbers only.
    Counts,
}

/// Lines over a shared x axis, with a legend when there are several. `x_labels` names the
/// integer x positions instead of numbering them (categories such as quantiles).
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    x_labels: Option<&[String]>,
    y_axis: YAxis,
) -> Drawn {
    let series = as_drawn(series, y_axis);
    let series = &series[..];
    let Some(((x0, x1), (y0, y1))) = ranges(series) else {
        return Err("no points to plot".into());
    };
    let y1 = with_legend_room(y0, y1, series.len());
    let mut svg = String::new();
    {
        let root = ground(&mut svg, SIZE)?;
        let mut chart = frame(&root, title, 80, x0..x1, y0..y1)?;
        let label_of = |x: &f64| match x_labels {
            Some(names) if (x - x.round()).abs() < 1e-9 && *x >= 0.0 => {
                names.get(x.round() as usize).cloned().unwrap_or_default()
            }
            Some(_) => String::new(),
            None => format!("{}", Short(*x)),
        };
        let y_label = |y: &f64| match y_axis {
            YAxis::Linear => format!("{}", Short(*y)),
            YAxis::Log => format!("{}", Short(10f64.powf(*y))),
            YAxis::Counts if (y - y.round()).abs() < 1e-9 => format!("{}", y.round()),
            YAxis::Counts => String::new(),
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_desc)
            .label_style(("sans-serif", 13))
            .y_desc(y_desc)
            .x_label_formatter(&label_of)
            .y_label_formatter(&y_label);
        if let Some(names) = x_labels {
            mesh.x_labels(names.len() * 2 + 1);
        }
        mesh.draw().map_err(e)?;
        draw_lines(&mut chart, series)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// The lines as drawn: at most `MAX_POINTS` points each, y as the axis maps it; counts as
/// steps.
fn as_drawn(series: &[Series], y_axis: YAxis) -> Vec<Series> {
    series
        .iter()
        .map(|s| {
            let thinned = thin(&s.points, MAX_POINTS);
            let points = match y_axis {
                YAxis::Linear => thinned,
                YAxis::Log => thinned
                    .into_iter()
                    .map(|(x, y)| (x, y.max(1.0).log10()))
                    .collect(),
                YAxis::Counts => steps(&thinned),
            };
            Series {
                name: s.name.clone(),
                points,
            }
        })
        .collect()
}

/// Each value held until the next point's x: a corner before every change.
fn steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (i, &(x, y)) in points.iter().enumerate() {
        if i > 0 {
            out.push((x, points[i - 1].1));
        }
        out.push((x, y));
    }
    out
}

/// The top of the y range with room above the data for a legend of `lines` entries (drawn in
/// the upper left): each entry takes about 7% of the plot's height, so the legend never covers
/// a line.
fn with_legend_room(y0: f64, y1: f64, lines: usize) -> f64 {
    if lines < 2 {
        return y1;
    }
    let share = (0.07 * lines as f64 + 0.04).min(0.6);
    y0 + (y1 - y0) / (1.0 - share)
}

/// The padded ranges of x and of y (from zero) over every point; None without points.
fn ranges(series: &[Series]) -> Option<((f64, f64), (f64, f64))> {
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY);
    let mut y0 = f64::INFINITY;
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        return None;
    }
    Some((span(x0, x1, false), span(y0, y1, true)))
}

/// Each line in its colour, its points marked when they are few; with several lines, each
/// named in a legend.
fn draw_lines<'a, 'b: 'a>(
    chart: &mut Chart<'a, 'b, Range<f64>, Range<f64>>,
    series: &[Series],
) -> Result<(), String> {
    for (i, s) in series.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        // Lines drawn first are wider: where two lines coincide (two idle CPUs), the one
        // beneath still shows along both edges of the one above.
        let width = 2 + 2 * (series.len() - 1 - i).min(2) as u32;
        let drawn = chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                colour.stroke_width(width),
            ))
            .map_err(e)?;
        if series.len() > 1 {
            drawn.label(s.name.clone()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
            });
        }
        if s.points.len() <= 40 {
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(e)?;
        }
    }
    if series.len() > 1 {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

/// A histogram of `values` with vertical marks (mean, median) in red, green, ...
pub fn histogram(title: &str, x_desc: &str, values: &[f64], marks: &[(&str, f64)]) -> Drawn {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return Err("no values to plot".into());
    }
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (x0, x1) = span(lo, hi, false);
    let bins = ((finite.len() as f64).sqrt().ceil() as usize).clamp(1, 30);
    let width = (x1 - x0) / bins as f64;
    let mut counts = vec![0u64; bins];
    for v in &finite {
        let b = (((v - x0) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    let ymax = counts.iter().copied().max().unwrap_or(1) + 1;
    let mut svg = String::new();
    {
        let root = ground(&mut svg, SIZE)?;
        let mut chart = frame(&root, title, 64, x0..x1, 0u64..ymax)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("runs")
            .x_label_formatter(&|x| format!("{}", Short(*x)))
            .draw()
            .map_err(e)?;
        chart
            .draw_series(counts.iter().enumerate().map(|(i, &c)| {
                let left = x0 + width * i as f64;
                Rectangle::new([(left, 0), (left + width, c)], BLUE.mix(0.6).filled())
            }))
            .map_err(e)?;
        for (i, &(name, x)) in marks.iter().enumerate() {
            let colour = [RED, GREEN, MAGENTA][i % 3];
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, 0), (x, ymax)],
                    colour.stroke_width(2),
                )))
                .map_err(e)?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
                });
        }
        if !marks.is_empty() {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(e)?;
        }
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// Horizontal bars, one per named category (top to bottom in the order given), of `values` in
/// `x_desc`; `YAxis::Log` puts the value axis in powers of ten (values below 1 drawn at 1), for
/// quantities spanning orders of magnitude such as the time spent in each system call.
pub fn bars(title: &str, x_desc: &str, names: &[String], values: &[f64], scale: YAxis) -> Drawn {
    let n = names.len().min(values.len());
    if n == 0 {
        return Err("nothing to plot".into());
    }
    let at = |v: f64| match scale {
        YAxis::Linear | YAxis::Counts => v.max(0.0),
        YAxis::Log => v.max(1.0).log10(),
    };
    let top = values[..n].iter().copied().map(at).fold(0.0, f64::max);
    if !top.is_finite() {
        return Err("values not finite".into());
    }
    let x1 = if top > 0.0 { top * 1.05 } else { 1.0 };
    let longest = names[..n]
        .iter()
        .map(|r| r.chars().count())
        .max()
        .unwrap_or(4) as u32;
    let label_width = (longest * 8 + 16).clamp(60, 400);
    let height = (110 + 26 * n as u32).clamp(200, 2400);
    let nr = n as u32;
    let mut svg = String::new();
    {
        let root = ground(&mut svg, (900, height))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(label_width)
            // Integer ranges are inclusive in plotters' discrete coordinates.
            .build_cartesian_2d(0.0..x1, (0u32..nr - 1).into_segmented())
            .map_err(e)?;
        // Row 0 is at the bottom in plotters: the first name goes to the top row.
        let name_of = |v: &SegmentValue<u32>| match v {
            SegmentValue::CenterOf(i) if *i < nr => names[(nr - 1 - i) as usize].clone(),
            _ => String::new(),
        };
        let x_label = |x: &f64| match scale {
            YAxis::Linear | YAxis::Counts => format!("{}", Short(*x)),
            YAxis::Log => format!("{}", Short(10f64.powf(*x))),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .label_style(("sans-serif", 13))
            .x_desc(x_desc)
            .x_label_formatter(&x_label)
            .y_label_formatter(&name_of)
            .draw()
            .map_err(e)?;
        chart
            .draw_series(values[..n].iter().enumerate().map(|(i, &v)| {
                let row = nr - 1 - i as u32;
                let mut bar = Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(row)),
                        (at(v), SegmentValue::Exact(row + 1)),
                    ],
                    RGBColor(49, 110, 180).filled(),
                );
                bar.set_margin(3, 3, 0, 0);
                bar
            }))
            .map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// What a heat map's darkest colour stands for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shade {
    /// Each row's largest value: rows are different quantities.
    PerRow,
    /// One value for every cell: rows are the same quantity (CPUs' busy share, up to 100%).
    Upto(f64),
}

/// Rows of a heat map named on its axis; beyond, plotters picks which fit.
const ROW_LABELS: usize = 64;

/// A heat map: `values[r][c]` coloured from white (0) to dark blue (the largest, as `shade`
/// says).
pub fn heatmap(
    title: &str,
    rows: &[String],
    cols: &[String],
    values: &[Vec<f64>],
    shade: Shade,
) -> Drawn {
    if rows.is_empty() || cols.is_empty() {
        return Err("nothing to plot".into());
    }
    let (nr, nc) = (rows.len() as u32, cols.len() as u32);
    let longest = rows.iter().map(|r| r.chars().count()).max().unwrap_or(4) as u32;
    let label_width = (longest * 8 + 16).clamp(60, 400);
    let height = (110 + 32 * nr).clamp(200, 2400);
    let mut svg = String::new();
    {
        let root = ground(&mut svg, (900, height))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(label_width)
            // Integer ranges are inclusive in plotters' discrete coordinates.
            .build_cartesian_2d(
                (0u32..nc - 1).into_segmented(),
                (0u32..nr - 1).into_segmented(),
            )
            .map_err(e)?;
        let name = |names: &[String], v: &SegmentValue<u32>| match v {
            SegmentValue::CenterOf(i) => names.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_mesh()
            // Every CPU's name up to 32 columns; beyond, plotters picks which fit.
            .x_labels((nc as usize).min(32))
            .y_labels((nr as usize).min(ROW_LABELS))
            .label_style(("sans-serif", 14))
            .x_label_formatter(&|v| name(cols, v))
            .y_label_formatter(&|v| name(rows, v))
            .draw()
            .map_err(e)?;
        for (r, row) in values.iter().enumerate() {
            let top = match shade {
                Shade::PerRow => row.iter().copied().fold(0.0, f64::max),
                Shade::Upto(top) => top,
            };
            chart
                .draw_series(row.iter().enumerate().map(|(c, &v)| {
                    let share = if top > 0.0 {
                        (v / top).clamp(0.0, 1.0)
                    } else {
                        0.0
                    };
                    let colour = RGBColor(
                        (255.0 - 225.0 * share) as u8,
                        (255.0 - 170.0 * share) as u8,
                        (255.0 - 60.0 * share) as u8,
                    );
                    let (c, r) = (c as u32, r as u32);
                    Rectangle::new(
                        [
                            (SegmentValue::Exact(c), SegmentValue::Exact(r)),
                            (SegmentValue::Exact(c + 1), SegmentValue::Exact(r + 1)),
                        ],
                        colour.filled(),
                    )
                }))
                .map_err(e)?;
        }
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// A number for an axis: short, with k/M/G above a thousand.
struct Short(f64);

impl std::fmt::Display for Short {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let x = self.0;
        let a = x.abs();
        if a >= 1e9 {
            write!(f, "{:.3}G", x / 1e9)
        } else if a >= 1e6 {
            write!(f, "{:.3}M", x / 1e6)
        } else if a >= 1e4 {
            write!(f, "{:.1}k", x / 1e3)
        } else if a >= 10.0 || x == x.trunc() {
            write!(f, "{x:.0}")
        } else {
            write!(f, "{x:.3}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Threads sampled at 0, 1 and 3 s: 1, then 2, then 1 again, held between the samples.
    #[test]
    fn counts_are_drawn_as_steps_with_room_for_the_legend() {
        let s = steps(&[(0.0, 1.0), (1.0, 2.0), (3.0, 1.0)]);
        assert_eq!(
            s,
            [(0.0, 1.0), (1.0, 1.0), (1.0, 2.0), (3.0, 2.0), (3.0, 1.0)]
        );
        assert_eq!(with_legend_room(0.0, 10.0, 1), 10.0);
        // Two entries: 18% of the height above the data is the legend's.
        let top = with_legend_room(0.0, 10.0, 2);
        assert!((10.0 / top - 0.82).abs() < 1e-9, "{top}");
    }

    fn paths(svg: &str) -> usize {
        svg.matches("<polyline").count() + svg.matches("<path").count()
    }

    #[test]
    fn a_line_plot_draws_its_series() {
        let s = Series {
            name: "a".into(),
            points: vec![(0.0, 1.0), (1.0, 3.0), (2.0, 2.0)],
        };
        let svg = lines("t", "x", "y", &[s], None, YAxis::Linear).expect("drawn");
        assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
        assert!(paths(&svg) >= 1, "{svg}");
        assert!(lines("t", "x", "y", &[], None, YAxis::Linear).is_err());
    }

    #[test]
    fn long_lines_are_thinned_keeping_their_spikes_in_order() {
        let mut pts: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, 1.0)).collect();
        pts[5_001].1 = 50.0;
        pts[7_000].1 = -3.0;
        let t = thin(&pts, 100);
        assert!(t.len() <= 100, "{}", t.len());
        assert!(t.contains(&(5_001.0, 50.0)) && t.contains(&(7_000.0, -3.0)));
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0), "x order kept");
        assert_eq!(thin(&pts[..10], 100), pts[..10].to_vec());
    }

    #[test]
    fn a_histogram_has_a_bar_per_filled_bin_and_survives_one_value() {
        let svg = histogram("t", "x", &[1.0, 2.0, 2.0, 9.0], &[("mean", 3.5)]).expect("drawn");
        assert!(svg.matches("<rect").count() >= 3, "{svg}");
        assert!(histogram("t", "x", &[5.0], &[]).is_ok());
        assert!(histogram("t", "x", &[f64::NAN], &[]).is_err());
    }

    #[test]
    fn bars_have_one_rectangle_each_and_log_bars_keep_small_values_visible() {
        let names: Vec<String> = ["read", "write", "openat"].map(String::from).to_vec();
        let lin = bars("t", "ns", &names, &[10.0, 1e6, 0.0], YAxis::Linear).expect("drawn");
        let log = bars("t", "ns", &names, &[10.0, 1e6, 0.0], YAxis::Log).expect("drawn");
        // The ground, the plotting area and the bars (a zero value is a bar of no width).
        let rects = |s: &str| s.matches("<rect").count();
        assert!(rects(&lin) >= 4 && rects(&log) >= 4, "{lin}");
        for n in &names {
            assert!(lin.contains(n.as_str()), "label {n}");
        }
        // On the log axis 10 ns is a sixth of 1 ms, a visible bar; the axis shows powers of ten.
        assert!(
            log.contains(">1.000M<") || log.contains(">1M<") || log.contains("1.000M"),
            "{log}"
        );
        assert!(bars("t", "ns", &[], &[], YAxis::Log).is_err());
    }

    #[test]
    fn a_heat_map_shades_each_row_on_its_own_scale() {
        let rows = vec!["a".to_string(), "b".to_string()];
        let cols = vec!["0".to_string(), "1".to_string()];
        let values = [vec![1.0, 2.0], vec![100.0, 0.0]];
        let svg = heatmap("t", &rows, &cols, &values, Shade::PerRow).expect("drawn");
        // The largest value of each row gets the darkest colour, zero stays white.
        assert_eq!(svg.matches("#1E55C3").count(), 2, "{svg}");
        // On one scale up to 100, only the 100 is darkest.
        let svg = heatmap("t", &rows, &cols, &values, Shade::Upto(100.0)).expect("drawn");
        assert_eq!(svg.matches("#1E55C3").count(), 1, "{svg}");
    }
}
