//! No value of any option panics: for every option that takes a value, of arum and of every
//! subcommand (found in clap's own definitions, so a new option is covered without a line
//! here), values of every class a user may type (any text, numbers with and without units,
//! signs, exponents, extremes) are parsed, converted to the engine's requests and planned as far
//! as planning goes without running anything: a run's settings and series, hourglass's
//! experiment or switch-cost plan. An error is an answer; a panic fails.

use std::time::Instant;

use clap::{CommandFactory, Parser};
use proptest::prelude::*;

use super::{Cli, Command};

/// (subcommand or none, option) for every option that takes a value.
fn options() -> Vec<(Option<String>, String)> {
    let cli = Cli::command();
    let flag = |a: &clap::Arg| {
        a.get_long()
            .map(|l| format!("--{l}"))
            .or_else(|| a.get_short().map(|c| format!("-{c}")))
    };
    let mut out: Vec<(Option<String>, String)> = cli
        .get_arguments()
        .filter(|a| super::hints::takes_value(a))
        .filter_map(|a| Some((None, flag(a)?)))
        .collect();
    for sub in cli.get_subcommands() {
        for a in sub.get_arguments().filter(|a| super::hints::takes_value(a)) {
            if let Some(f) = flag(a) {
                out.push((Some(sub.get_name().to_string()), f));
            }
        }
    }
    out
}

/// Values of every class: free text, numbers with units, extremes.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,16}",
        "-?[0-9]{1,24}(\\.[0-9]{0,6})?(e-?[0-9]{1,3})?(ns|us|µs|ms|s|m|h|K|M|G|T|KiB|GiB|%|x| s)?",
        Just("0".to_string()),
        Just("-0".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("18446744073709551616".to_string()),
        Just("1e308".to_string()),
        Just("0,1,,2".to_string()),
        Just("tásk-clöck".to_string()),
    ]
}

/// The words after the subcommand that make a command line complete enough to reach the value.
fn rest(sub: Option<&str>) -> Vec<&'static str> {
    match sub {
        None => vec!["--", "true"],
        Some("hourglass") => vec!["-n", "1"],
        Some("compare") => vec!["a.json", "b.json"],
        Some("merge") => vec!["a.json"],
        Some("suite") => vec!["s.toml", "--html", "/dev/null"],
        Some("html") => vec!["a.json"],
        Some("completions") => vec!["bash"],
        _ => vec![],
    }
}

/// Plans what can be planned without running anything.
fn plan(cli: Cli) {
    match cli.command {
        None => {
            let (run, series) = cli.run.requests();
            let _ = arum_core::series::SeriesSettings::from_request(&series);
            // Settings plan events and resolve functions: reading tables and ELF files only.
            let _ = arum_core::settings::Settings::from_request(&run, Instant::now());
        }
        Some(Command::Hourglass(args)) => {
            let r = args.request();
            match &r.switch_cost {
                Some(cost) => drop(cost.plan(&r.run)),
                None => drop(r.run.experiment()),
            }
        }
        Some(Command::Calibrate(args)) => drop(arum_calibrate::Request::from(args)),
        Some(Command::List(args)) => drop(arum_core::list::ListRequest::from(args)),
        Some(Command::Compare(args)) => {
            drop(arum_core::series::compare::CompareRequest::from(args))
        }
        Some(Command::Merge(args)) => drop(arum_core::series::merge::MergeRequest::from(args)),
        _ => {}
    }
}

/// The command line of `flag` set to `v`, under `sub`.
fn argv(sub: Option<&str>, flag: &str, v: &str) -> Vec<String> {
    let mut argv: Vec<String> = vec!["arum".into()];
    argv.extend(sub.map(String::from));
    // `--opt=VALUE`: a value that starts with a dash stays the option's.
    argv.push(format!("{flag}={v}"));
    argv.extend(rest(sub).into_iter().map(String::from));
    argv
}

// The fuzzing reaches planning: with a value each option takes, most command lines parse.
#[test]
fn every_option_taking_a_value_is_covered() {
    let all = options();
    assert!(all.len() > 60, "only {} options take a value", all.len());
    let parsed = all
        .iter()
        .filter(|(sub, flag)| {
            ["1", "1s", "text", "1K", "0.9", "all", "x"]
                .iter()
                .any(|v| Cli::try_parse_from(argv(sub.as_deref(), flag, v)).is_ok())
        })
        .count();
    assert!(
        parsed * 10 >= all.len() * 8,
        "{parsed} of {} parse",
        all.len()
    );
    for sub in ["hourglass", "calibrate", "compare", "list"] {
        assert!(all.iter().any(|(s, _)| s.as_deref() == Some(sub)), "{sub}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn no_value_of_any_option_panics(pick in any::<prop::sample::Index>(), v in value()) {
        let all = options();
        let (sub, flag) = &all[pick.index(all.len())];
        if let Ok(cli) = Cli::try_parse_from(argv(sub.as_deref(), flag, &v)) {
            plan(cli);
        }
    }
}
