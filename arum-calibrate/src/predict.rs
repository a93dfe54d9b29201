//! Predictions (`--predict FILE`): a TOML file of what the user expects each figure to be,
//! shown beside the measurement as the suite's tables show estimate against result.
//!
//! ```toml
//! "cpu.syscall.getppid" = "150 ns"              # a quoted dotted name ...
//! [tasks]                                       # ... or nested tables
//! fork = { hardware = "2 us", software = "80 us", note = "page tables are copied" }
//! [memory.bandwidth.read]
//! 1cpu = "10 GB/s"
//! ```
//! Values: a number in the measurement's unit (ns, or GB/s for rates), or a string with a unit
//! (ns, us, µs, ms, s, cycles; B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s). A table may give
//! `value`, or `hardware` and `software` estimates (their sum is the prediction), and a `note`.

use crate::model::{Calibration, Prediction, Unit};

/// A quantity as written in the file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantity {
    /// A bare number: the measurement's display unit.
    Bare(f64),
    Ns(f64),
    Cycles(f64),
    BytesPerS(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub name: String,
    pub value: Option<Quantity>,
    pub hardware: Option<Quantity>,
    pub software: Option<Quantity>,
    pub note: Option<String>,
}

pub fn parse_quantity(s: &str) -> Result<Quantity, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')
        })
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number with a unit"))?;
    let q = match unit.trim() {
        "" => Quantity::Bare(v),
        "ns" => Quantity::Ns(v),
        "us" | "µs" => Quantity::Ns(v * 1e3),
        "ms" => Quantity::Ns(v * 1e6),
        "s" => Quantity::Ns(v * 1e9),
        "cycles" | "cycle" => Quantity::Cycles(v),
        "B/s" => Quantity::BytesPerS(v),
        "KB/s" => Quantity::BytesPerS(v * 1e3),
        "MB/s" => Quantity::BytesPerS(v * 1e6),
        "GB/s" => Quantity::BytesPerS(v * 1e9),
        "KiB/s" => Quantity::BytesPerS(v * 1024.0),
        "MiB/s" => Quantity::BytesPerS(v * 1048576.0),
        "GiB/s" => Quantity::BytesPerS(v * 1073741824.0),
        u => {
            return Err(format!(
                "unknown unit {u:?} in {s:?} (use ns, us, ms, s, cycles, MB/s, GB/s, ...)"
            ))
        }
    };
    Ok(q)
}

fn quantity(v: &toml::Value, at: &str) -> Result<Quantity, String> {
    match v {
        toml::Value::Integer(i) => Ok(Quantity::Bare(*i as f64)),
        toml::Value::Float(f) => Ok(Quantity::Bare(*f)),
        toml::Value::String(s) => parse_quantity(s).map_err(|e| format!("{at}: {e}")),
        other => Err(format!(
            "{at}: expected a number or a string like \"150 ns\", found {}",
            other.type_str()
        )),
    }
}

const SPEC_KEYS: [&str; 4] = ["value", "hardware", "software", "note"];

/// Parses the file's text into specs (names as written, flattened with dots).
pub fn parse(text: &str) -> Result<Vec<Spec>, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| e.message().to_string())?;
    let mut out = Vec::new();
    collect_specs("", &table, &mut out)?;
    Ok(out)
}

fn collect_specs(prefix: &str, table: &toml::Table, out: &mut Vec<Spec>) -> Result<(), String> {
    for (k, v) in table {
        let name = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) if t.keys().any(|k| SPEC_KEYS.contains(&k.as_str())) => {
                if let Some(bad) = t.keys().find(|k| !SPEC_KEYS.contains(&k.as_str())) {
                    return Err(format!(
                        "{name}: unknown key {bad:?} (use value, hardware, software, note)"
                    ));
                }
                let q = |key: &str| {
                    t.get(key)
                        .map(|v| quantity(v, &format!("{name}.{key}")))
                        .transpose()
                };
                let spec = Spec {
                    value: q("value")?,
                    hardware: q("hardware")?,
                    software: q("software")?,
                    note: t.get("note").and_then(|n| n.as_str()).map(str::to_string),
                    name,
                };
                if spec.value.is_none() && (spec.hardware.is_none() || spec.software.is_none()) {
                    return Err(format!(
                        "{}: give `value`, or both `hardware` and `software`",
                        spec.name
                    ));
                }
                out.push(spec);
            }
            toml::Value::Table(t) => collect_specs(&name, t, out)?,
            v => out.push(Spec {
                value: Some(quantity(v, &name)?),
                hardware: None,
                software: None,
                note: None,
                name,
            }),
        }
    }
    Ok(())
}

