//! `arum compare history:KEY=VALUE[,KEY=VALUE...] NEW.json`: the baseline is the last N saved
//! runs with those labels (`--last`, default 10), read back as their reports, so the
//! comparison is the one two JSON files would give.

use arum_history::{Filter, Store};

use crate::error::ArumError;
use crate::history::query;
use crate::history::save::parse_labels;
use crate::history::trend;
use crate::report::model::Report;

/// How a baseline from the history is written in place of a file.
pub const PREFIX: &str = "history:";

/// Baseline runs read when `--last` is not given.
pub const DEFAULT_LAST: usize = 10;

/// The reports of the last `last` runs with the labels of `selector`, numbered by run, and a
/// label for people; they must be one series (one command on one machine).
pub fn reports(
    selector: &str,
    store: Option<&str>,
    last: usize,
) -> Result<(String, Vec<(u64, Report)>), ArumError> {
    let words: Vec<String> = selector
        .split(',')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    if words.is_empty() {
        return Err(ArumError::Usage(format!(
            "{PREFIX}{selector}: name the baseline's labels, e.g. {PREFIX}bench=parse"
        )));
    }
    let location = query::location(store)?;
    let mut store = Store::open_existing(&location)?;
    let runs = store.runs(&Filter {
        labels: parse_labels(&words, PREFIX)?,
        last: Some(last),
        ..Filter::default()
    })?;
    let series = trend::series_of(runs);
    match series.as_slice() {
        [] => Err(ArumError::Usage(format!(
            "{PREFIX}{selector}: no run in {location} has these labels; `arum history` lists \
             the saved runs"
        ))),
        [one] => {
            let mut reports = Vec::with_capacity(one.runs.len());
            for run in &one.runs {
                let json = store.report(run.id)?;
                let report: Report = serde_json::from_str(&json).map_err(|e| {
                    ArumError::Usage(format!(
                        "{PREFIX}{selector}: saved run {} is not a report this arum reads ({e})",
                        run.id
                    ))
                })?;
                reports.push((u64::try_from(run.id).unwrap_or(0), report));
            }
            Ok((
                format!("{} (last {} saved runs)", one.key.title(), reports.len()),
                reports,
            ))
        }
        many => Err(ArumError::Usage(format!(
            "{PREFIX}{selector}: the last {last} runs with these labels are of {} series ({}); \
             add a label that tells them apart",
            many.len(),
            many.iter()
                .map(|s| s.key.title())
                .collect::<Vec<_>>()
                .join("; ")
        ))),
    }
}
