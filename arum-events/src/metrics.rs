//! Derived metrics (IPC, CPI, the TopdownL1.. levels, miss rates, bandwidths), as the kernel's
//! metric files define them for each model, plus perf's common metrics for every CPU.
//!
//! For the lead's run sequence, in order:
//! 1. [`crate::plan::plan_with`] with the `-M` names or groups: it selects the metrics
//!    ([`select`]), adds the events their expressions need to `Plan::events` (marked
//!    `requested: false`), and keeps each as a [`PlannedMetric`] with its inputs, or with the
//!    reason it cannot be computed here (`unavailable`).
//! 2. After the run, [`evaluate`] with each planned event's total (or why it was not counted)
//!    and the run's tool values: every metric gets a value, or `why_not` — never a 0 that was
//!    not measured.

use std::collections::BTreeSet;

use arum_metrics::{Env, Expr, ScaleUnit};
use serde::{Deserialize, Serialize};

use crate::plan::{Machine, PlannedEvent};
use crate::resolve::{EventKind, ResolvedEvent, Resolver};
use crate::table::{MetricRef, Table, Unit};

/// Values perf computes itself rather than counting (its "tool" PMU).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    /// The wall time of the run, in nanoseconds.
    DurationTime,
    /// User CPU time of the measured tree, in nanoseconds.
    UserTime,
    /// System CPU time of the measured tree, in nanoseconds.
    SystemTime,
}

impl Tool {
    fn from_id(id: &str) -> Option<Tool> {
        let id = id
            .strip_prefix("tool@")
            .and_then(|s| s.strip_suffix('@'))
            .unwrap_or(id);
        match id {
            "duration_time" => Some(Tool::DurationTime),
            "user_time" => Some(Tool::UserTime),
            "system_time" => Some(Tool::SystemTime),
            _ => None,
        }
    }
}

/// One identifier a metric reads: a planned event, or a tool value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricInput {
    /// As the expression names it (escapes removed): `INST_RETIRED.ANY`, `msr@tsc@`...
    pub id: String,
    /// Index into `Plan::events`.
    pub event: Option<usize>,
    pub tool: Option<Tool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedMetric {
    pub name: String,
    /// The table that defines it: the model's, or `common`.
    pub table: String,
    /// The core type whose events it reads (hybrid parts), else [`Unit::Core`].
    pub unit: Unit,
    /// The expression as the table gives it.
    pub expr: String,
    /// perf's ScaleUnit: factor and unit of the shown value (`100%`, `1GHz`); empty: none.
    pub scale_unit: String,
    pub groups: Vec<String>,
    pub threshold: Option<String>,
    /// The metric and every metric it refers to, (name, expression), for evaluation.
    pub definitions: Vec<(String, String)>,
    pub inputs: Vec<MetricInput>,
    /// Identifiers `has_event()` found when the metric was planned.
    pub present: Vec<String>,
    /// Why it cannot be computed here; it then gets no value.
    pub unavailable: Option<String>,
}

/// Facts about the machine and the run that metric expressions read as `#literals`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFacts {
    pub smt_on: bool,
    pub num_cpus: u32,
    pub num_cpus_online: u32,
    pub num_cores: u32,
    pub num_packages: u32,
    pub num_dies: u32,
    /// The TSC's rate in Hz, if known (CPUID leaf 0x15, else the brand string).
    pub system_tsc_freq: Option<f64>,
    /// Counting whole CPUs (`--scope system`), not one program.
    pub system_wide: bool,
    pub has_pmem: bool,
    /// `VENDOR-FAMILY-MODEL-STEPPING` as perf spells it, for `strcmp_cpuid_str`.
    pub cpuid: String,
}

