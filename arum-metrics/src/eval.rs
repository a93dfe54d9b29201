//! Evaluating an expression, and finding which identifiers its value needs. Semantics follow
//! perf's expr.y: a missing input is NaN and makes the result NaN (except where a logical
//! operator or a condition does not need it); `/` by 0 is NaN, `d_ratio(a, 0)` is 0.

use std::collections::BTreeSet;

use crate::parse::{BinOp, Expr};

/// What an expression is evaluated against.
pub trait Env {
    /// The value of an identifier (an event's count, a tool event, another metric); None when
    /// it is not known.
    fn value(&self, id: &str) -> Option<f64>;
    /// The value of `#name` (case-insensitive names: `smt_on`, `num_cores`...); None if unknown.
    fn literal(&self, name: &str) -> Option<f64>;
    /// Whether the event can be counted here (`has_event`).
    fn has_event(&self, id: &str) -> bool;
    /// How many counts were summed into the identifier's value (`source_count`).
    fn source_count(&self, _id: &str) -> f64 {
        1.0
    }
    /// How many aggregated readings the value has (`aggr_nr`).
    fn aggr_nr(&self, _id: &str) -> f64 {
        1.0
    }
    /// Whether the CPU matches a mapfile-style CPUID pattern (`strcmp_cpuid_str`).
    fn cpuid_matches(&self, _pattern: &str) -> bool {
        false
    }
}

fn truth(v: f64) -> bool {
    v != 0.0
}

