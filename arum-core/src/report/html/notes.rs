//! Everything the reader should know about how the values were obtained: the run's warnings and
//! each facility's notes, in one place.

use crate::render::html::page::{list, para, section};
use crate::report::model::Report;

pub fn render(r: &Report) -> String {
    let mut body = String::new();
    let mut add = |title: &str, lines: &[String], class: &str| {
        if !lines.is_empty() {
            body.push_str(&para(title));
            body.push_str(&list(class, lines));
        }
    };
    add("Warnings", &r.warnings, "notes warn");
    if let Some(c) = &r.counters {
        add("Counters", &c.notes, "notes");
    }
    if let Some(a) = &r.ambient {
        add("Ambient (likely interference)", &a.notes, "notes");
    }
    if let Some(t) = &r.tasks {
        if let Some(n) = &t.delay_accounting.note {
            add("Per-task records", std::slice::from_ref(n), "notes");
        }
    }
    if body.is_empty() {
        body = para("No warnings or notes.");
    }
    section("notes", "Warnings and notes", &body)
}
