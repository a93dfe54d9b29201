//! CSV rendering: one `field,value` row per leaf of the JSON model, fields as dotted paths
//! (`usage.user_ns`, `command.argv.0`), so every value of the JSON is there too.

use serde_json::Value;

use crate::report::model::Report;

pub fn render(report: &Report) -> String {
    let value = serde_json::to_value(report).expect("the report model always serialises");
    let mut rows = Vec::new();
    flatten(String::new(), &value, &mut rows);
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["field", "value"])
        .expect("writing to memory");
    for (field, value) in rows {
        w.write_record([field, value]).expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("flushing to memory")).expect("CSV of UTF-8 input")
}

fn flatten(prefix: String, value: &Value, rows: &mut Vec<(String, String)>) {
    let join = |key: &str| {
        if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        }
    };
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| flatten(join(k), v, rows)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| flatten(join(&i.to_string()), v, rows)),
        Value::Null => rows.push((prefix, String::new())),
        Value::String(s) => rows.push((prefix, s.clone())),
        other => rows.push((prefix, other.to_string())),
    }
}
