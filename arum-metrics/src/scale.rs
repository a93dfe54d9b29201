//! perf's ScaleUnit: a factor and a unit in one string (`100%`, `1GHz`, `6.4e-5MB/s`,
//! `1e3per_1k_instr`): the value shown is the metric's value times the factor, in the unit.

#[derive(Debug, Clone, PartialEq)]
pub struct ScaleUnit {
    pub factor: f64,
    pub unit: String,
}

impl ScaleUnit {
    pub fn parse(s: &str) -> ScaleUnit {
        let s = s.trim();
        // The longest prefix that is a number (the exponent's 'e' only when digits follow).
        let b = s.as_bytes();
        let mut end = 0;
        while end < b.len() && (b[end].is_ascii_digit() || b[end] == b'.') {
            end += 1;
        }
        if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
            let mut j = end + 1;
            if j < b.len() && (b[j] == b'-' || b[j] == b'+') {
                j += 1;
            }
            let digits = b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 {
                end = j + digits;
            }
        }
        match s[..end].parse::<f64>() {
            Ok(factor) => ScaleUnit {
                factor,
                unit: s[end..].trim().to_string(),
            },
            Err(_) => ScaleUnit {
                factor: 1.0,
                unit: s.to_string(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_and_units() {
        let p = |s| {
            let u = ScaleUnit::parse(s);
            (u.factor, u.unit)
        };
        assert_eq!(p("100%"), (100.0, "%".into()));
        assert_eq!(p("1GHz"), (1.0, "GHz".into()));
        assert_eq!(p("6.4e-5MB/s"), (6.4e-5, "MB/s".into()));
        assert_eq!(p("1e3per_1k_instr"), (1e3, "per_1k_instr".into()));
        assert_eq!(p("1per_instr"), (1.0, "per_instr".into()));
        assert_eq!(
            p("6.103515625E-5MiB/sec"),
            (6.103515625E-5, "MiB/sec".into())
        );
        assert_eq!(
            p("1cycles / transaction"),
            (1.0, "cycles / transaction".into())
        );
        assert_eq!(p(""), (1.0, "".into()));
    }
}