fn bool_f(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

impl Expr {
    /// The value; NaN where an input it needs is missing.
    pub fn eval(&self, env: &dyn Env) -> f64 {
        match self {
            Expr::Num(n) => *n,
            Expr::Id(s) => env.value(s).unwrap_or(f64::NAN),
            Expr::Literal(s) => env.literal(s).unwrap_or(f64::NAN),
            Expr::Neg(a) => -a.eval(env),
            Expr::Bin(op, a, b) => binary(*op, a.eval(env), b.eval(env)),
            Expr::If {
                then,
                cond,
                otherwise,
            } => {
                if cond.eval(env) == 0.0 {
                    otherwise.eval(env)
                } else {
                    then.eval(env)
                }
            }
            Expr::Min(a, b) => {
                let (x, y) = (a.eval(env), b.eval(env));
                if x < y {
                    x
                } else {
                    y
                }
            }
            Expr::Max(a, b) => {
                let (x, y) = (a.eval(env), b.eval(env));
                if x > y {
                    x
                } else {
                    y
                }
            }
            Expr::DRatio(a, b) => {
                let d = b.eval(env);
                if d == 0.0 {
                    0.0
                } else {
                    a.eval(env) / d
                }
            }
            Expr::SourceCount(s) => env.source_count(s),
            Expr::AggrNr(s) => env.aggr_nr(s),
            Expr::HasEvent(s) => bool_f(env.has_event(s)),
            Expr::StrcmpCpuidStr(s) => bool_f(env.cpuid_matches(s)),
        }
    }
}

fn binary(op: BinOp, x: f64, y: f64) -> f64 {
    let known = |v: f64| !v.is_nan();
    match op {
        // Logic: a known operand can decide alone (1 | NaN is 1, 0 & NaN is 0).
        BinOp::Or => match (known(x), known(y)) {
            (true, true) => bool_f(truth(x) || truth(y)),
            (true, false) if truth(x) => 1.0,
            (false, true) if truth(y) => 1.0,
            _ => f64::NAN,
        },
        BinOp::And => match (known(x), known(y)) {
            (true, true) => bool_f(truth(x) && truth(y)),
            (true, false) if !truth(x) => 0.0,
            (false, true) if !truth(y) => 0.0,
            _ => f64::NAN,
        },
        _ if !known(x) || !known(y) => f64::NAN,
        BinOp::Xor => bool_f(truth(x) != truth(y)),
        BinOp::Lt => bool_f(x < y),
        BinOp::Gt => bool_f(x > y),
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div if y == 0.0 => f64::NAN,
        BinOp::Div => x / y,
        BinOp::Mod if y as i64 == 0 => f64::NAN,
        BinOp::Mod => ((x as i64) % (y as i64)) as f64,
    }
}

/// What a value needs: the identifiers to count, or a constant (when literals and `has_event`
/// decide it without any count).
#[derive(Debug, Clone, PartialEq)]
pub struct Needed {
    pub constant: Option<f64>,
    pub ids: BTreeSet<String>,
}

impl Needed {
    fn constant(v: f64) -> Needed {
        Needed {
            constant: Some(v),
            ids: BTreeSet::new(),
        }
    }
    fn union(mut self, other: Needed) -> Needed {
        self.ids.extend(other.ids);
        Needed {
            constant: None,
            ids: self.ids,
        }
    }
}

impl Expr {
    /// The identifiers the value needs, with literals and `has_event` evaluated now: a branch a
    /// constant condition rules out needs nothing (as perf computes a metric's events).
    /// Fails on an unknown literal.
    pub fn needed(&self, env: &dyn Env) -> Result<Needed, String> {
        Ok(match self {
            Expr::Num(n) => Needed::constant(*n),
            Expr::Literal(s) => Needed::constant(
                env.literal(s)
                    .ok_or_else(|| format!("unknown literal #{s}"))?,
            ),
            Expr::HasEvent(s) => Needed::constant(bool_f(env.has_event(s))),
            Expr::StrcmpCpuidStr(s) => Needed::constant(bool_f(env.cpuid_matches(s))),
            Expr::Id(s) | Expr::SourceCount(s) | Expr::AggrNr(s) => Needed {
                constant: None,
                ids: BTreeSet::from([s.clone()]),
            },
            Expr::Neg(a) => {
                let n = a.needed(env)?;
                match n.constant {
                    Some(c) => Needed::constant(-c),
                    None => n,
                }
            }
            Expr::Bin(op, a, b) => {
                let (x, y) = (a.needed(env)?, b.needed(env)?);
                match (x.constant, y.constant, op) {
                    (Some(p), Some(q), _) => Needed::constant(binary(*op, p, q)),
                    (Some(p), None, BinOp::Or) | (None, Some(p), BinOp::Or) if truth(p) => {
                        Needed::constant(1.0)
                    }
                    (Some(p), None, BinOp::Or) | (Some(p), None, BinOp::And) if p.is_nan() => {
                        x.union(y)
                    }
                    (Some(_), None, BinOp::Or) => y,
                    (None, Some(_), BinOp::Or) => x,
                    (Some(p), None, BinOp::And) | (None, Some(p), BinOp::And) if !truth(p) => {
                        Needed::constant(0.0)
                    }
                    (Some(_), None, BinOp::And) => y,
                    (None, Some(_), BinOp::And) => x,
                    (_, Some(0.0), BinOp::Div) => Needed::constant(f64::NAN),
                    _ => x.union(y),
                }
            }
            Expr::DRatio(a, b) => {
                let (x, y) = (a.needed(env)?, b.needed(env)?);
                match (x.constant, y.constant) {
                    (_, Some(0.0)) => Needed::constant(0.0),
                    (Some(p), Some(q)) => Needed::constant(p / q),
                    _ => x.union(y),
                }
            }
            Expr::Min(a, b) | Expr::Max(a, b) => {
                let (x, y) = (a.needed(env)?, b.needed(env)?);
                match (x.constant, y.constant) {
                    (Some(_), Some(_)) => Needed::constant(self.eval(env)),
                    _ => x.union(y),
                }
            }
            Expr::If {
                then,
                cond,
                otherwise,
            } => {
                let c = cond.needed(env)?;
                match c.constant {
                    Some(0.0) => otherwise.needed(env)?,
                    Some(_) => then.needed(env)?,
                    None => {
                        let (t, o) = (then.needed(env)?, otherwise.needed(env)?);
                        match (t.constant, o.constant) {
                            (Some(p), Some(q)) if p == q => Needed::constant(p),
                            _ => c.union(t).union(o),
                        }
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Vals(HashMap<&'static str, f64>);
    impl Env for Vals {
        fn value(&self, id: &str) -> Option<f64> {
            self.0.get(id).copied()
        }
        fn literal(&self, name: &str) -> Option<f64> {
            match name.to_ascii_lowercase().as_str() {
                "smt_on" => Some(1.0),
                "num_cores" => Some(4.0),
                _ => None,
            }
        }
        fn has_event(&self, id: &str) -> bool {
            id == "cycles"
        }
    }

    fn env() -> Vals {
        Vals(HashMap::from([
            ("INST_RETIRED.ANY", 3e9),
            ("CPU_CLK_UNHALTED.THREAD", 2e9),
            ("zero", 0.0),
        ]))
    }

    fn ev(s: &str) -> f64 {
        Expr::parse(s).unwrap().eval(&env())
    }

    #[test]
    fn arithmetic_and_ratios() {
        assert_eq!(ev("INST_RETIRED.ANY / CPU_CLK_UNHALTED.THREAD"), 1.5);
        assert_eq!(ev("d_ratio(INST_RETIRED.ANY, zero)"), 0.0);
        assert!(ev("INST_RETIRED.ANY / zero").is_nan());
        assert_eq!(ev("7 % 4"), 3.0);
        assert!(ev("7 % 0").is_nan());
        assert_eq!(ev("min(2, 3) + max(2, 3)"), 5.0);
        assert_eq!(ev("-2 * 3 + 10"), 4.0);
        assert_eq!(ev("1 - 2 - 3"), -4.0);
        assert_eq!(ev("#num_cores * 2"), 8.0);
    }

    #[test]
    fn missing_inputs_are_nan_unless_logic_decides() {
        assert!(ev("missing + 1").is_nan());
        assert_eq!(ev("1 | missing"), 1.0);
        assert_eq!(ev("0 & missing"), 0.0);
        assert!(ev("1 & missing").is_nan());
        assert_eq!(ev("(2 > 1) ^ (1 > 2)"), 1.0);
    }

    #[test]
    fn conditions_pick_a_branch() {
        assert_eq!(ev("10 if #SMT_on else 20"), 10.0);
        assert_eq!(ev("10 if zero else 20"), 20.0);
        assert_eq!(ev("1 if has_event(cycles) else 2"), 1.0);
        assert_eq!(ev("1 if has_event(nope) else 2"), 2.0);
    }

    #[test]
    fn needed_ids_skip_branches_a_constant_rules_out() {
        let n = |s: &str| Expr::parse(s).unwrap().needed(&env()).unwrap();
        let got = n("(a / b) if #SMT_on else c");
        assert_eq!(got.ids, BTreeSet::from(["a".into(), "b".into()]));
        assert_eq!(
            n("x if has_event(nope) else y").ids,
            BTreeSet::from(["y".into()])
        );
        let both = n("x if z > 1 else y").ids;
        assert_eq!(both.len(), 3);
        assert_eq!(n("d_ratio(x, 0)").constant, Some(0.0));
        assert_eq!(n("0 & x").constant, Some(0.0));
        assert_eq!(n("2 * #num_cores").constant, Some(8.0));
        assert!(Expr::parse("#bogus").unwrap().needed(&env()).is_err());
    }
}
