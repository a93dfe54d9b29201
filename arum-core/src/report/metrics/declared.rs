//! A metric's unit and direction from its name alone, for what keeps only names (statistics
//! over runs, comparisons, merges and their saved files): the model's tables of fields expanded
//! into name patterns, `[]` standing for any element of a labelled array
//! (`counters.events[].total_scaled`) and `[LABEL]` for one element that has rows of its own
//! (`counters.ratios[instructions per cycle (IPC)].value`).

use std::sync::OnceLock;

use crate::fields::{Better, Field, Is, Unit};
use crate::report::model::FIELDS;

/// What the tables say of one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    pub unit: Unit,
    pub better: Better,
}

/// Every field path the tables declare, with what it is, in the tables' order.
pub fn paths() -> Vec<(String, &'static Is)> {
    let mut out = Vec::new();
    table(FIELDS, "", &mut out);
    out
}

/// The unit and direction of the metric `name`, when the tables declare it: the most specific
/// pattern that matches (a `[LABEL]` over `[]`). A number in an array of numbers has the kind of
/// its array (`ambient.summary.pressure_stall_us[1]`).
pub fn kind_of(name: &str) -> Option<Kind> {
    static PATTERNS: OnceLock<Vec<(Pattern, Kind)>> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        paths()
            .into_iter()
            .filter_map(|(path, is)| match is {
                Is::Measured(unit, better) => Some((
                    Pattern::new(&path),
                    Kind {
                        unit: *unit,
                        better: *better,
                    },
                )),
                _ => None,
            })
            .collect()
    });
    let best = |name: &str| {
        patterns
            .iter()
            .filter(|(p, _)| p.matches(name))
            .max_by_key(|(p, _)| p.literal)
            .map(|(_, kind)| *kind)
    };
    let mut name = name;
    loop {
        if let Some(kind) = best(name) {
            return Some(kind);
        }
        name = strip_index(name)?;
    }
}

/// Whether the field `name` is one `path` (of [`paths`]) declares, an element of an array of
/// numbers included.
pub fn declares(path: &str, name: &str) -> bool {
    let pattern = Pattern::new(path);
    let mut name = name;
    loop {
        if pattern.matches(name) {
            return true;
        }
        match strip_index(name) {
            Some(shorter) => name = shorter,
            None => return false,
        }
    }
}

/// `name` without its last `[N]`, when it ends in one.
fn strip_index(name: &str) -> Option<&str> {
    let inner = name.strip_suffix(']')?;
    let open = inner.rfind('[')?;
    let digits = &inner[open + 1..];
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| &name[..open])
}

/// A path with `[]` wildcards, as the literal pieces between them.
struct Pattern {
    pieces: Vec<String>,
    /// Characters matched literally: the more, the more specific.
    literal: usize,
}

impl Pattern {
    fn new(path: &str) -> Pattern {
        // `a[].b` is `a[` + any label + `].b`.
        let pieces: Vec<String> = path.split("[]").map(str::to_string).collect();
        let mut with_brackets = Vec::with_capacity(pieces.len());
        let last = pieces.len() - 1;
        for (i, p) in pieces.into_iter().enumerate() {
            let mut s = String::new();
            if i > 0 {
                s.push(']');
            }
            s.push_str(&p);
            if i < last {
                s.push('[');
            }
            with_brackets.push(s);
        }
        let literal = with_brackets.iter().map(String::len).sum();
        Pattern {
            pieces: with_brackets,
            literal,
        }
    }

    /// Whether `name` is the pieces in order with any text between consecutive ones (leftmost
    /// matches of the middle pieces are enough when the only wildcard matches anything).
    fn matches(&self, name: &str) -> bool {
        let (first, rest) = self.pieces.split_first().expect("a pattern has a piece");
        let Some(mut tail) = name.strip_prefix(first.as_str()) else {
            return false;
        };
        let Some((last, middle)) = rest.split_last() else {
            return tail.is_empty();
        };
        for piece in middle {
            match tail.find(piece.as_str()) {
                Some(at) => tail = &tail[at + piece.len()..],
                None => return false,
            }
        }
        tail.ends_with(last.as_str())
    }
}

/// Expands a table under `prefix`. A key seen earlier in the same table (its own or an inline
/// table's) is left out, as `fields::find` finds the first.
fn table(rows: &'static [Field], prefix: &str, out: &mut Vec<(String, &'static Is)>) {
    let mut seen: Vec<&str> = Vec::new();
    flat_rows(rows, &mut |f| {
        if !seen.contains(&f.key) {
            seen.push(f.key);
            field(&f.is, join(prefix, f.key), out);
        }
    });
}

/// Every row of `rows`, inline tables' rows in their place, `When` rows left out.
fn flat_rows(rows: &'static [Field], visit: &mut dyn FnMut(&'static Field)) {
    for f in rows {
        match &f.is {
            Is::Inline(inner) => flat_rows(inner, visit),
            Is::When(..) => {}
            _ => visit(f),
        }
    }
}

fn field(is: &'static Is, path: String, out: &mut Vec<(String, &'static Is)>) {
    match is {
        Is::Group(rows) => table(rows, &path, out),
        Is::Each(rows) | Is::Series(rows) => {
            table(rows, &format!("{path}[]"), out);
            for f in rows.iter() {
                if let Is::When(label, own) = &f.is {
                    table(own, &format!("{path}[{label}]"), out);
                }
            }
        }
        leaf => out.push((path, leaf)),
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_find_their_patterns() {
        let kind = |n: &str| kind_of(n).map(|k| (k.unit, k.better));
        assert_eq!(
            kind("usage.wall_ns"),
            Some((Unit::Nanoseconds, Better::Lower))
        );
        assert_eq!(
            kind("counters.events[cycles].total_scaled"),
            Some((Unit::Count, Better::Lower))
        );
        // A label with brackets and dots of its own.
        assert_eq!(
            kind("counters.events[cpu/event=0x3c,umask=0x0/].per_cpu[3].raw"),
            Some((Unit::Count, Better::Lower))
        );
        assert_eq!(
            kind("counters.events[task-clock].per_cpu[3].raw"),
            Some((Unit::Nanoseconds, Better::Lower))
        );
        assert_eq!(
            kind("counters.ratios[instructions per cycle (IPC)].value"),
            Some((Unit::Ratio, Better::Higher))
        );
        assert_eq!(
            kind("counters.ratios[branch miss rate].value"),
            Some((Unit::Fraction, Better::Lower))
        );
        assert_eq!(
            kind("ambient.summary.pressure_stall_us[1]"),
            Some((Unit::Microseconds, Better::Lower))
        );
        assert_eq!(kind("counters.ratios[no such ratio].value"), None);
        assert_eq!(kind("usage.wall"), None);
        assert_eq!(kind("usage.wall_ns.more"), None);
        assert_eq!(kind("metadata.online_cpus"), None, "a setting");
    }

    #[test]
    fn paths_are_unique() {
        let mut p: Vec<String> = paths().into_iter().map(|(p, _)| p).collect();
        let n = p.len();
        p.sort();
        p.dedup();
        assert_eq!(p.len(), n);
    }
}