impl RunFacts {
    /// The topology of the machine arum runs on (sysfs) and the TSC rate.
    pub fn this_machine(cpu: &crate::cpu::CpuIdent, system_wide: bool) -> RunFacts {
        let sys = std::path::Path::new("/sys/devices/system/cpu");
        let read = |p: &std::path::Path| std::fs::read_to_string(p).ok();
        let list = |name: &str| {
            read(&sys.join(name))
                .and_then(|s| crate::sysfs::parse_cpulist(&s))
                .unwrap_or_default()
        };
        let online = list("online");
        let present = list("present");
        let topo = |cpu: u32, f: &str| {
            read(&sys.join(format!("cpu{cpu}/topology/{f}")))
                .and_then(|s| s.trim().parse::<i64>().ok())
                .unwrap_or(0)
        };
        let count = |key: &dyn Fn(u32) -> Vec<i64>| {
            online
                .iter()
                .map(|&c| key(c))
                .collect::<BTreeSet<_>>()
                .len() as u32
        };
        RunFacts {
            smt_on: read(&sys.join("smt/active")).is_some_and(|s| s.trim() == "1"),
            num_cpus: present.len().max(online.len()) as u32,
            num_cpus_online: online.len() as u32,
            num_cores: count(&|c| {
                vec![
                    topo(c, "physical_package_id"),
                    topo(c, "die_id"),
                    topo(c, "core_id"),
                ]
            }),
            num_packages: count(&|c| vec![topo(c, "physical_package_id")]),
            num_dies: count(&|c| vec![topo(c, "physical_package_id"), topo(c, "die_id")]),
            system_tsc_freq: tsc_freq(cpu),
            system_wide,
            has_pmem: std::fs::read_dir("/sys/bus/nd/devices").is_ok_and(|d| {
                d.filter_map(|e| e.ok())
                    .any(|e| e.file_name().to_string_lossy().starts_with("region"))
            }),
            cpuid: format!("{}-{:X}", cpu.key(), cpu.stepping),
        }
    }

    fn literal(&self, name: &str) -> Option<f64> {
        let b = |v: bool| if v { 1.0 } else { 0.0 };
        Some(match name.to_ascii_lowercase().as_str() {
            "smt_on" => b(self.smt_on),
            "num_cpus" => f64::from(self.num_cpus),
            "num_cpus_online" => f64::from(self.num_cpus_online),
            "num_cores" => f64::from(self.num_cores),
            "num_packages" => f64::from(self.num_packages),
            "num_dies" => f64::from(self.num_dies),
            "system_tsc_freq" => self.system_tsc_freq?,
            // perf: counts cover whole cores when counting system-wide or without SMT.
            "core_wide" => b(self.system_wide || !self.smt_on),
            "target_cpu" => b(self.system_wide),
            "has_pmem" => b(self.has_pmem),
            _ => return None,
        })
    }
}

/// The TSC rate: CPUID leaf 0x15 (crystal × ratio), else the "@ 2.10GHz" of the brand string.
fn tsc_freq(cpu: &crate::cpu::CpuIdent) -> Option<f64> {
    use raw_cpuid::CpuIdReader;
    let r = crate::cpu::SharedCpuid;
    if cpu.vendor == "GenuineIntel" && r.cpuid1(0).eax >= 0x15 {
        let l = r.cpuid1(0x15);
        if l.eax != 0 && l.ebx != 0 && l.ecx != 0 {
            return Some(f64::from(l.ecx) * f64::from(l.ebx) / f64::from(l.eax));
        }
    }
    let (_, after) = cpu.model_name.rsplit_once('@')?;
    let t = after.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("GHz") {
        (n, 1e9)
    } else {
        (t.strip_suffix("MHz")?, 1e6)
    };
    num.trim().parse::<f64>().ok().map(|v| v * scale)
}

/// A metric and the table it comes from.
#[derive(Debug, Clone, Copy)]
pub struct Selected {
    pub metric: MetricRef,
    pub table: Table,
}

/// Names users give to perf's common metrics (perf stat's own words beside its counts, and the
/// other tools'), for CPUs whose table has no metric of that name: (alias, common metric).
/// A metric or group the tables name so is found first.
const ALIASES: [(&str, &str); 6] = [
    ("IPC", "insn_per_cycle"),
    ("insn-per-cycle", "insn_per_cycle"),
    ("GHz", "cycles_frequency"),
    ("CPUs", "CPUs_utilized"),
    ("cpus-utilized", "CPUs_utilized"),
    ("branch-miss-rate", "branch_miss_rate"),
];

