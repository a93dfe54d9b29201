//! CSV rendering: one `field,value,unit` row per field of the report with a value, as the one
//! flattening names them (`usage.user_ns`, `counters.events[cycles].total_scaled`,
//! `command.argv[0]`), in the report's order; the unit where the field's table gives one.

use serde_json::Value;

use crate::report::metrics::flatten;
use crate::report::model::Report;

pub fn render(report: &Report) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["field", "value", "unit"])
        .expect("writing to memory");
    for f in flatten(report) {
        let value = match f.value {
            Value::Null => String::new(),
            Value::String(s) => s,
            other => other.to_string(),
        };
        let unit = f.role.unit().map_or("", |u| u.name());
        w.write_record([f.name.as_str(), &value, unit])
            .expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("flushing to memory")).expect("CSV of UTF-8 input")
}
