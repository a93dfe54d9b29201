//! Statistics for repeated measurements of one quantity, one idea per module. Every median,
//! quantile, interval and test of the workspace is computed here, by one rule each:
//!
//! - `quantile`: quantiles and the median, by linear interpolation between order statistics (R's
//!   type 7, numpy's default); none for an empty sample;
//! - `bucketed`: the same quantiles of values kept as bucket counts (hdrhistogram), kept inside
//!   the smallest and largest values recorded;
//! - `median_interval`: the distribution-free confidence interval of the median (binomial order
//!   statistics);
//! - `summary`: mean, median, sample standard deviation, min, max;
//! - `confidence`: the confidence interval of the mean at a chosen level (Student's t, or the
//!   bootstrap where t would leave the values' support), and how each interval was computed;
//! - `outliers`: modified z-scores on the median absolute deviation (Iglewicz and Hoaglin);
//! - `welch`: Welch's unequal-variances t-test, the difference of two means and the ratio of
//!   two means with their confidence intervals;
//! - `fdr`: Benjamini-Hochberg adjusted p-values for a family of tests;
//! - `changepoint`: change points of a series in commit order, by E-divisive means (Matteson
//!   and James) with a seeded permutation test of each.
//!
//! The t distribution comes from `statrs`; nothing here hand-writes a special function.

#![forbid(unsafe_code)]

pub mod bucketed;
pub mod changepoint;
pub mod confidence;
pub mod fdr;
pub mod median_interval;
pub mod outliers;
pub mod quantile;
pub mod summary;
pub mod welch;

pub use bucketed::{clamp_to_observed, histogram_quantile, quantile_of_buckets};
pub use changepoint::{change_points, ChangePoint, ChangePointOptions};
pub use confidence::{mean_interval, Interval, Method};
pub use fdr::benjamini_hochberg;
pub use median_interval::{median_interval, median_interval_ranks, median_interval_sorted};
pub use outliers::{modified_z_scores, outliers, OUTLIER_THRESHOLD};
pub use quantile::{median, quantile, quantile_sorted};
pub use summary::{mean, std_dev, Summary};
pub use welch::{ratio_of_means, welch, Ratio, Welch};

/// The default confidence level, as in the original ARUM study (90%).
pub const DEFAULT_LEVEL: f64 = 0.90;

/// Checks a confidence level given by a user: strictly between 0 and 1.
pub fn valid_level(level: f64) -> bool {
    level > 0.0 && level < 1.0
}
