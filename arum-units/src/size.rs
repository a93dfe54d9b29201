//! Sizes in bytes: read from options (`64K`, `1.5 MiB`, `4096B`), written for people
//! (`1.5 KiB`).

use crate::ladder::{Ladder, Ratio};
use crate::number;
use crate::UnitError;

/// The units a size may be written in (compared in lower case), with their bytes. Every
/// multiple is binary, `KB` included, as Linux tools (ulimit, dd, free, numactl) write them.
const UNITS: &[(&str, u64)] = &[
    ("b", 1),
    ("k", 1 << 10),
    ("kb", 1 << 10),
    ("kib", 1 << 10),
    ("m", 1 << 20),
    ("mb", 1 << 20),
    ("mib", 1 << 20),
    ("g", 1 << 30),
    ("gb", 1 << 30),
    ("gib", 1 << 30),
    ("t", 1 << 40),
    ("tb", 1 << 40),
    ("tib", 1 << 40),
];

const UNIT_NAMES: &str = "B, K, M, G or T (each also as KB or KiB, in any case; all of 1024)";

const EXAMPLE: &str = "4096B, 64K or 1.5M";

/// The units a size is shown in, each 1024 of the one before.
const STEPS: Ladder = Ladder {
    ratio: Ratio::Binary,
    units: &["B", "KiB", "MiB", "GiB", "TiB"],
};

/// Reads a size in bytes: a number then a unit, `B`, `K`, `M`, `G` or `T`, each also as `KB` or
/// `KiB` and so on, in any case, all binary multiples (`64K`, `1.5 MiB`, `4096b`); zero needs no
/// unit. Rounded to the byte; at most `u64::MAX` bytes.
pub fn parse(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let parts = number::split(t).map_err(|p| p.explain(t, EXAMPLE))?;
    if parts.unit.is_empty() {
        if parts.number.is_zero() {
            return Ok(0);
        }
        let n = parts.number.text();
        return Err(UnitError::new(format!(
            "{t:?} has no unit: write e.g. {n}B, {n}K or {n}M"
        )));
    }
    let unit = parts.unit.to_ascii_lowercase();
    let Some(&(_, bytes_per_unit)) = UNITS.iter().find(|(name, _)| *name == unit) else {
        return Err(UnitError::new(format!(
            "unknown unit {:?} in {t:?}: use {UNIT_NAMES}",
            parts.unit
        )));
    };
    parts
        .number
        .scaled(bytes_per_unit)
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(|| {
            UnitError::new(format!(
                "{t:?} is larger than the largest size: write at most 16777215T"
            ))
        })
}

/// Bytes for people: the largest of B, KiB, MiB, GiB and TiB in which the value is at least 1,
/// four significant digits, a space, the unit: `512 B`, `1.5 KiB`, `32 MiB`, `1.234 GiB`. A
/// negative value keeps its sign; NaN and infinities are `-`.
pub fn format(bytes: f64) -> String {
    STEPS.format(bytes, " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_numbers_with_units() {
        assert_eq!(parse("4096B"), Ok(4096));
        assert_eq!(parse("4096 b"), Ok(4096));
        assert_eq!(parse("64K"), Ok(64 << 10));
        assert_eq!(parse("64kb"), Ok(64 << 10));
        assert_eq!(parse(" 64 KiB "), Ok(64 << 10));
        assert_eq!(parse("1.5M"), Ok(3 << 19));
        assert_eq!(parse("1.5 mib"), Ok(3 << 19));
        assert_eq!(parse("2G"), Ok(2 << 30));
        assert_eq!(parse("2GB"), Ok(2 << 30));
        assert_eq!(parse("1.5T"), Ok(1_649_267_441_664));
        assert_eq!(parse("0.5B"), Ok(1));
        assert_eq!(parse("0.001K"), Ok(1));
        assert_eq!(parse("18446744073709551615B"), Ok(u64::MAX));
    }

    #[test]
    fn zero_needs_no_unit() {
        assert_eq!(parse("0"), Ok(0));
        assert_eq!(parse("0.0"), Ok(0));
        assert_eq!(parse("0B"), Ok(0));
        assert_eq!(parse("0 M"), Ok(0));
    }

    #[test]
    fn refusals_name_the_problem_and_the_fix() {
        let err = |t: &str| parse(t).unwrap_err().message().to_owned();
        assert_eq!(
            err("512"),
            "\"512\" has no unit: write e.g. 512B, 512K or 512M"
        );
        assert_eq!(
            err("5 parsecs"),
            "unknown unit \"parsecs\" in \"5 parsecs\": use B, K, M, G or T \
             (each also as KB or KiB, in any case; all of 1024)"
        );
        assert!(err("1P").contains("unknown unit \"P\""));
        assert!(err("-1K").contains("is negative"));
        assert!(err("").contains("no value given"));
        assert!(err("K").contains("does not start with a number"));
        assert!(err("1..5K").contains("such as 12 or 1.5"));
        assert!(err("18446744073709551616B").contains("larger than the largest size"));
        assert!(err("16777216T").contains("larger than the largest size"));
    }

    #[test]
    fn human_figures() {
        let cases: &[(f64, &str)] = &[
            (512.0, "512 B"),
            (0.0, "0 B"),
            (0.5, "0.5 B"),
            (1023.0, "1023 B"),
            (1536.0, "1.5 KiB"),
            (32.0 * 1048576.0, "32 MiB"),
            (1.234 * 1073741824.0, "1.234 GiB"),
            (1023.6 * 1024.0, "1024 KiB"),
            (1023.99 * 1024.0, "1 MiB"),
            (2.0 * 1099511627776.0, "2 TiB"),
            (1048576.0 * 1099511627776.0, "1048576 TiB"),
            (-1536.0, "-1.5 KiB"),
            (f64::NAN, "-"),
            (f64::INFINITY, "-"),
        ];
        for &(b, want) in cases {
            assert_eq!(format(b), want, "{b}");
        }
    }
}