/// Whether metric `name` answers to `wanted`: case-insensitive, `-` and `_` alike.
fn same_name(name: &str, wanted: &str) -> bool {
    name.len() == wanted.len()
        && name.bytes().zip(wanted.bytes()).all(|(a, b)| {
            a.eq_ignore_ascii_case(&b) || a == b'-' && b == b'_' || a == b'_' && b == b'-'
        })
}

/// The metrics named by `wanted`: metric names, or group names (every metric of the group),
/// case-insensitive, from the model's table and the common metrics; then the aliases of the
/// common metrics.
pub fn select(
    table: Option<Table>,
    common: Option<Table>,
    wanted: &[String],
) -> Result<Vec<Selected>, String> {
    let all: Vec<Selected> = table
        .into_iter()
        .chain(common)
        .flat_map(|t| t.metrics().map(move |metric| Selected { metric, table: t }))
        .collect();
    let mut out: Vec<Selected> = Vec::new();
    for w in wanted {
        let named = |w: &str| -> Vec<Selected> {
            all.iter()
                .filter(|s| same_name(s.metric.name(), w))
                .copied()
                .collect()
        };
        let mut found = named(w);
        if found.is_empty() {
            found = all
                .iter()
                .filter(|s| s.metric.groups().any(|g| g.eq_ignore_ascii_case(w)))
                .copied()
                .collect();
        }
        if found.is_empty() {
            if let Some((_, common)) = ALIASES.iter().find(|(a, _)| same_name(a, w)) {
                found = named(common);
            }
        }
        if found.is_empty() {
            return Err(format!(
                "unknown metric or metric group '{w}' for this CPU; `arum list --metrics` shows them"
            ));
        }
        for s in found {
            let dup = out.iter().any(|o| {
                o.metric.name() == s.metric.name()
                    && o.metric.unit() == s.metric.unit()
                    && o.table == s.table
            });
            if !dup {
                out.push(s);
            }
        }
    }
    Ok(out)
}

/// Every metric group, with the number of metrics in it.
pub fn groups(tables: &[Table]) -> Vec<(String, usize)> {
    let mut g: std::collections::BTreeMap<String, usize> = Default::default();
    for t in tables {
        for m in t.metrics() {
            for name in m.groups() {
                *g.entry(name.to_string()).or_default() += 1;
            }
        }
    }
    g.into_iter().collect()
}

/// The metric and every metric it refers to, transitively: (name, expression).
fn definitions(s: &Selected) -> Vec<(String, String)> {
    let mut out = vec![(s.metric.name().to_string(), s.metric.expr().to_string())];
    let mut i = 0;
    while i < out.len() && out.len() < 200 {
        let ids = Expr::parse(&out[i].1).map(|e| e.ids()).unwrap_or_default();
        for id in ids {
            if out.iter().any(|(n, _)| n.eq_ignore_ascii_case(&id)) {
                continue;
            }
            if let Some(m) = find_metric(s.table, s.metric.unit(), &id) {
                out.push((m.name().to_string(), m.expr().to_string()));
            }
        }
        i += 1;
    }
    out
}

fn find_metric(table: Table, unit: Unit, name: &str) -> Option<MetricRef> {
    let mut same_name = table
        .metrics()
        .filter(|m| m.name().eq_ignore_ascii_case(name));
    let all: Vec<MetricRef> = same_name.by_ref().collect();
    all.iter()
        .find(|m| m.unit() == unit)
        .or_else(|| all.first())
        .copied()
}

