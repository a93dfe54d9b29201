//! Many tests at once: Benjamini and Hochberg's control of the false discovery rate ("Controlling
//! the False Discovery Rate", 1995). A comparison tests every metric of two sets of runs; at 90%
//! one identical metric in ten looks "significant" by chance alone, so each test's p-value is
//! adjusted for the number of tests in its family before it is judged.

/// The Benjamini-Hochberg adjusted p-values of `p`, in the same order: for the i-th smallest of
/// m values, min over j ≥ i of p(j) · m / j, capped at 1 (R's `p.adjust(p, "BH")`, scipy's
/// `false_discovery_control`). A value is significant at level 1 - q when its adjusted p is
/// below q; the expected share of false findings among those is then at most q.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 1.0_f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank + 1) as f64);
        // p·m/m may round below p.
        adjusted[i] = running.min(1.0).max(p[i]);
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    // scipy 1.17: stats.false_discovery_control([0.039, 0.2, 0.5, 0.01, 0.8, 0.001, 0.04, 0.9,
    // 0.041]) = [0.0738, 0.3, 0.642857142857, 0.045, 0.9, 0.009, 0.0738, 0.9, 0.0738].
    #[test]
    fn nine_p_values_as_scipy_adjusts_them() {
        let p = [0.039, 0.2, 0.5, 0.01, 0.8, 0.001, 0.04, 0.9, 0.041];
        let want = [
            0.0738,
            0.3,
            0.642_857_142_857_142_9,
            0.045,
            0.9,
            0.009,
            0.0738,
            0.9,
            0.0738,
        ];
        let got = benjamini_hochberg(&p);
        for (g, w) in got.iter().zip(want) {
            assert!(close(*g, w), "{got:?}");
        }
    }

    #[test]
    fn one_test_is_not_adjusted_and_none_is_empty() {
        assert_eq!(benjamini_hochberg(&[0.039]), vec![0.039]);
        assert!(benjamini_hochberg(&[]).is_empty());
    }

    proptest! {
        // For any family: an adjusted p is never below its raw p, never above 1, and the
        // adjustment keeps the order of the raw p-values.
        #[test]
        fn adjusted_values_bound_and_keep_the_order(p in prop::collection::vec(0.0f64..=1.0, 1..60)) {
            let a = benjamini_hochberg(&p);
            for i in 0..p.len() {
                prop_assert!(a[i] >= p[i] && a[i] <= 1.0);
                for j in 0..p.len() {
                    if p[i] < p[j] {
                        prop_assert!(a[i] <= a[j]);
                    }
                }
            }
        }
    }
}
