//! The JSON output: one document with the experiment, the run (calibration, kernel facts,
//! per-thread outcomes, every trace record in TSC ticks) and the analysis. Trace times convert
//! to seconds from the start as `(tsc - run.timebase.tsc0) / run.timebase.hz`.

use serde::Serialize;

use crate::analysis::Analysis;
use crate::experiment::Experiment;
use crate::switch_cost::{Plan, SizeResult};
use crate::threads::RunResult;

/// The version tags of the two documents, as arum's own (`arum.report/1`): bumped when a field
/// changes meaning or is removed.
pub const SCHEMA: &str = "arum.hourglass/1";
pub const SWITCH_COST_SCHEMA: &str = "arum.hourglass.switch-cost/1";

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    tool: &'static str,
    version: &'static str,
    experiment: &'a Experiment,
    run: &'a RunResult,
    analysis: &'a Analysis,
}

#[derive(Serialize)]
struct SwitchCostDocument<'a> {
    schema: &'static str,
    tool: &'static str,
    version: &'static str,
    plan: &'a Plan,
    sizes: &'a [SizeResult],
}

const TOOL: &str = "arum hourglass";

pub fn render(exp: &Experiment, run: &RunResult, analysis: &Analysis) -> String {
    to_string(&Document {
        schema: SCHEMA,
        tool: TOOL,
        version: env!("CARGO_PKG_VERSION"),
        experiment: exp,
        run,
        analysis,
    })
}

pub fn switch_cost(plan: &Plan, sizes: &[SizeResult]) -> String {
    to_string(&SwitchCostDocument {
        schema: SWITCH_COST_SCHEMA,
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
