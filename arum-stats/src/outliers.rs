//! Outliers by the modified z-score of Iglewicz and Hoaglin ("How to Detect and Handle
//! Outliers", 1993): M_i = 0.6745 (x_i - median) / MAD, where MAD is the median absolute
//! deviation from the median. Median and MAD are not dragged by the outliers themselves, as the
//! mean and standard deviation are, so one slow run among ten is still seen as one.

/// |M| above this marks an outlier (Iglewicz and Hoaglin's recommendation).
pub const OUTLIER_THRESHOLD: f64 = 3.5;

/// 0.6745 is the 75th percentile of the standard normal: for normal data, MAD / 0.6745 estimates
/// the standard deviation.
const MAD_SCALE: f64 = 0.6745;
/// When more than half the values are equal the MAD is 0; the mean absolute deviation scaled by
/// 1.253314 (sqrt(pi/2), its ratio to the standard deviation for normal data) stands in for it.
const MEAN_AD_SCALE: f64 = 1.253_314;

/// The modified z-score of each value; all 0 when the values do not spread at all.
pub fn modified_z_scores(xs: &[f64]) -> Vec<f64> {
    scores(xs).unwrap_or_default()
}

/// The scores; none for an empty sample.
fn scores(xs: &[f64]) -> Option<Vec<f64>> {
    let med = crate::median(xs)?;
    let deviations: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    let mad = crate::median(&deviations)?;
    let scale = if mad > 0.0 {
        mad / MAD_SCALE
    } else {
        MEAN_AD_SCALE * crate::mean(&deviations)
    };
    if scale <= 0.0 {
        return Some(vec![0.0; xs.len()]);
    }
    Some(xs.iter().map(|x| (x - med) / scale).collect())
}

/// Indexes of the values whose modified z-score exceeds [`OUTLIER_THRESHOLD`] in magnitude.
/// Fewer than three values have no outliers: there is no majority to stand out from.
pub fn outliers(xs: &[f64]) -> Vec<usize> {
    if xs.len() < 3 {
        return Vec::new();
    }
    modified_z_scores(xs)
        .iter()
        .enumerate()
        .filter(|(_, z)| z.abs() > OUTLIER_THRESHOLD)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Computed once with numpy 2 / scipy 1.17 here: median 2.2, MAD 0.1
    // (scipy.stats.median_abs_deviation), 0.6745 * (x - 2.2) / 0.1.
    const RUNS: [f64; 10] = [2.1, 2.2, 2.0, 2.3, 2.2, 2.1, 9.0, 2.2, 2.0, 2.4];
    const SCORES: [f64; 10] = [
        -0.6745, 0.0, -1.349, 0.6745, 0.0, -0.6745, 45.866, 0.0, -1.349, 1.349,
    ];

    #[test]
    fn scores_as_numpy_computes_them() {
        for (got, want) in modified_z_scores(&RUNS).iter().zip(SCORES) {
            assert!((got - want).abs() < 1e-9, "{got} != {want}");
        }
        assert_eq!(outliers(&RUNS), [6]);
    }

    #[test]
    fn a_zero_mad_falls_back_to_the_mean_absolute_deviation() {
        // Seven equal values and one far off: MAD = 0, mean absolute deviation = 10 / 8.
        let xs = [5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 15.0];
        let z = modified_z_scores(&xs);
        assert!((z[7] - 10.0 / (MEAN_AD_SCALE * 1.25)).abs() < 1e-9);
        assert_eq!(outliers(&xs), [7]);
    }

    #[test]
    fn equal_values_and_tiny_samples_have_none() {
        assert!(outliers(&[3.0; 6]).is_empty());
        assert!(outliers(&[1.0, 100.0]).is_empty());
    }
}
