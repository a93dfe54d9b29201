//! Resolving never panics, whatever the user types: a name is resolved or refused with an error
//! that can be shown, on every kind of table and with or without the kernel's PMUs.

use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::{Config, TestRunner};

use super::*;

/// One CPU per kind of table: Intel, hybrid Intel, K8, family 10h, Core 2, NetBurst, Zen, and
/// an Intel and an AMD family without a table.
const MODELS: &[&str] = &[
    SKYLAKE_SP,
    ALDER_LAKE,
    K8_REV_F,
    SHANGHAI,
    CORE2,
    NETBURST,
    ZEN4,
    INTEL_NO_TABLE,
    AMD_NO_TABLE,
];

const PMUS: &[&str] = &[
    "cpu",
    "cpu_core",
    "cpu_atom",
    "software",
    "msr",
    "uncore_imc",
    "",
];
const TERM_KEYS: &[&str] = &[
    "event",
    "umask",
    "cmask",
    "inv",
    "edge",
    "any",
    "config",
    "config1",
    "offcore_rsp",
    "ldlat",
    "frontend",
    "name",
    "period",
    "freq",
    "cpu",
    "pebs",
    "percore",
    "tsc",
    "",
];
const TERM_VALUES: &[&str] = &[
    "0",
    "1",
    "0x41",
    "0x1ff",
    "0x1000",
    "0x10000",
    "0xffffffffffffffff",
    "0x1ffffffffffffffff",
    "0X3c",
    "cpu_core",
    "-1",
    "",
    "0x",
    "ö",
];
const FLAGS: &[&str] = &["inv", "edge", "any", "pebs", "percore"];
const MASKS: &[&str] = &[
    "ALL",
    "ANY",
    "ANY_P",
    "NBOGUS",
    "BOGUS",
    "TAG0",
    "L1_LD_MISS",
    "BR_MSP",
    "ALL_LOADS",
    "L2_1G_TLB_HIT",
    "RUNNING",
    "NOPE",
    "",
];
const MODIFIERS: &[&str] = &["", "", "", ":u", ":k", ":uk", ":ku", ":x", ":"];

/// A piece of a generated name: text, or one of the names the CPU's resolver knows, picked
/// once the CPU is (an index into [`Resolver::candidates`]).
#[derive(Debug, Clone)]
enum Part {
    Text(String),
    Known(Index),
}

/// A name as a user might type it: the pieces, perhaps one character of any script inserted
/// anywhere (a typo, or a cut at a byte offset inside it), and a modifier.
#[derive(Debug, Clone)]
struct Name {
    parts: Vec<Part>,
    insert: Option<(Index, char)>,
    modifier: &'static str,
}

impl Name {
    fn spell(&self, known: &[String]) -> String {
        let mut s: String = self
            .parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.as_str(),
                Part::Known(i) => i.get(known).as_str(),
            })
            .collect();
        if let Some((at, ch)) = self.insert {
            let mut chars: Vec<char> = s.chars().collect();
            chars.insert(at.index(chars.len() + 1), ch);
            s = chars.into_iter().collect();
        }
        s + self.modifier
    }
}

fn text(s: &str) -> Part {
    Part::Text(s.to_string())
}

/// An event's name: a known one, a raw code, or any string at all.
fn event() -> impl Strategy<Value = Part> {
    prop_oneof![
        4 => any::<Index>().prop_map(Part::Known),
        1 => "r[0-9a-fA-F]{1,20}".prop_map(Part::Text),
        1 => any::<String>().prop_map(Part::Text),
    ]
}

/// One term of `PMU/terms/`: `key=value`, a flag, or an event's name.
fn term() -> impl Strategy<Value = Part> {
    let value = prop_oneof![
        select(TERM_VALUES).prop_map(String::from),
        any::<u64>().prop_map(|v| format!("{v:#x}")),
        any::<String>(),
    ];
    prop_oneof![
        3 => (select(TERM_KEYS), value).prop_map(|(k, v)| Part::Text(format!("{k}={v}"))),
        1 => select(FLAGS).prop_map(text),
        1 => event(),
    ]
}

