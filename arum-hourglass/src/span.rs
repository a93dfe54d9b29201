//! Self-describing times (`3m`, `1.5s`, `1020ms`, `87.0us`) and sizes (`64K`, `1.5M`, `4096`)
//! as the original tool writes them. Times take fractions, which `humantime` does not; sizes
//! without a unit are kibibytes, as the original's `CPU_SCAN <size>`.

use std::time::Duration;

/// Parses a time with a unit: `ns`, `us` (or `µs`), `ms`, `s`, `m` (minutes), `h`.
pub fn parse_time(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{text:?} has no unit: write e.g. 5ms, 1.5s, 87us or 3m"))?;
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} does not start with a number: write e.g. 5ms or 1.5s"))?;
    let ns_per_unit = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(format!(
                "{text:?}: unknown time unit {unit:?}; use ns, us, ms, s, m or h"
            ))
        }
    };
    let ns = value * ns_per_unit;
    if !ns.is_finite() || ns > 1e18 {
        return Err(format!("{text:?} is too long"));
    }
    Ok(Duration::from_nanos(ns.round() as u64))
}

/// Parses a size in bytes: a number with `K`, `M` or `G` (binary multiples, optional `B`/`iB`),
/// or a bare number of kibibytes.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size: write e.g. 32K, 1M or 512 (KiB)"))?;
    let scale = match unit
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" if unit.is_empty() => 1024.0,
        "" => 1.0,
        "K" => 1024.0,
        "M" => 1024.0 * 1024.0,
        "G" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "{text:?}: unknown size unit {unit:?}; use K, M or G (a bare number is KiB)"
            ))
        }
    };
    let bytes = value * scale;
    if !(1.0..=(1u64 << 40) as f64).contains(&bytes) {
        return Err(format!("{text:?}: a size between 1 byte and 1 TiB, please"));
    }
    Ok(bytes.round() as usize)
}

/// A duration as people read it: the largest unit that keeps a number ≥ 1, three decimals at most.
pub fn show(d: Duration) -> String {
    show_ns(d.as_nanos() as f64)
}

/// Nanoseconds as people read them (see [`show`]).
pub fn show_ns(ns: f64) -> String {
    if ns == 0.0 {
        return "0s".into();
    }
    let (v, unit) = if ns.abs() >= 1e9 {
        (ns / 1e9, "s")
    } else if ns.abs() >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns.abs() >= 1e3 {
        (ns / 1e3, "us")
    } else {
        (ns, "ns")
    };
    trimmed(v, 3, unit)
}

/// `v` with at most `decimals` decimals, trailing zeros dropped, then `unit`.
fn trimmed(v: f64, decimals: usize, unit: &str) -> String {
    let s = format!("{v:.decimals$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{unit}")
}

/// A size as people read it (`64K`, `1.5M`).
pub fn show_size(bytes: usize) -> String {
    let b = bytes as f64;
    let (v, unit) = if bytes >= 1 << 30 {
        (b / (1u64 << 30) as f64, "G")
    } else if bytes >= 1 << 20 {
        (b / (1u64 << 20) as f64, "M")
    } else if bytes >= 1 << 10 {
        (b / 1024.0, "K")
    } else {
        (b, "B")
    };
    trimmed(v, 2, unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_the_original_notation() {
        assert_eq!(parse_time("3m").unwrap(), Duration::from_secs(180));
        assert_eq!(parse_time("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_time("1020ms").unwrap(), Duration::from_millis(1020));
        assert_eq!(parse_time("87.0us").unwrap(), Duration::from_micros(87));
        assert_eq!(parse_time("250ns").unwrap(), Duration::from_nanos(250));
        assert_eq!(parse_time("0.9ms").unwrap(), Duration::from_micros(900));
    }

    #[test]
    fn times_without_a_known_unit_are_refused_with_a_hint() {
        for bad in ["5", "5 parsecs", "ms", "1.2.3s", ""] {
            let e = parse_time(bad).unwrap_err();
            assert!(e.contains("ms"), "{bad}: {e}");
        }
    }

    #[test]
    fn sizes_bare_numbers_are_kib() {
        assert_eq!(parse_size("32").unwrap(), 32 * 1024);
        assert_eq!(parse_size("64K").unwrap(), 64 * 1024);
        assert_eq!(parse_size("64KiB").unwrap(), 64 * 1024);
        assert_eq!(parse_size("1.5M").unwrap(), 3 << 19);
        assert_eq!(parse_size("4096B").unwrap(), 4096);
        assert!(parse_size("3X").unwrap_err().contains("K, M or G"));
        assert!(parse_size("0").is_err());
    }

    #[test]
    fn durations_read_back_in_the_largest_unit() {
        assert_eq!(show(Duration::from_micros(1500)), "1.5ms");
        assert_eq!(show(Duration::from_secs(5)), "5s");
        assert_eq!(show_ns(2345.0), "2.345us");
        assert_eq!(show_ns(12.0), "12ns");
        assert_eq!(show_size(65536), "64K");
        assert_eq!(show_size(3 << 19), "1.5M");
    }
}
