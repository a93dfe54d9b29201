//! The JSON output: one document with the experiment, the run (calibration, kernel facts,
//! per-thread outcomes, every trace record in TSC ticks) and the analysis. Trace times convert
//! to seconds from the start as `(tsc - run.timebase.tsc0) / run.timebase.hz`.

use serde::Serialize;

use crate::analysis::Analysis;
use crate::experiment::Experiment;
use crate::switch_cost::{Plan, SizeResult};
use crate::threads::RunResult;

#[derive(Serialize)]
struct Document<'a> {
    tool: &'static str,
    version: &'static str,
    experiment: &'a Experiment,
    run: &'a RunResult,
    analysis: &'a Analysis,
}

#[derive(Serialize)]
struct SwitchCostDocument<'a> {
    tool: &'static str,
    version: &'static str,
    plan: &'a Plan,
    sizes: &'a [SizeResult],
}

const TOOL: &str = "arum hourglass";

pub fn render(exp: &Experiment, run: &RunResult, analysis: &Analysis) -> String {
    to_string(&Document {
        tool: TOOL,
        version: env!("CARGO_PKG_VERSION"),
        experiment: exp,
        run,
        analysis,
    })
}

pub fn switch_cost(plan: &Plan, sizes: &[SizeResult]) -> String {
    to_string(&SwitchCostDocument {
        tool: TOOL,
        version: env!("CARGO_PKG_VERSION"),
        plan,
        sizes,
    })
}

fn to_string<T: Serialize>(doc: &T) -> String {
    // Our types hold no maps with non-string keys, so serialisation cannot fail; NaN and
    // infinities become null.
    let mut s =
        serde_json::to_string_pretty(doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}
