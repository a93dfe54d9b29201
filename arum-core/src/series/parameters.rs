//! Parameter lists (`-L VAR a,b,c`) and scans (`-P VAR MIN MAX -D STEP`): every combination of
//! their values, and `{VAR}` substituted in commands and environment values.

use crate::error::ArumError;

/// One variable and the values it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    pub name: String,
    pub values: Vec<String>,
}

/// One combination: a value for each variable, in the order the variables were given.
pub type Assignment = Vec<(String, String)>;

/// Reads `-L` pairs (VAR VALUES) and `-P` triples (VAR MIN MAX) with the scan step.
pub fn from_args(
    lists: &[String],
    scans: &[String],
    step: Option<&str>,
) -> Result<Vec<Parameter>, ArumError> {
    let mut params = Vec::new();
    for pair in lists.chunks(2) {
        let [name, values] = pair else {
            return Err(usage("-L/--parameter-list takes VAR and VALUES"));
        };
        let values: Vec<String> = values.split(',').map(str::to_string).collect();
        if values.iter().any(String::is_empty) {
            return Err(usage(&format!(
                "-L {name} {:?}: an empty value; separate values by single commas",
                pair[1]
            )));
        }
        params.push(Parameter {
            name: checked_name(name)?,
            values,
        });
    }
    for triple in scans.chunks(3) {
        let [name, min, max] = triple else {
            return Err(usage("-P/--parameter-scan takes VAR, MIN and MAX"));
        };
        params.push(Parameter {
            name: checked_name(name)?,
            values: scan(min, max, step.unwrap_or("1"))?,
        });
    }
    if let Some(dup) = params
        .iter()
        .enumerate()
        .find(|(i, p)| params[..*i].iter().any(|q| q.name == p.name))
    {
        return Err(usage(&format!(
            "parameter {} is given twice; give each variable once",
            dup.1.name
        )));
    }
    Ok(params)
}

fn usage(what: &str) -> ArumError {
    ArumError::Usage(what.to_string())
}

fn checked_name(name: &str) -> Result<String, ArumError> {
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(name.to_string())
    } else {
        Err(usage(&format!(
            "parameter name {name:?}: use letters, digits and _ (it is written {{NAME}} in the command)"
        )))
    }
}

/// Most values a scan may produce: a typo in MAX should not start a million runs.
const MAX_SCAN_VALUES: usize = 100_000;

/// MIN, MIN+STEP, ... up to MAX. Integers stay integers; a decimal in any of the three makes a
/// decimal scan, printed with as many decimals as the inputs have (so 0.1 steps give 0.3, not
/// 0.30000000000000004).
fn scan(min: &str, max: &str, step: &str) -> Result<Vec<String>, ArumError> {
    let bad = |what: &str, v: &str| usage(&format!("-P: {what} {v:?} is not a number"));
    let lo: f64 = min.parse().map_err(|_| bad("MIN", min))?;
    let hi: f64 = max.parse().map_err(|_| bad("MAX", max))?;
    let d: f64 = step.parse().map_err(|_| bad("STEP", step))?;
    if !(lo.is_finite() && hi.is_finite() && d.is_finite()) || d <= 0.0 {
        return Err(usage("-P/-D: MIN and MAX must be numbers and STEP above 0"));
    }
    if hi < lo {
        return Err(usage(&format!("-P: MAX {max} is below MIN {min}")));
    }
    let decimals = [min, max, step]
        .iter()
        .map(|s| s.split_once('.').map_or(0, |(_, frac)| frac.len()))
        .max()
        .unwrap_or(0);
    // Count steps in integers so rounding never adds or drops the last value.
    let count = ((hi - lo) / d + 1e-9).floor() as usize + 1;
    if count > MAX_SCAN_VALUES {
        return Err(usage(&format!(
            "-P {min} {max} with step {step} gives {count} values; at most {MAX_SCAN_VALUES}"
        )));
    }
    Ok((0..count)
        .map(|i| format!("{:.*}", decimals, lo + i as f64 * d))
        .collect())
}

/// Every combination of the parameters' values (the first parameter varies slowest); one empty
/// assignment when there are no parameters.
pub fn combinations(params: &[Parameter]) -> Vec<Assignment> {
    let mut all: Vec<Assignment> = vec![Vec::new()];
    for p in params {
        all = all
            .into_iter()
            .flat_map(|a| {
                p.values.iter().map(move |v| {
                    let mut next = a.clone();
                    next.push((p.name.clone(), v.clone()));
                    next
                })
            })
            .collect();
    }
    all
}

/// `text` with each `{NAME}` of the assignment replaced by its value; other braces stay.
pub fn substitute(text: &str, assignment: &Assignment) -> String {
    assignment
        .iter()
        .fold(text.to_string(), |t, (name, value)| {
            t.replace(&format!("{{{name}}}"), value)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn lists_and_scans_make_every_combination() {
        let params = from_args(
            &strings(&["mode", "fast,slow"]),
            &strings(&["n", "1", "3"]),
            None,
        )
        .unwrap();
        let all = combinations(&params);
        assert_eq!(all.len(), 6);
        assert_eq!(
            all[0],
            vec![("mode".into(), "fast".into()), ("n".into(), "1".into())]
        );
        assert_eq!(
            all[5],
            vec![("mode".into(), "slow".into()), ("n".into(), "3".into())]
        );
    }

    #[test]
    fn decimal_scans_do_not_drift() {
        assert_eq!(
            scan("0", "0.5", "0.1").unwrap(),
            ["0.0", "0.1", "0.2", "0.3", "0.4", "0.5"]
        );
        assert_eq!(scan("10", "20", "5").unwrap(), ["10", "15", "20"]);
        assert!(scan("3", "1", "1").is_err());
        assert!(scan("1", "2", "0").is_err());
        assert!(scan("0", "1e9", "1").is_err());
    }

    #[test]
    fn substitution_replaces_only_known_names() {
        let a = vec![("n".to_string(), "4".to_string())];
        assert_eq!(substitute("./app -n {n} {m} {n}", &a), "./app -n 4 {m} 4");
    }

    #[test]
    fn bad_names_and_duplicates_are_usage_errors() {
        assert!(from_args(&strings(&["a b", "1"]), &[], None).is_err());
        assert!(from_args(&strings(&["x", "1,,2"]), &[], None).is_err());
        assert!(from_args(&strings(&["x", "1", "x", "2"]), &[], None).is_err());
        assert_eq!(combinations(&[]), vec![Vec::new()]);
    }
}
