//! The words and numbers of a compared metric that every rendering shows (text, Markdown, HTML):
//! one place decides the verdict, so that no rendering calls a change "worse" that another calls
//! not significant.

use arum_units::Unit;

use super::analysis::{Change, MetricComparison};

/// "better *", "worse **", "higher", "lower ***"; "~" when the change is not significant by its
/// adjusted p; "same" when the means are equal. Untested changes (a single run on a side) get
/// their direction alone: nothing marks them significant.
pub fn verdict(m: &MetricComparison) -> String {
    let word = match (m.change, m.significant) {
        (Change::Same, _) => return "same".into(),
        (_, Some(false)) => return "~".into(),
        (Change::Better, _) => "better",
        (Change::Worse, _) => "worse",
        (Change::Higher, _) => "higher",
        (Change::Lower, _) => "lower",
    };
    format!("{word} {}", m.marks()).trim_end().to_string()
}

/// A p-value to three decimals, or "<0.001"; "-" when there is none.
pub fn p(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(p) if p < 0.001 => "<0.001".into(),
        Some(p) => format!("{p:.3}"),
    }
}

/// The ratio of the means with its interval, and the interval's method where it is not Student's
/// t ("1.020 [0.870, 1.190] log"); "-" without a ratio.
pub fn ratio(m: &MetricComparison) -> String {
    match (m.ratio, m.ratio_ci) {
        (Some(r), Some(ci)) => format!(
            "{r:.3} [{:.3}, {:.3}]{}",
            ci.low,
            ci.high,
            method_tag(ci.method)
        ),
        (Some(r), None) => format!("{r:.3}"),
        _ => "-".into(),
    }
}

/// An interval "low … high" in `unit`, tagged with its method where it is not Student's t.
pub fn interval(unit: Unit, ci: &arum_stats::Interval) -> String {
    format!(
        "{} … {}{}",
        unit.format(ci.low),
        unit.format(ci.high),
        method_tag(ci.method)
    )
}

/// " log", " delta", " boot" after an interval computed otherwise than by Student's t.
pub fn method_tag(method: arum_stats::Method) -> &'static str {
    match method {
        arum_stats::Method::StudentT | arum_stats::Method::OrderStatistics => "",
        arum_stats::Method::LogScale => " log",
        arum_stats::Method::Delta => " delta",
        arum_stats::Method::Bootstrap => " boot",
    }
}

/// The legend of the verdicts and interval tags, for a comparison at level `pct` ("90%") over
/// `family` metrics.
pub fn legend(pct: &str, family: usize) -> String {
    format!(
        "* significant at {pct} by Welch's t-test, p adjusted for the {family} metrics \
         compared (Benjamini-Hochberg); ** at 99%, *** at 99.9%; ~ not significant.\n\
         Intervals: log = on the log scale (a ratio stays positive), boot = bootstrap (a count \
         or time stays ≥ 0), delta = delta method (a sample has negative values); `arum compare \
         --all` tests every metric"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(change: Change, p: f64, adjusted: f64, level: f64) -> MetricComparison {
        MetricComparison {
            metric: "usage.wall_ns".into(),
            base_mean: 1.0,
            new_mean: 2.0,
            base_n: 5,
            new_n: 5,
            difference: 1.0,
            difference_ci: None,
            ratio: Some(2.0),
            ratio_ci: None,
            p_value: Some(p),
            p_adjusted: Some(adjusted),
            significant: Some(adjusted < 1.0 - level),
            change,
        }
    }

    #[test]
    fn the_verdict_follows_the_adjusted_p() {
        // Raw p 0.039 looks significant at 90%; adjusted over a family it is not.
        assert_eq!(verdict(&metric(Change::Worse, 0.039, 0.49, 0.9)), "~");
        assert_eq!(
            verdict(&metric(Change::Worse, 0.0001, 0.0005, 0.9)),
            "worse ***"
        );
        assert_eq!(
            verdict(&metric(Change::Better, 0.01, 0.05, 0.9)),
            "better *"
        );
        assert_eq!(verdict(&metric(Change::Same, 1.0, 1.0, 0.9)), "same");
    }
}