/// The expression with every metric it names replaced by that metric's expression.
fn expand(defs: &[(String, String)]) -> Result<Expr, String> {
    let parsed: Vec<(String, Expr)> = defs
        .iter()
        .map(|(n, e)| {
            Expr::parse(e)
                .map(|x| (n.clone(), x))
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    let mut root = parsed[0].1.clone();
    // Each round inlines one level; metrics nest a few levels deep at most.
    for _ in 0..16 {
        let mut changed = false;
        root.substitute(&mut |id| {
            let hit = parsed[1..]
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(id))
                .map(|(_, e)| e.clone());
            changed |= hit.is_some();
            hit
        });
        if !changed {
            return Ok(root);
        }
    }
    Err("its definition refers to itself".into())
}

/// What planning evaluates constants against: literals from the machine's facts, `has_event`
/// by whether the name resolves.
struct PlanEnv<'a, 'r> {
    facts: &'a RunFacts,
    resolver: &'a Resolver<'r>,
    unit: Unit,
    present: std::cell::RefCell<Vec<String>>,
}

impl Env for PlanEnv<'_, '_> {
    fn value(&self, _id: &str) -> Option<f64> {
        None
    }
    fn literal(&self, name: &str) -> Option<f64> {
        self.facts.literal(name)
    }
    fn has_event(&self, id: &str) -> bool {
        let ok = self.resolver.resolve(&spec_for(id, self.unit)).is_ok();
        if ok {
            self.present.borrow_mut().push(id.to_string());
        }
        ok
    }
    fn cpuid_matches(&self, pattern: &str) -> bool {
        cpuid_matches(&self.facts.cpuid, pattern)
    }
}

/// perf's `strcmp_cpuid_str` for the simple patterns metric files use: a literal prefix match
/// of the CPUID string (`GenuineIntel-6-8F`), without regular expressions.
fn cpuid_matches(cpuid: &str, pattern: &str) -> bool {
    !pattern.is_empty()
        && !pattern.contains(['[', '(', '*', '+', '|'])
        && cpuid
            .to_ascii_lowercase()
            .starts_with(&pattern.to_ascii_lowercase())
}

/// The event spec for a metric identifier: as written, or aimed at the metric's core type.
fn spec_for(id: &str, unit: Unit) -> String {
    if unit != Unit::Core && !id.contains('@') && !id.contains('/') {
        format!("{}/{id}/", unit.pmu_name())
    } else {
        id.to_string()
    }
}

/// Two planned events count the same thing.
fn same(a: &ResolvedEvent, b: &ResolvedEvent) -> bool {
    a.exclude_user == b.exclude_user
        && a.exclude_kernel == b.exclude_kernel
        && a.targets.len() == b.targets.len()
        && a.targets.iter().zip(&b.targets).all(|(x, y)| {
            (x.pmu.as_str(), x.perf_type, x.config, x.config1)
                == (y.pmu.as_str(), y.perf_type, y.config, y.config1)
        })
}

/// Plans the metrics `names` (see the module's documentation): adds the events they need to
/// `events` and places them with `place`; a metric whose events cannot be resolved or do not
/// fit the counters with the others is kept with the reason.
pub fn plan_metrics(
    names: &[String],
    m: &Machine,
    resolver: &Resolver,
    facts: &RunFacts,
    events: &mut Vec<PlannedEvent>,
    hardware_off: bool,
    place: &dyn Fn(&mut [PlannedEvent]) -> Result<(), String>,
) -> Result<Vec<PlannedMetric>, String> {
    let selected = select(m.table, m.common(), names)?;
    let mut out = Vec::new();
    for s in selected {
        let defs = definitions(&s);
        let mut pm = PlannedMetric {
            name: s.metric.name().into(),
            table: s.table.name().into(),
            unit: s.metric.unit(),
            expr: s.metric.expr().into(),
            scale_unit: s.metric.scale_unit().into(),
            groups: s.metric.groups().map(String::from).collect(),
            threshold: s.metric.threshold().map(String::from),
            definitions: defs.clone(),
            inputs: Vec::new(),
            present: Vec::new(),
            unavailable: None,
        };
        let before = events.len();
        if let Err(why) = plan_one(&mut pm, &defs, resolver, facts, events, hardware_off) {
            pm.unavailable = Some(why);
            pm.inputs.clear();
            events.truncate(before);
        } else if events.len() > before {
            if let Err(why) = place(events) {
                pm.unavailable = Some(format!(
                    "its events do not fit the counters together with the others: {why}"
                ));
                pm.inputs.clear();
                events.truncate(before);
                let _ = place(events);
            }
        }
        out.push(pm);
    }
    Ok(out)
}

fn plan_one(
    pm: &mut PlannedMetric,
    defs: &[(String, String)],
    resolver: &Resolver,
    facts: &RunFacts,
    events: &mut Vec<PlannedEvent>,
    hardware_off: bool,
) -> Result<(), String> {
    let expr = expand(defs).map_err(|e| format!("cannot read its expression: {e}"))?;
    let env = PlanEnv {
        facts,
        resolver,
        unit: pm.unit,
        present: Default::default(),
    };
    let needed = expr
        .needed(&env)
        .map_err(|e| format!("{e}: this machine's value is unknown (see `arum info`)"))?;
    pm.present = env.present.into_inner();
    for id in needed.ids {
        if let Some(tool) = Tool::from_id(&id) {
            pm.inputs.push(MetricInput {
                id,
                event: None,
                tool: Some(tool),
            });
            continue;
        }
        let ev = resolver
            .resolve(&spec_for(&id, pm.unit))
            .map_err(|e| format!("it needs {id}, which cannot be counted here: {e}"))?;
        if hardware_off && !matches!(ev.kind, EventKind::Software { .. }) {
            return Err(format!(
                "it needs the hardware event {id}, and hardware counting is off"
            ));
        }
        let index = match events.iter().position(|e| same(&e.event, &ev)) {
            Some(i) => i,
            None => {
                events.push(PlannedEvent {
                    event: ev,
                    placement: None,
                    requested: false,
                });
                events.len() - 1
            }
        };
        pm.inputs.push(MetricInput {
            id,
            event: Some(index),
            tool: None,
        });
    }
    Ok(())
}

/// Tool values of the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolValues {
    pub duration_ns: f64,
    pub user_ns: f64,
    pub system_ns: f64,
}

