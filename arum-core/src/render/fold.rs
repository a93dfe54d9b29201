//! Per-CPU rows on machines with many CPUs: the text report prints every CPU's row up to
//! `CPU_ROWS` CPUs; beyond, a summary of the spread over the CPUs and the busiest CPUs' rows,
//! so that a 256-CPU report reads as a 2-CPU one. `--per-cpu` prints every row; the JSON report
//! always holds them all.

/// CPUs whose rows the text report prints whole.
pub const CPU_ROWS: usize = 8;

/// The CPUs a folded table still shows, the busiest first.
pub const BUSIEST: usize = 3;

/// Whether a table of `cpus` rows is folded under the text options' `limit`.
pub fn folds(cpus: usize, limit: Option<usize>) -> bool {
    limit.is_some_and(|l| cpus > l)
}

/// One quantity over a set of CPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub cpus: usize,
    /// CPUs where it was not zero.
    pub nonzero: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// The CPUs with the largest values (none zero), largest first; ties by CPU number.
    pub busiest: Vec<(u32, f64)>,
}

/// The spread of `values` (CPU, value) and its `busiest` largest CPUs; None for no CPU.
pub fn spread(values: &[(u32, f64)], busiest: usize) -> Option<Spread> {
    let xs: Vec<f64> = values.iter().map(|&(_, v)| v).collect();
    let mut ranked: Vec<(u32, f64)> = values.iter().copied().filter(|&(_, v)| v != 0.0).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let nonzero = ranked.len();
    ranked.truncate(busiest);
    Some(Spread {
        cpus: values.len(),
        nonzero,
        min: arum_stats::quantile::quantile(&xs, 0.0)?,
        median: arum_stats::quantile::median(&xs)?,
        max: arum_stats::quantile::quantile(&xs, 1.0)?,
        busiest: ranked,
    })
}

/// The line under a folded table.
pub fn folded_note(what: &str, cpus: usize) -> String {
    format!(
        " {what} of {cpus} CPUs folded: --per-cpu prints every CPU's row (the JSON report has them all)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_spread_names_the_busiest_cpus_and_counts_the_idle_ones() {
        let s = spread(&[(0, 5.0), (1, 0.0), (2, 9.0), (3, 1.0), (4, 9.0)], 2).unwrap();
        assert_eq!((s.cpus, s.nonzero), (5, 4));
        assert_eq!((s.min, s.median, s.max), (0.0, 5.0, 9.0));
        assert_eq!(s.busiest, [(2, 9.0), (4, 9.0)]);
        assert_eq!(spread(&[], 3), None);
    }

    proptest! {
        // Any set of CPUs: the summary's order holds, the busiest are the largest values, and
        // none of them is idle.
        #[test]
        fn spreads_are_ordered(values in proptest::collection::vec(0u32..1000, 1..300), keep in 0usize..8) {
            let cpus: Vec<(u32, f64)> = values.iter().enumerate().map(|(c, &v)| (c as u32, f64::from(v))).collect();
            let s = spread(&cpus, keep).unwrap();
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert_eq!(s.nonzero, values.iter().filter(|&&v| v != 0).count());
            prop_assert_eq!(s.busiest.len(), keep.min(s.nonzero));
            let mut sorted = values.clone();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            for (i, (_, v)) in s.busiest.iter().enumerate() {
                prop_assert_eq!(*v, f64::from(sorted[i]));
                prop_assert!(*v > 0.0);
            }
        }
    }
}
