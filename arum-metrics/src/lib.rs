//! The expression language of the kernel's metric files (tools/perf/pmu-events/arch/*/
//! *-metrics.json, as perf's util/expr.l and expr.y read it), written anew for ARUM:
//!
//! - numbers (`1e9`, `.5`), event identifiers (`INST_RETIRED.ANY`, `cpu_core@TOPDOWN.SLOTS@`,
//!   `msr@tsc@`, with `\-` `\,` `\=` escapes), other metrics' names, `duration_time`;
//! - literals `#smt_on`, `#num_cores`, `#system_tsc_freq`, `#core_wide`, ... (case-insensitive);
//! - `a if cond else b` (right-associative, lowest precedence), `|` `^` `&` (logical), `<` `>`,
//!   `+` `-`, `*` `/` `%`, unary `-`, parentheses;
//! - `min(a, b)`, `max(a, b)`, `d_ratio(a, b)` (0 when b is 0), `source_count(ID)`,
//!   `aggr_nr(ID)`, `has_event(ID)`, `strcmp_cpuid_str(ID)`.
//!
//! [`Expr::parse`] builds the tree; [`Expr::needed`] lists the identifiers a value needs once
//! literals and `has_event` are known (the branches a constant condition rules out need
//! nothing); [`Expr::eval`] computes the value, NaN where an input is missing, as perf does.

#![forbid(unsafe_code)]

mod eval;
mod lex;
mod parse;
mod scale;

pub use eval::{Env, Needed};
pub use parse::{BinOp, Expr, ParseError};
pub use scale::ScaleUnit;