/// A metric's value after the run, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricValue {
    pub name: String,
    pub table: String,
    pub unit: Unit,
    /// The value in `unit_label` (the expression's value times the ScaleUnit factor).
    pub value: Option<f64>,
    /// The expression's value itself.
    pub raw: Option<f64>,
    pub unit_label: String,
    /// Each input and its value (events summed over CPUs).
    pub inputs: Vec<(String, Option<f64>)>,
    /// Why there is no value.
    pub why_not: Option<String>,
    /// Whether the value crosses the metric's threshold (perf's MetricThreshold), if it has one
    /// that could be evaluated.
    pub above_threshold: Option<bool>,
}

struct RunEnv<'a> {
    metric: &'a PlannedMetric,
    values: &'a dyn Fn(&MetricInput) -> Option<f64>,
    facts: &'a RunFacts,
    others: &'a [(String, Unit, Option<f64>)],
    events: Option<&'a [PlannedEvent]>,
}

impl Env for RunEnv<'_> {
    fn value(&self, id: &str) -> Option<f64> {
        if let Some(input) = self.metric.inputs.iter().find(|i| i.id == id) {
            return (self.values)(input);
        }
        self.others
            .iter()
            .find(|(n, u, _)| {
                n.eq_ignore_ascii_case(id) && (*u == self.metric.unit || *u == Unit::Core)
            })
            .and_then(|(_, _, v)| *v)
    }
    fn literal(&self, name: &str) -> Option<f64> {
        self.facts.literal(name)
    }
    fn has_event(&self, id: &str) -> bool {
        self.metric.present.iter().any(|p| p == id)
    }
    fn source_count(&self, id: &str) -> f64 {
        let n = self
            .metric
            .inputs
            .iter()
            .find(|i| i.id == id)
            .and_then(|i| i.event)
            .and_then(|e| self.events.map(|evs| evs[e].event.targets.len()))
            .unwrap_or(1);
        n.max(1) as f64
    }
    fn cpuid_matches(&self, pattern: &str) -> bool {
        cpuid_matches(&self.facts.cpuid, pattern)
    }
}