/// `PMU/terms/` or `PMU@terms@`, the PMU a known one or an event's name.
fn pmu_terms() -> impl Strategy<Value = Vec<Part>> {
    let pmu = prop_oneof![select(PMUS).prop_map(text), event()];
    (
        pmu,
        select(&['/', '@'][..]),
        prop::collection::vec(term(), 0..4),
    )
        .prop_map(|(pmu, sep, terms)| {
            let sep = sep.to_string();
            let mut parts = vec![pmu, Part::Text(sep.clone())];
            for (i, t) in terms.into_iter().enumerate() {
                if i > 0 {
                    parts.push(text(","));
                }
                parts.push(t);
            }
            parts.push(Part::Text(sep));
            parts
        })
}

/// `EVENT:MASK:MASK` or `EVENT.MASK`.
fn with_masks() -> impl Strategy<Value = Vec<Part>> {
    (
        event(),
        select(&[":", "."][..]),
        prop::collection::vec(select(MASKS), 1..3),
    )
        .prop_map(|(e, sep, masks)| vec![e, text(sep), Part::Text(masks.join(":"))])
}

fn name() -> impl Strategy<Value = Name> {
    let parts = prop_oneof![
        3 => event().prop_map(|e| vec![e]),
        2 => pmu_terms(),
        1 => with_masks(),
    ];
    let insert = prop::option::of((any::<Index>(), any::<char>()));
    (parts, insert, select(MODIFIERS)).prop_map(|(parts, insert, modifier)| Name {
        parts,
        insert,
        modifier,
    })
}

/// Resolves `spec`: what comes back is consistent with what was asked, an error can be shown.
fn check(r: &Resolver, spec: &str) -> Result<(), TestCaseError> {
    match r.resolve(spec) {
        Ok(ev) => {
            prop_assert_eq!(&ev.spec, spec);
            prop_assert!(!ev.targets.is_empty());
            let modifiers = match spec.rsplit_once(':').map(|(_, m)| m) {
                Some("u") => (false, true),
                Some("k") => (true, false),
                _ => (false, false),
            };
            prop_assert_eq!((ev.exclude_user, ev.exclude_kernel), modifiers);
            match &ev.kind {
                EventKind::Software { config } => {
                    prop_assert_eq!(ev.targets.len(), 1);
                    prop_assert_eq!(ev.targets[0].perf_type, PERF_TYPE_SOFTWARE);
                    prop_assert_eq!(ev.targets[0].config, *config);
                }
                EventKind::Hardware(_) => {
                    prop_assert!(ev.targets.iter().all(|t| t.hw.is_some()));
                }
            }
        }
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    Ok(())
}

/// Runs `test` on generated cases (PROPTEST_CASES of them, 256 unless set).
fn run<S: Strategy>(strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) {
    let mut runner = TestRunner::new(Config {
        source_file: Some(file!()),
        ..Config::default()
    });
    if let Err(e) = runner.run(&strategy, test) {
        panic!("{e}");
    }
}

#[test]
fn any_string_is_resolved_or_refused_without_panicking() {
    let models: Vec<Model> = MODELS.iter().map(|k| Model::new(k)).collect();
    let flat = Sysfs::new(&[("cpu", 4, "0-15")]);
    let hybrid = Sysfs::new(&[("cpu_core", 4, "0-7"), ("cpu_atom", 10, "8-15")]);
    let pmus = [None, Some(&flat.pmus), Some(&hybrid.pmus)];
    run(
        (0..models.len(), 0..pmus.len(), any::<String>()),
        |(model, machine, spec)| check(&models[model].resolver().with_pmus(pmus[machine]), &spec),
    );
}

#[test]
fn names_shaped_like_events_are_resolved_or_refused_without_panicking() {
    let models: Vec<Model> = MODELS.iter().map(|k| Model::new(k)).collect();
    let known: Vec<Vec<String>> = models.iter().map(|m| m.resolver().candidates()).collect();
    let flat = Sysfs::new(&[("cpu", 4, "0-15")]);
    let hybrid = Sysfs::new(&[("cpu_core", 4, "0-7"), ("cpu_atom", 10, "8-15")]);
    let pmus = [None, Some(&flat.pmus), Some(&hybrid.pmus)];
    run(
        (0..models.len(), 0..pmus.len(), name()),
        |(model, machine, name)| {
            let spec = name.spell(&known[model]);
            check(&models[model].resolver().with_pmus(pmus[machine]), &spec)
        },
    );
}
