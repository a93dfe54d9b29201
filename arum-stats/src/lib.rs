//! Statistics for repeated measurements of one quantity, one idea per module:
//!
//! - `summary`: mean, median, sample standard deviation, min, max;
//! - `confidence`: Student's t confidence interval of the mean at a chosen level;
//! - `outliers`: modified z-scores on the median absolute deviation (Iglewicz and Hoaglin);
//! - `welch`: Welch's unequal-variances t-test, the difference of two means and the ratio of
//!   two means with their confidence intervals.
//!
//! The t distribution comes from `statrs`; nothing here hand-writes a special function.

pub mod confidence;
pub mod outliers;
pub mod summary;
pub mod welch;

pub use confidence::{mean_interval, Interval};
pub use outliers::{modified_z_scores, outliers, OUTLIER_THRESHOLD};
pub use summary::{mean, median, std_dev, Summary};
pub use welch::{ratio_of_means, welch, Ratio, Welch};

/// The default confidence level, as in the original ARUM study (90%).
pub const DEFAULT_LEVEL: f64 = 0.90;

/// Checks a confidence level given by a user: strictly between 0 and 1.
pub fn valid_level(level: f64) -> bool {
    level > 0.0 && level < 1.0
}