/// Evaluates every planned metric. `counts[i]` is the total of `events[i]` over CPUs, or why it
/// was not counted; `tools` the run's wall and CPU times; `events` (optional) the plan's events,
/// for `source_count`.
pub fn evaluate(
    metrics: &[PlannedMetric],
    counts: &[Result<f64, String>],
    tools: &ToolValues,
    facts: &RunFacts,
    events: Option<&[PlannedEvent]>,
) -> Vec<MetricValue> {
    let values = |i: &MetricInput| input_value(i, counts, tools);
    let mut results: Vec<MetricValue> = metrics
        .iter()
        .map(|m| {
            let env = RunEnv {
                metric: m,
                values: &values,
                facts,
                others: &[],
                events,
            };
            value(m, counts, &env)
        })
        .collect();
    // Thresholds read the metrics' own (unscaled) values.
    let others: Vec<(String, Unit, Option<f64>)> = results
        .iter()
        .map(|r| (r.name.clone(), r.unit, r.raw))
        .collect();
    for (m, r) in metrics.iter().zip(results.iter_mut()) {
        let (Some(t), Some(_)) = (&m.threshold, r.raw) else {
            continue;
        };
        let env = RunEnv {
            metric: m,
            values: &values,
            facts,
            others: &others,
            events,
        };
        if let Ok(e) = Expr::parse(t) {
            let x = e.eval(&env);
            r.above_threshold = (!x.is_nan()).then_some(x != 0.0);
        }
    }
    results
}

/// An input's value: its event's count (none when not counted) or the run's time it names.
fn input_value(i: &MetricInput, counts: &[Result<f64, String>], tools: &ToolValues) -> Option<f64> {
    match (i.event, i.tool) {
        (Some(e), _) => counts.get(e).and_then(|c| c.as_ref().ok()).copied(),
        (None, Some(Tool::DurationTime)) => Some(tools.duration_ns),
        (None, Some(Tool::UserTime)) => Some(tools.user_ns),
        (None, Some(Tool::SystemTime)) => Some(tools.system_ns),
        (None, None) => None,
    }
}

/// One metric with its inputs, and its value in its unit or why it has none: unavailable in
/// the plan, an input without a value, or an expression without one.
fn value(m: &PlannedMetric, counts: &[Result<f64, String>], env: &RunEnv) -> MetricValue {
    let scale = ScaleUnit::parse(&m.scale_unit);
    let mut v = MetricValue {
        name: m.name.clone(),
        table: m.table.clone(),
        unit: m.unit,
        value: None,
        raw: None,
        unit_label: scale.unit.clone(),
        inputs: m
            .inputs
            .iter()
            .map(|i| (i.id.clone(), (env.values)(i)))
            .collect(),
        why_not: m.unavailable.clone(),
        above_threshold: None,
    };
    if v.why_not.is_none() {
        v.why_not = missing_inputs(m, counts, env.values);
    }
    if v.why_not.is_none() {
        match expand(&m.definitions).map(|e| e.eval(env)) {
            Ok(x) if x.is_finite() => {
                v.raw = Some(x);
                v.value = Some(x * scale.factor);
            }
            Ok(_) => {
                v.why_not = Some(
                    "the expression has no value with these counts (a division by zero)".into(),
                )
            }
            Err(e) => v.why_not = Some(format!("cannot read its expression: {e}")),
        }
    }
    v
}

/// The inputs of `m` without a value, each with why, in one line; `None` when every one has one.
fn missing_inputs(
    m: &PlannedMetric,
    counts: &[Result<f64, String>],
    values: &dyn Fn(&MetricInput) -> Option<f64>,
) -> Option<String> {
    let missing: Vec<String> = m
        .inputs
        .iter()
        .filter(|i| values(i).is_none())
        .map(|i| match i.event.and_then(|e| counts.get(e)) {
            Some(Err(why)) => format!("{} was not counted ({why})", i.id),
            _ => format!("{} has no value", i.id),
        })
        .collect();
    (!missing.is_empty()).then(|| missing.join("; "))
}
