//! The programs' log-linear histogram of durations (`hist_bucket` in `bpf/arum.h`): values
//! below 64 ns each have a bucket of their own, then every power of two is cut into 64 buckets of
//! equal width, so a bucket's middle is within 1/128 (0.8%) of every value it holds.

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

/// The values bucket `b` holds: `low..=high`.
pub fn bounds(b: u32) -> (u64, u64) {
    let b = u64::from(b);
    if b < SUB {
        return (b, b);
    }
    let exp = (b - SUB) / SUB + u64::from(SUB_BITS);
    let sub = (b - SUB) % SUB;
    let width_bits = exp - u64::from(SUB_BITS);
    let low = (SUB + sub) << width_bits;
    (low, low + ((1u64 << width_bits) - 1))
}

/// The bucket of `v`, as the programs compute it (kept here for the tests that check the two).
pub fn bucket(v: u64) -> u32 {
    if v < SUB {
        return v as u32;
    }
    let exp = 63 - v.leading_zeros();
    let sub = (v >> (exp - SUB_BITS)) & (SUB - 1);
    (SUB as u32) + (exp - SUB_BITS) * (SUB as u32) + sub as u32
}

/// The value a bucket stands for: its middle.
pub fn middle(b: u32) -> u64 {
    let (low, high) = bounds(b);
    low + (high - low) / 2
}

/// A histogram's (bucket, calls) as (value, calls), each bucket standing for its middle: what
/// arum-stats' bucketed quantiles take.
pub fn values(buckets: &[(u32, u64)]) -> impl Iterator<Item = (f64, u64)> + Clone + '_ {
    buckets.iter().map(|&(b, n)| (middle(b) as f64, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_falls_in_its_buckets_bounds_within_the_stated_error() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut values: Vec<u64> = (0..64).chain([u64::MAX, u64::MAX - 1, 1 << 63]).collect();
        for _ in 0..20_000 {
            // xorshift: values spread over every magnitude.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64));
        }
        for v in values {
            let b = bucket(v);
            let (low, high) = bounds(b);
            assert!(
                low <= v && v <= high,
                "{v} outside bucket {b} [{low}, {high}]"
            );
            let mid = middle(b) as f64;
            assert!(
                (mid - v as f64).abs() <= v as f64 / 128.0,
                "{v}: middle {mid}"
            );
        }
    }

    #[test]
    fn buckets_are_contiguous_and_ascending() {
        for b in 0..3000 {
            let (_, high) = bounds(b);
            let (next_low, _) = bounds(b + 1);
            assert_eq!(high + 1, next_low, "a gap after bucket {b}");
        }
    }
}
