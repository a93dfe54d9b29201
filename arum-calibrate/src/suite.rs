//! The suite: which measurements exist, by group, and which the user asked for (`--only`).

use crate::context::{Context, Group, Selection, Sink};
use crate::groups;
use crate::model::Unit;

/// The groups, in the order they run and the report shows them.
pub fn groups() -> [&'static Group; 6] {
    [
        &groups::timing::GROUP,
        &groups::cpu::GROUP,
        &groups::tasks::GROUP,
        &groups::memory::GROUP,
        &groups::network::GROUP,
        &groups::files::GROUP,
    ]
}

/// The measurements and their methods, for `--list`, `--help` and the README.
pub fn methods_help() -> String {
    let mut s = String::from("Measurements (select with --only; all by default):\n");
    for g in groups() {
        s.push_str(&format!("\n{} ({}):\n", g.title, g.name));
        for e in g.entries {
            s.push_str(&format!("  {}  [{}]\n", e.name, unit_name(e.unit)));
            s.push_str(&wrap(e.method, 6, 96));
        }
    }
    s
}

fn unit_name(u: Unit) -> &'static str {
    match u {
        Unit::Ns => "ns",
        Unit::BytesPerS => "bytes/s",
    }
}

/// Word-wraps `text` at `width` columns with `indent` spaces.
fn wrap(text: &str, indent: usize, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for w in text.split_whitespace() {
        if !line.is_empty() && indent + line.len() + 1 + w.len() > width {
            out.push_str(&format!("{}{line}\n", " ".repeat(indent)));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        out.push_str(&format!("{}{line}\n", " ".repeat(indent)));
    }
    out
}

/// Runs every group that has an entry the context's selection wants, into `sink`.
pub fn run_selected(ctx: &mut Context, sink: &mut Sink) {
    for g in groups() {
        if g.entries.iter().any(|e| ctx.wants(e)) {
            (g.run)(ctx, sink);
        }
    }
}

/// Every measurement of the suite, by entry name.
fn names() -> Vec<&'static str> {
    groups()
        .into_iter()
        .flat_map(|g| g.entries.iter().map(|e| e.name))
        .collect()
}

/// What `--only` selects: each selector is a group name, an entry name, or a dotted prefix of
/// entry names (`tasks.switch`); none selects everything. An unknown selector is an error
/// naming the closest name.
pub fn select(selectors: &[String]) -> Result<Selection, String> {
    let all = names();
    if selectors.is_empty() {
        return Ok(Selection::of(all));
    }
    let mut names = Vec::new();
    for sel in selectors.iter().flat_map(|s| s.split([',', ' '])) {
        let sel = sel.trim();
        if sel.is_empty() {
            continue;
        }
        let matched: Vec<_> = all
            .iter()
            .filter(|n| **n == sel || n.strip_prefix(sel).is_some_and(|r| r.starts_with('.')))
            .collect();
        if matched.is_empty() {
            return Err(format!(
                "--only {sel:?}: no such measurement or group (did you mean {:?}?); \
                 `arum calibrate --list` shows the names",
                closest(sel, &all)
            ));
        }
        for m in matched {
            if !names.contains(m) {
                names.push(*m);
            }
        }
    }
    Ok(Selection::of(names))
}

/// The name, group or dotted prefix of a name closest to `sel`.
fn closest(sel: &str, names: &[&str]) -> String {
    let mut candidates: Vec<String> = Vec::new();
    for n in names {
        let parts: Vec<&str> = n.split('.').collect();
        for k in 1..=parts.len() {
            candidates.push(parts[..k].join("."));
        }
    }
    candidates
        .iter()
        .max_by(|a, b| {
            strsim::normalized_damerau_levenshtein(sel, a)
                .total_cmp(&strsim::normalized_damerau_levenshtein(sel, b))
        })
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_name_groups_entries_and_dotted_prefixes() {
        assert_eq!(select(&[]).unwrap().len(), names().len());
        let s = select(&["timing, tasks.switch".into(), "cpu.call".into()]).unwrap();
        assert!(s.contains("timing.rdtsc") && s.contains("tasks.switch.thread.cross_cpu"));
        assert!(s.contains("cpu.call.7") && !s.contains("tasks.fork"));
        let e = select(&["tasks.swich".into()]).unwrap_err();
        assert!(e.contains("did you mean \"tasks.switch\"?"), "{e}");
        assert!(select(&["task".into()]).is_err(), "a prefix ends at a dot");
    }
}
