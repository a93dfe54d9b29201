//! The one flattening of a report into named fields, which the CSV, the statistics, comparisons
//! and merges all read. It walks the report's JSON in the model's order with the model's tables
//! of fields (`report::model::FIELDS`), so every field comes with what it is: a metric with its
//! unit and direction, a sample of a time series, a label, an identity, a setting, an instant.
//!
//! Names are dotted paths (`usage.wall_ns`). An element of an array of objects is named by its
//! first label field present (`counters.events[cycles].total_scaled`,
//! `ambient.summary.disks[sda].reads`), so the same event or function has the same name in every
//! run; a label seen again is numbered (`[read#2]`). Elements without a label, samples of a time
//! series and numbers in an array are named by position (`ambient.samples[3].interrupts`,
//! `ambient.summary.pressure_stall_us[1]`).

use serde_json::{Map, Value};

use crate::fields::{self, Better, Field, Is, Unit};
use crate::report::model::{Report, FIELDS};

/// What a flattened field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A measured quantity: what statistics, comparisons and gates read.
    Metric(Unit, Better),
    /// A measured value of a time series (its summaries are the metrics).
    Sample(Unit),
    Instant(Unit),
    Setting(Unit),
    Label,
    Identity,
    /// A figure repeated from elsewhere in the report.
    Detail,
    /// In no table: text, flags and empty values need none; every number has one (the tests
    /// list them).
    Undeclared,
}

impl Role {
    /// The unit of the field's numbers, where it has one.
    pub fn unit(self) -> Option<Unit> {
        match self {
            Role::Metric(u, _) | Role::Sample(u) | Role::Instant(u) | Role::Setting(u) => Some(u),
            Role::Label | Role::Identity | Role::Detail | Role::Undeclared => None,
        }
    }

    /// Its name in listings: `metric`, `sample`, `instant`, ...
    pub fn name(self) -> &'static str {
        match self {
            Role::Metric(..) => "metric",
            Role::Sample(_) => "sample",
            Role::Instant(_) => "instant",
            Role::Setting(_) => "setting",
            Role::Label => "label",
            Role::Identity => "identity",
            Role::Detail => "detail",
            Role::Undeclared => "undeclared",
        }
    }
}

/// One field of a report: a number, a text, a flag or null.
#[derive(Debug, Clone, PartialEq)]
pub struct Flat {
    pub name: String,
    pub value: Value,
    pub role: Role,
}

/// Every leaf of `report` (numbers, texts, flags and nulls), in the report's order.
pub fn flatten(report: &Report) -> Vec<Flat> {
    let json = serde_json::to_value(report).expect("the report model always serialises");
    let mut out = Vec::new();
    if let Value::Object(map) = &json {
        object(map, "", FIELDS, None, false, &mut out);
    }
    out
}

/// The fields of an object whose table is `table`; `label` is the element's, in an array.
fn object(
    map: &Map<String, Value>,
    name: &str,
    table: &'static [Field],
    label: Option<&str>,
    in_series: bool,
    out: &mut Vec<Flat>,
) {
    for (key, value) in map {
        let child = if name.is_empty() {
            key.clone()
        } else {
            format!("{name}.{key}")
        };
        walk(
            value,
            child,
            fields::find(table, key, label),
            in_series,
            out,
        );
    }
}

fn walk(
    value: &Value,
    name: String,
    is: Option<&'static Is>,
    in_series: bool,
    out: &mut Vec<Flat>,
) {
    match (value, is) {
        (Value::Object(map), Some(Is::Group(table))) => {
            object(map, &name, table, None, in_series, out)
        }
        (Value::Object(map), _) => object(map, &name, &[], None, in_series, out),
        (Value::Array(items), Some(Is::Each(table))) => {
            let mut seen: Vec<String> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let label = label_of(item, table).unwrap_or_else(|| i.to_string());
                let repeats = seen.iter().filter(|s| **s == label).count();
                let shown = if repeats > 0 {
                    format!("{label}#{}", repeats + 1)
                } else {
                    label.clone()
                };
                let child = format!("{name}[{shown}]");
                match item {
                    Value::Object(map) => object(map, &child, table, Some(&label), in_series, out),
                    other => walk(other, child, None, in_series, out),
                }
                seen.push(label);
            }
        }
        (Value::Array(items), Some(Is::Series(table))) => {
            for (i, item) in items.iter().enumerate() {
                let child = format!("{name}[{i}]");
                match item {
                    Value::Object(map) => object(map, &child, table, None, true, out),
                    other => walk(other, child, None, true, out),
                }
            }
        }
        (Value::Array(items), _) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, format!("{name}[{i}]"), is, in_series, out);
            }
        }
        (scalar, _) => out.push(Flat {
            name,
            value: scalar.clone(),
            role: role(is, in_series),
        }),
    }
}

/// The element's first label present: a text, or a number as written.
fn label_of(item: &Value, table: &'static [Field]) -> Option<String> {
    fields::labels(table).find_map(|key| match item.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

fn role(is: Option<&'static Is>, in_series: bool) -> Role {
    match is {
        Some(Is::Measured(u, _)) if in_series => Role::Sample(*u),
        Some(Is::Measured(u, b)) => Role::Metric(*u, *b),
        Some(Is::Samples(u)) => Role::Sample(*u),
        Some(Is::Instant(u)) => Role::Instant(*u),
        Some(Is::Setting(u)) => Role::Setting(*u),
        Some(Is::Label) => Role::Label,
        Some(Is::Identity) => Role::Identity,
        Some(Is::Detail) => Role::Detail,
        Some(Is::Group(_) | Is::Inline(_) | Is::Each(_) | Is::Series(_) | Is::When(..)) | None => {
            Role::Undeclared
        }
    }
}
