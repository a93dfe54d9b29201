//! SVG plots (`--plots DIR`): one histogram per measurement (`<name>.svg`), the memory-latency
//! curve with the detected and reported cache sizes, and the file-cache curve. Each is drawn
//! into a string; `destinations` writes them.

use plotters::prelude::*;

use super::Figures;
use crate::model::{Calibration, Measurement};

fn e<E: std::fmt::Display>(err: E) -> String {
    err.to_string()
}

/// One plot: its file name in the plots directory, and the SVG document.
pub struct Plot {
    pub file_name: String,
    pub svg: String,
}

/// Every plot the calibration has data for.
pub fn render_all(cal: &Calibration) -> Result<Vec<Plot>, String> {
    let mut plots = Vec::new();
    for m in &cal.measurements {
        draw(&mut plots, format!("{}.svg", m.name), |svg| {
            histogram(svg, m)
        })?;
    }
    draw(&mut plots, "memory-latency.svg".into(), |svg| {
        latency_curve(svg, cal)
    })?;
    draw(&mut plots, "file-cache.svg".into(), |svg| {
        file_cache_curve(svg, cal)
    })?;
    Ok(plots)
}

/// Runs `plot` on an empty document and keeps the document when it drew one (a plot without
/// data draws nothing); an error names the file.
fn draw(
    plots: &mut Vec<Plot>,
    file_name: String,
    plot: impl FnOnce(&mut String) -> Result<bool, String>,
) -> Result<(), String> {
    let mut svg = String::new();
    if plot(&mut svg).map_err(|err| format!("{file_name}: {err}"))? {
        plots.push(Plot { file_name, svg });
    }
    Ok(())
}

fn histogram(svg: &mut String, m: &Measurement) -> Result<bool, String> {
    let (Some(h), Some(s)) = (&m.histogram, &m.summary) else {
        return Ok(false);
    };
    let figures = Figures::like(m.unit, s.median);
    let x0 = h.low;
    let x1 = h.high().max(x0 + x0.abs().max(1e-9) * 1e-6);
    let ymax = h.counts.iter().copied().max().unwrap_or(1).max(1) * 11 / 10 + 1;
    let root = SVGBackend::with_string(svg, (800, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{}: {}", m.name, m.title), ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, 0u64..ymax)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_label_formatter(&|v| figures.format(*v))
        .x_desc(format!(
            "median {}, {} samples, {} beyond the 99th percentile",
            figures.format(s.median),
            s.n,
            h.above
        ))
        .y_desc("samples")
        .draw()
        .map_err(e)?;
    chart
        .draw_series(h.counts.iter().enumerate().map(|(i, &c)| {
            Rectangle::new([(h.edge(i), 0), (h.edge(i + 1), c)], BLUE.mix(0.6).filled())
        }))
        .map_err(e)?;
    let med = s.median;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(med, 0), (med, ymax)],
            RED.stroke_width(2),
        )))
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(true)
}

fn latency_curve(svg: &mut String, cal: &Calibration) -> Result<bool, String> {
    let pts: Vec<(f64, f64)> = cal
        .measurements
        .iter()
        .filter(|m| m.name.starts_with("memory.latency."))
        .filter_map(|m| Some((*m.details.get("size_bytes")? / 1024.0, m.median()?)))
        .collect();
    if pts.len() < 2 {
        return Ok(false);
    }
    let (xmin, xmax) = (pts[0].0, pts[pts.len() - 1].0);
    let ymin = pts.iter().map(|p| p.1).fold(f64::MAX, f64::min).max(0.01) * 0.8;
    let ymax = pts.iter().map(|p| p.1).fold(0.0, f64::max) * 1.25;
    let root = SVGBackend::with_string(svg, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Load latency by buffer size (pointer chasing)",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d((xmin..xmax).log_scale(), (ymin..ymax).log_scale())
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("buffer size (KiB)")
        .y_desc("ns per load")
        .draw()
        .map_err(e)?;
    chart
        .draw_series(LineSeries::new(pts.clone(), BLUE.stroke_width(2)))
        .map_err(e)?;
    chart
        .draw_series(pts.iter().map(|&p| Circle::new(p, 3, BLUE.filled())))
        .map_err(e)?;
    if let Some(c) = &cal.findings.caches {
        for l in c.reported.data_levels() {
            let x = l.size_bytes as f64 / 1024.0;
            if (xmin..=xmax).contains(&x) {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x, ymin), (x, ymax)],
                        GREEN.stroke_width(1),
                    )))
                    .map_err(e)?
                    .label(format!("L{} reported", l.level))
                    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], GREEN));
            }
        }
        for (i, d) in c.detected.iter().enumerate() {
            let x = d.size_bytes as f64 / 1024.0;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, ymin), (x, ymax)],
                    RED.stroke_width(1),
                )))
                .map_err(e)?
                .label(format!(
                    "step {} detected ({})",
                    i + 1,
                    arum_units::size::format(d.size_bytes as f64)
                ))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], RED));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(e)?;
    }
    root.present().map_err(e)?;
    Ok(true)
}

fn file_cache_curve(svg: &mut String, cal: &Calibration) -> Result<bool, String> {
    let Some(fc) = &cal.findings.file_cache else {
        return Ok(false);
    };
    if fc.curve.len() < 2 {
        return Ok(false);
    }
    let pts: Vec<(f64, f64)> = fc
        .curve
        .iter()
        .map(|&(s, r)| ((s >> 20) as f64, r / 1e9))
        .collect();
    let (xmin, xmax) = (pts[0].0, pts[pts.len() - 1].0);
    let ymax = pts.iter().map(|p| p.1).fold(0.0, f64::max) * 1.2;
    let root = SVGBackend::with_string(svg, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("File re-read throughput by file size", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d((xmin..xmax).log_scale(), 0.0..ymax)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("file size (MiB)")
        .y_desc("GB/s")
        .draw()
        .map_err(e)?;
    chart
        .draw_series(LineSeries::new(pts.clone(), BLUE.stroke_width(2)))
        .map_err(e)?;
    chart
        .draw_series(pts.iter().map(|&p| Circle::new(p, 3, BLUE.filled())))
        .map_err(e)?;
    if let Some(u) = fc.uncached_bytes_per_s {
        let y = u / 1e9;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(xmin, y), (xmax, y)],
                RED.stroke_width(1),
            )))
            .map_err(e)?;
    }
    root.present().map_err(e)?;
    Ok(true)
}