/// Converts a quantity into `unit`.
fn resolve(q: Quantity, unit: Unit, cycles_per_ns: f64, at: &str) -> Result<f64, String> {
    match (q, unit) {
        (Quantity::Bare(v), Unit::Ns) | (Quantity::Ns(v), Unit::Ns) => Ok(v),
        (Quantity::Cycles(c), Unit::Ns) => Ok(c / cycles_per_ns),
        (Quantity::Bare(v), Unit::BytesPerS) => Ok(v * 1e9),
        (Quantity::BytesPerS(v), Unit::BytesPerS) => Ok(v),
        (_, Unit::Ns) => Err(format!("{at} is a time: give ns, us, ms, s or cycles")),
        (_, Unit::BytesPerS) => Err(format!("{at} is a rate: give B/s, MB/s, GB/s, ...")),
    }
}

/// Checks that every spec names a measurement the suite has (a family's members count).
pub fn validate(specs: &[Spec]) -> Result<(), String> {
    let names: Vec<&str> = crate::suite::groups()
        .into_iter()
        .flat_map(|g| g.entries.iter().map(|e| e.name))
        .collect();
    for s in specs {
        let known = names
            .iter()
            .any(|n| *n == s.name || s.name.strip_prefix(n).is_some_and(|r| r.starts_with('.')));
        if !known {
            let best = names
                .iter()
                .max_by(|a, b| {
                    strsim::normalized_damerau_levenshtein(&s.name, a)
                        .total_cmp(&strsim::normalized_damerau_levenshtein(&s.name, b))
                })
                .copied()
                .unwrap_or("");
            return Err(format!(
                "no measurement is named {:?} (did you mean {best:?}?)",
                s.name
            ));
        }
    }
    Ok(())
}

/// Attaches predictions to the measurements of `cal`; names not measured in this run are
/// listed in the returned notes.
pub fn apply(cal: &mut Calibration, specs: &[Spec]) -> Result<Vec<String>, String> {
    let cpn = cal.machine.tsc.hz / 1e9;
    let mut notes = Vec::new();
    for s in specs {
        let Some(m) = cal.measurements.iter_mut().find(|m| m.name == s.name) else {
            notes.push(format!(
                "prediction for {}: not measured in this run",
                s.name
            ));
            continue;
        };
        let r = |q: Option<Quantity>, what: &str| {
            q.map(|q| resolve(q, m.unit, cpn, &format!("{}.{what}", s.name)))
                .transpose()
        };
        let (hardware, software) = (r(s.hardware, "hardware")?, r(s.software, "software")?);
        let value = match r(s.value, "value")? {
            Some(v) => v,
            None if m.unit == Unit::Ns => hardware.unwrap_or(0.0) + software.unwrap_or(0.0),
            None => {
                return Err(format!(
                "{}: a rate needs `value` (hardware and software estimates of a rate do not add)",
                s.name
            ))
            }
        };
        let ratio = m.median().filter(|_| value != 0.0).map(|med| med / value);
        m.prediction = Some(Prediction {
            value,
            hardware,
            software,
            note: s.note.clone(),
            ratio,
        });
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_and_nested_names_and_every_value_form() {
        let specs = parse(
            r#"
            "cpu.syscall.getppid" = "150 ns"
            [tasks]
            fork = { hardware = "2 us", software = "80us", note = "page tables" }
            [memory.bandwidth.read]
            1cpu = 12.5
            "#,
        )
        .unwrap();
        assert_eq!(specs.len(), 3);
        let get = |n: &str| specs.iter().find(|s| s.name == n).unwrap();
        assert_eq!(get("cpu.syscall.getppid").value, Some(Quantity::Ns(150.0)));
        let fork = get("tasks.fork");
        assert_eq!(fork.hardware, Some(Quantity::Ns(2000.0)));
        assert_eq!(fork.software, Some(Quantity::Ns(80000.0)));
        assert_eq!(fork.note.as_deref(), Some("page tables"));
        assert_eq!(
            get("memory.bandwidth.read.1cpu").value,
            Some(Quantity::Bare(12.5))
        );
        validate(&specs).unwrap();
        assert_eq!(
            resolve(Quantity::Bare(12.5), Unit::BytesPerS, 2.0, "x").unwrap(),
            12.5e9
        );
        assert_eq!(
            resolve(Quantity::Cycles(300.0), Unit::Ns, 3.0, "x").unwrap(),
            100.0
        );
    }

    #[test]
    fn mistakes_are_named() {
        assert!(parse_quantity("12 furlongs")
            .unwrap_err()
            .contains("furlongs"));
        assert!(validate(&parse("\"tasks.frok\" = 1").unwrap())
            .unwrap_err()
            .contains("tasks.fork"));
        assert!(parse("[tasks.fork]\nhardware = 1")
            .unwrap_err()
            .contains("both"));
        assert!(resolve(Quantity::BytesPerS(1.0), Unit::Ns, 1.0, "t")
            .unwrap_err()
            .contains("time"));
        // Family members are known names.
        validate(&parse("\"memory.latency.32KiB\" = \"1.5 ns\"").unwrap()).unwrap();
    }
}
