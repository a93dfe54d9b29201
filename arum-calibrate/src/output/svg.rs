//! SVG plots (`--plots DIR`): one histogram per measurement (`<name>.svg`), the memory-latency
//! curve with the detected and reported cache sizes, and the file-cache curve.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::ns_scale;
use crate::model::{Calibration, Measurement, Unit};

type Res = Result<(), String>;

fn e<E: std::fmt::Display>(err: E) -> String {
    err.to_string()
}

/// Writes every plot into `dir`; returns the files written.
pub fn write_all(dir: &Path, cal: &Calibration) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    let mut written = Vec::new();
    for m in &cal.measurements {
        if m.histogram.is_some() {
            let p = dir.join(format!("{}.svg", m.name));
            histogram(&p, m).map_err(|err| format!("{}: {err}", p.display()))?;
            written.push(p);
        }
    }
    let p = dir.join("memory-latency.svg");
    if latency_curve(&p, cal)? {
        written.push(p);
    }
    let p = dir.join("file-cache.svg");
    if file_cache_curve(&p, cal)? {
        written.push(p);
    }
    Ok(written)
}

fn histogram(path: &Path, m: &Measurement) -> Res {
    let (Some(h), Some(s)) = (&m.histogram, &m.summary) else {
        return Ok(());
    };
    let (div, unit) = match m.unit {
        Unit::Ns => ns_scale(s.median),
        Unit::BytesPerS => (1e9, "GB/s"),
    };
    let x0 = h.low / div;
    let x1 = (h.high() / div).max(x0 + x0.abs().max(1e-9) * 1e-6);
    let ymax = h.counts.iter().copied().max().unwrap_or(1).max(1) * 11 / 10 + 1;
    let root = SVGBackend::new(path, (800, 480)).into_drawing_area();
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
        .x_desc(format!(
            "{unit} (median {:.3}, {} samples, {} beyond the 99th percentile)",
            s.median / div,
            s.n,
            h.above
        ))
        .y_desc("samples")
        .draw()
        .map_err(e)?;
    chart
        .draw_series(h.counts.iter().enumerate().map(|(i, &c)| {
            Rectangle::new(
                [(h.edge(i) / div, 0), (h.edge(i + 1) / div, c)],
                BLUE.mix(0.6).filled(),
            )
        }))
        .map_err(e)?;
    let med = s.median / div;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(med, 0), (med, ymax)],
            RED.stroke_width(2),
        )))
        .map_err(e)?;
    root.present().map_err(e)
}

fn latency_curve(path: &Path, cal: &Calibration) -> Result<bool, String> {
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
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
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
        for d in &c.detected {
            let x = d.size_bytes as f64 / 1024.0;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, ymin), (x, ymax)],
                    RED.stroke_width(1),
                )))
                .map_err(e)?;
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

fn file_cache_curve(path: &Path, cal: &Calibration) -> Result<bool, String> {
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
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
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
