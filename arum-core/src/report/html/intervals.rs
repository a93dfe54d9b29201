//! `-I`: the counters' and the functions' readings during the run, as time series.

use crate::render::html::page::{figure, section};
use crate::render::html::plot::{self, Series};
use crate::report::model::Report;

pub fn render(r: &Report) -> Option<String> {
    let mut body = String::new();
    if let Some(c) = r.counters.as_ref().filter(|c| !c.intervals.is_empty()) {
        // The software clocks count nanoseconds (10⁹ a second per busy CPU): on the axis of
        // the other events' counts they would flatten them to 0, so they get their own plot,
        // in CPUs kept busy.
        let (mut clocks, mut counts) = (Vec::new(), Vec::new());
        for (i, e) in c.events.iter().enumerate() {
            let points = rates(
                c.intervals
                    .iter()
                    .map(|iv| (iv.t_end_ns, iv.counts.get(i).map_or(0, |v| v.iter().sum()))),
            );
            let name = e.alias.clone().unwrap_or_else(|| e.name.clone());
            if matches!(e.name.as_str(), "task-clock" | "cpu-clock") {
                let cpus = points.into_iter().map(|(t, v)| (t, v / 1e9)).collect();
                clocks.push(Series { name, points: cpus });
            } else {
                counts.push(Series { name, points });
            }
        }
        if !clocks.is_empty() {
            body.push_str(&figure(plot::lines(
                "CPUs kept busy (task-clock, cpu-clock)",
                "seconds since the program started",
                "CPUs",
                &clocks,
                None,
                plot::YAxis::Linear,
            )));
        }
        if !counts.is_empty() {
            body.push_str(&figure(plot::lines(
                "Events per second, all CPUs",
                "seconds since the program started",
                "per second",
                &counts,
                None,
                axis_for(&counts),
            )));
        }
    }
    if let Some(f) = r.functions.as_ref().filter(|f| !f.intervals.is_empty()) {
        let series: Vec<Series> = f
            .functions
            .iter()
            .enumerate()
            .map(|(i, func)| Series {
                name: func.name.clone(),
                points: rates(
                    f.intervals
                        .iter()
                        .map(|iv| (iv.t_end_ns, iv.calls.get(i).copied().unwrap_or(0))),
                ),
            })
            .collect();
        body.push_str(&figure(plot::lines(
            "Function calls per second",
            "seconds since the program started",
            "calls per second",
            &series,
            None,
            plot::YAxis::Linear,
        )));
    }
    if body.is_empty() {
        return None;
    }
    Some(section("intervals", "Readings during the run (-I)", &body))
}

/// A log axis where the lines' peaks are more than 100 times apart (page faults beside
/// instructions), so that each line keeps its shape; linear otherwise.
fn axis_for(series: &[Series]) -> plot::YAxis {
    let peaks: Vec<f64> = series
        .iter()
        .map(|s| s.points.iter().map(|p| p.1).fold(0.0, f64::max))
        .filter(|p| *p > 0.0)
        .collect();
    let (lo, hi) = peaks.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(*p), hi.max(*p))
    });
    if peaks.len() >= 2 && hi > 100.0 * lo {
        plot::YAxis::Log
    } else {
        plot::YAxis::Linear
    }
}

/// Counts per interval (ending at `t_end_ns`) as rates at the interval's end.
fn rates(readings: impl Iterator<Item = (u64, u64)>) -> Vec<(f64, f64)> {
    let mut last = 0u64;
    readings
        .map(|(t, n)| {
            let dt = t.saturating_sub(last).max(1) as f64 / 1e9;
            last = t;
            (t as f64 / 1e9, n as f64 / dt)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{axis_for, plot, rates, Series};

    // Page faults at 100/s beside instructions at 10⁹/s: a log axis; two like rates: linear.
    #[test]
    fn lines_orders_of_magnitude_apart_get_a_log_axis() {
        let line = |peak: f64| Series {
            name: String::new(),
            points: vec![(0.0, peak / 2.0), (1.0, peak)],
        };
        assert!(axis_for(&[line(100.0), line(1e9)]) == plot::YAxis::Log);
        assert!(axis_for(&[line(100.0), line(3000.0)]) == plot::YAxis::Linear);
        assert!(axis_for(&[line(1e9)]) == plot::YAxis::Linear);
    }

    #[test]
    fn rates_divide_by_each_interval_length() {
        let r = rates([(500_000_000, 10), (1_500_000_000, 30)].into_iter());
        assert_eq!(r, vec![(0.5, 20.0), (1.5, 30.0)]);
    }
}
