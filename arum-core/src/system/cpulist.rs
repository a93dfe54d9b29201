//! The kernel's cpulist syntax (`0-3,8,10-11`), as in /sys/devices/system/cpu/online and `-C`.

/// CPU numbers above this are refused before any range is expanded (Linux allows at most
/// 8192 CPUs; the bound only keeps a typo from costing memory).
const HIGHEST: u32 = 65_535;

/// Parses a cpulist into sorted, de-duplicated CPU numbers.
pub fn parse(list: &str) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let num = |s: &str| {
            let n = s
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("{s:?} is not a CPU number (expected a list like 0-3,8)"))?;
            if n > HIGHEST {
                return Err(format!("CPU {n} is beyond any machine's CPUs"));
            }
            Ok(n)
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("range {part:?} runs backwards"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(num(part)?),
        }
    }
    if cpus.is_empty() {
        return Err("the CPU list is empty".into());
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// CPU numbers (sorted, distinct) as a cpulist with runs joined (`0-3,8`): `parse`'s inverse.
pub fn format(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => cpus[i].to_string(),
            1 => format!("{},{}", cpus[i], cpus[j]),
            _ => format!("{}-{}", cpus[i], cpus[j]),
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The CPUs the kernel had online when arum first asked (read once per run of arum).
pub fn online() -> Option<Vec<u32>> {
    static ONLINE: std::sync::OnceLock<Option<Vec<u32>>> = std::sync::OnceLock::new();
    ONLINE
        .get_or_init(|| {
            parse(&super::kernel_file::read("/sys/devices/system/cpu/online").ok()?).ok()
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::{format, parse};
    use proptest::prelude::*;

    proptest! {
        // Any set of CPUs survives formatting and parsing, and runs of three or more are ranges.
        #[test]
        fn format_is_parses_inverse(mut cpus in proptest::collection::vec(0u32..600, 1..200)) {
            cpus.sort_unstable();
            cpus.dedup();
            let text = format(&cpus);
            prop_assert_eq!(parse(&text).unwrap(), cpus.clone());
            let runs = cpus.windows(3).any(|w| w[2] == w[0] + 2);
            prop_assert_eq!(text.contains('-'), runs);
        }
    }

    #[test]
    fn runs_are_ranges() {
        assert_eq!(format(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10,11");
        assert_eq!(format(&(0..64).collect::<Vec<_>>()), "0-63");
    }

    #[test]
    fn ranges_and_singles() {
        assert_eq!(parse("0-3,8,10-11\n").unwrap(), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse("1,1,0").unwrap(), [0, 1]);
    }

    #[test]
    fn bad_lists_are_rejected() {
        assert!(parse("").is_err());
        assert!(parse("3-1").is_err());
        assert!(parse("a").is_err());
    }

    #[test]
    fn huge_ranges_are_refused_before_they_are_expanded() {
        assert!(parse("0-4000000000").unwrap_err().contains("beyond"));
        assert!(parse("4000000000").unwrap_err().contains("beyond"));
        assert_eq!(parse("65535").unwrap(), [65535]);
    }

    proptest::proptest! {
        #[test]
        fn no_list_panics(s in "[0-9,\\- a-z]{0,40}") {
            let _ = parse(&s);
        }
    }
}
