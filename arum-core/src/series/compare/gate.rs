//! `--fail-if-worse METRIC:PCT`: a CI gate. It fails when the metric got worse by more than PCT
//! percent and the change is significant at the confidence level. Between two single runs
//! nothing can be significant: the change alone decides, and the verdict says so.

use serde::{Deserialize, Serialize};

use super::analysis::{Change, Comparison};
use crate::error::ArumError;
use crate::fields::Better;
use crate::report::metrics;

#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// As the user named it.
    pub given: String,
    pub metric: String,
    pub percent: f64,
}

/// The verdict of one gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    pub gate: String,
    pub metric: String,
    pub failed: bool,
    pub reason: String,
}

/// Parses `METRIC:PCT` (PCT may end in `%`).
pub fn parse(spec: &str) -> Result<Gate, ArumError> {
    let bad = || {
        ArumError::Usage(format!(
            "--fail-if-worse {spec:?}: write METRIC:PCT, e.g. usage.wall_ns:5 or wall:5%"
        ))
    };
    let (metric, pct) = spec.rsplit_once(':').ok_or_else(bad)?;
    let percent: f64 = pct
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| bad())?;
    if metric.is_empty() || !percent.is_finite() || percent < 0.0 {
        return Err(bad());
    }
    Ok(Gate {
        given: spec.to_string(),
        metric: metric.to_string(),
        percent,
    })
}

/// Resolves the gate's metric among `names` (full name, unique tail, or a short name); its
/// direction is the one its table of fields declares, and a metric that goes neither way
/// cannot get worse, so a gate on it is refused.
pub fn resolve(gate: &Gate, names: &[&str]) -> Result<Gate, ArumError> {
    let metric = metrics::resolve(&gate.metric, names).map_err(|why| {
        ArumError::Usage(format!(
            "--fail-if-worse {}: {why}; `arum compare --all` lists the metrics",
            gate.given
        ))
    })?;
    if metrics::better(metric) == Better::Neither {
        return Err(ArumError::Usage(format!(
            "--fail-if-worse {}: {metric} is better neither higher nor lower, so it cannot get \
             worse; gate a time, a size or a count of faults or misses",
            gate.given
        )));
    }
    Ok(Gate {
        metric: metric.to_string(),
        ..gate.clone()
    })
}

/// Judges a resolved gate against a comparison.
pub fn judge(gate: &Gate, c: &Comparison) -> GateResult {
    let result = |failed: bool, reason: String| GateResult {
        gate: gate.given.clone(),
        metric: gate.metric.clone(),
        failed,
        reason,
    };
    let Some(m) = c.metrics.iter().find(|m| m.metric == gate.metric) else {
        return result(false, "0 in both: nothing to compare".into());
    };
    let Some(pct) = m.percent() else {
        return result(
            false,
            "the base is 0, so no percentage can be judged".to_string(),
        );
    };
    let worse_by = if m.change == Change::Worse {
        pct.abs()
    } else {
        0.0
    };
    let beyond = worse_by > gate.percent;
    // Several gates are one family: each is judged by its adjusted p.
    match (m.significant, m.p_adjusted.or(m.p_value)) {
        (Some(sig), Some(p)) => {
            let failed = beyond && sig;
            let why = if m.change != Change::Worse {
                format!("not worse ({pct:+.2}%)")
            } else if !beyond {
                format!("{worse_by:.2}% worse, within {}%", gate.percent)
            } else if !sig {
                format!(
                    "{worse_by:.2}% worse but not significant at {} (adjusted p = {p:.3})",
                    arum_units::percent::format_level(c.confidence_level)
                )
            } else {
                format!(
                    "{worse_by:.2}% worse, significant at {} (adjusted p = {p:.2e}), beyond {}%",
                    arum_units::percent::format_level(c.confidence_level),
                    gate.percent
                )
            };
            result(failed, why)
        }
        _ => result(
            beyond,
            format!(
                "{pct:+.2}% from single runs: no significance can be tested, the change alone decides"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_specs() {
        let g = parse("usage.wall_ns:5").unwrap();
        assert_eq!((g.metric.as_str(), g.percent), ("usage.wall_ns", 5.0));
        assert_eq!(parse("wall:2.5%").unwrap().percent, 2.5);
        for bad in ["wall", ":5", "wall:x", "wall:-1"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn gates_take_the_direction_of_their_metric() {
        let names = ["usage.wall_ns", "usage.cpu_utilisation"];
        let g = resolve(&parse("wall:5").unwrap(), &names).unwrap();
        assert_eq!(g.metric, "usage.wall_ns");
        let e = resolve(&parse("cpu_utilisation:5").unwrap(), &names).unwrap_err();
        assert!(e.to_string().contains("cannot get worse"), "{e}");
    }
}
