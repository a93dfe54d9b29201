//! `-I`: the counters' and the functions' readings during the run, as time series.

use crate::render::html::page::{figure, section};
use crate::render::html::plot::{self, Series};
use crate::report::model::Report;

pub fn render(r: &Report) -> Option<String> {
    let mut body = String::new();
    if let Some(c) = r.counters.as_ref().filter(|c| !c.intervals.is_empty()) {
        let series: Vec<Series> = c
            .events
            .iter()
            .enumerate()
            .map(|(i, e)| Series {
                name: e.alias.clone().unwrap_or_else(|| e.name.clone()),
                points: rates(
                    c.intervals
                        .iter()
                        .map(|iv| (iv.t_end_ns, iv.counts.get(i).map_or(0, |v| v.iter().sum()))),
                ),
            })
            .collect();
        body.push_str(&figure(plot::lines(
            "Events per second, all CPUs",
            "seconds since the program started",
            "per second",
            &series,
            None,
            plot::YAxis::Linear,
        )));
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
    use super::rates;

    #[test]
    fn rates_divide_by_each_interval_length() {
        let r = rates([(500_000_000, 10), (1_500_000_000, 30)].into_iter());
        assert_eq!(r, vec![(0.5, 20.0), (1.5, 30.0)]);
    }
}
