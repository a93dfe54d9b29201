//! The parser of a single measured run's command line: what `Cli` parses when no subcommand is
//! named, with only the definitions the line can use.
//!
//! clap builds every definition of a command on every parse, and that is most of arum's own
//! work in a short run (`benchmarks/parse-cost.sh` counts the instructions; each definition is a
//! value of some 600 bytes, moved into a vector that doubles as it grows, and the heap's fresh
//! pages cost a run more than the instructions). So this parser leaves out the subcommands and the series
//! options, and builds a group of the run's options (`RunArgs`' flattened groups) only where a
//! word of the line before `--` may name one of its options; a group left out takes its
//! defaults, which are those clap gives (a test compares them). Whatever this parser refuses,
//! a series option (`--env` among them) or a word no group knows, goes to the full parser, so
//! its messages and its answer are the one parser's. It never answers otherwise than the full
//! parser: a line that names no option of a group cannot set one, and every word that could is
//! matched against the group's names (`GROUPS`, checked against clap's definitions).

use std::ffi::OsString;
use std::mem::ManuallyDrop;

use clap::{ArgMatches, Args, Command, FromArgMatches};

use super::run::{
    CountingArgs, EventArgs, FunctionArgs, ProgramArgs, ReportArgs, RunArgs, StrictArgs,
    SyscallArgs, WatchArgs,
};
use super::USAGE;

/// In place of the series options: none.
#[derive(Debug, Args)]
pub(super) struct NoSeries {}

/// A group of the run's options built only when named: its long names (with aliases), its
/// short ones, and what adds its definitions to a command.
///
/// Leaving a group out is sound only while no option of one group conflicts with, requires or
/// takes its default from an option of another, and no option takes a value that starts with
/// `-` (which could be an option's name): a test checks the conflicts and the values, and
/// `requires` (which clap does not give back) stays within a group by this rule.
struct Group {
    long: &'static [&'static str],
    short: &'static [char],
    build: fn(Command) -> Command,
}

/// The groups in the order of `RunArgs`' fields; `ProgramArgs` and `StrictArgs` are always
/// built (every run has a program; `--strict` is one definition).
const GROUPS: [Group; 6] = [
    Group {
        long: &["output", "format", "html", "self-timing"],
        short: &['o'],
        build: ReportArgs::augment_args,
    },
    // With its CpuArgs.
    Group {
        long: &["events", "metrics", "events-file", "cpu", "event-tables"],
        short: &['e', 'M'],
        build: EventArgs::augment_args,
    },
    Group {
        long: &[
            "scope",
            "all-cpus",
            "cpus",
            "per-cpu",
            "totals",
            "no-multiplex",
            "interval",
            "backend",
        ],
        short: &['a', 'C', 'I'],
        build: CountingArgs::augment_args,
    },
    Group {
        long: &[
            "functions",
            "functions-file",
            "exact-counts",
            "probe-budget",
            "no-throttle",
        ],
        short: &['F'],
        build: FunctionArgs::augment_args,
    },
    Group {
        long: &[
            "syscalls",
            "task-begin",
            "task-end",
            "views",
            "probe-engine",
        ],
        short: &[],
        build: SyscallArgs::augment_args,
    },
    Group {
        long: &[
            "ambient",
            "noise-probe",
            "per-task",
            "tasks",
            "enable-delayacct",
            "no-memory-sampling",
        ],
        short: &[],
        build: WatchArgs::augment_args,
    },
];

/// Which groups a word of `args` (the program's name first) before `--` may name: `--NAME`
/// and `--NAME=VALUE` by the long name, `-XYZ` by every letter (a value given as `-oFILE` may
/// name more groups than it sets, which costs only their definitions).
fn named(args: &[OsString]) -> [bool; GROUPS.len()] {
    let mut named = [false; GROUPS.len()];
    for word in args.iter().skip(1).take_while(|w| *w != "--") {
        let Some(word) = word.to_str() else { continue };
        if let Some(long) = word.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(name, _)| name);
            for (n, g) in named.iter_mut().zip(&GROUPS) {
                *n |= g.long.contains(&name);
            }
        } else if let Some(letters) = word.strip_prefix('-') {
            for (n, g) in named.iter_mut().zip(&GROUPS) {
                *n |= letters.chars().any(|c| g.short.contains(&c));
            }
        }
    }
    named
}

/// The command of the run's options with the groups `named` asks for.
fn command(named: &[bool; GROUPS.len()]) -> Command {
    let mut c = ProgramArgs::augment_args(Command::new("arum").override_usage(USAGE));
    for (g, &wanted) in GROUPS.iter().zip(named) {
        if wanted {
            c = (g.build)(c);
        }
    }
    StrictArgs::augment_args(c)
}

/// A group's values: from the matches where it was built, else its defaults.
fn group<G: FromArgMatches + Default>(built: bool, m: &mut ArgMatches) -> Option<G> {
    if built {
        G::from_arg_matches_mut(m).ok()
    } else {
        Some(G::default())
    }
}

/// The run's options of `args` (the program's name first), for the process's one parse: the
/// definitions and the matches are left to the process's exit instead of being freed one by
/// one. `None` where clap refuses the line (the full parser then answers).
pub(super) fn parse(args: &[OsString]) -> Option<RunArgs<NoSeries>> {
    let named = named(args);
    let mut command = ManuallyDrop::new(command(&named));
    let mut m = ManuallyDrop::new(command.try_get_matches_from_mut(args).ok()?);
    let [report, events, counting, functions, syscalls, watch] = named;
    Some(RunArgs {
        program: ProgramArgs::from_arg_matches_mut(&mut m).ok()?,
        report: group(report, &mut m)?,
        events: group(events, &mut m)?,
        counting: group(counting, &mut m)?,
        functions: group(functions, &mut m)?,
        syscalls: group(syscalls, &mut m)?,
        watch: group(watch, &mut m)?,
        strictness: StrictArgs::from_arg_matches_mut(&mut m).ok()?,
        series: NoSeries {},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group's own command and the names clap gives its options.
    fn names(c: Command) -> (Vec<String>, Vec<char>) {
        let mut long: Vec<String> = c
            .get_arguments()
            .flat_map(|a| {
                a.get_long()
                    .into_iter()
                    .chain(a.get_all_aliases().into_iter().flatten())
            })
            .map(String::from)
            .collect();
        let mut short: Vec<char> = c
            .get_arguments()
            .flat_map(|a| {
                a.get_short()
                    .into_iter()
                    .chain(a.get_all_short_aliases().into_iter().flatten())
            })
            .collect();
        long.sort();
        short.sort();
        (long, short)
    }

    fn bare() -> Command {
        Command::new("t")
    }

    #[test]
    fn each_group_s_names_are_those_clap_defines() {
        for g in &GROUPS {
            let mut long: Vec<String> = g.long.iter().map(|s| s.to_string()).collect();
            let mut short = g.short.to_vec();
            long.sort();
            short.sort();
            assert_eq!(names((g.build)(bare())), (long, short));
        }
    }

    #[test]
    fn the_groups_are_those_of_the_run_in_its_order() {
        let ids = |c: Command| c.get_arguments().map(|a| a.get_id().to_string()).collect();
        let mut grouped: Vec<String> = ids(ProgramArgs::augment_args(bare()));
        for g in &GROUPS {
            grouped.extend(ids((g.build)(bare())));
        }
        grouped.extend(ids(StrictArgs::augment_args(bare())));
        let run: Vec<String> = ids(RunArgs::<NoSeries>::augment_args(bare()));
        assert_eq!(grouped, run);
    }

    /// What makes leaving a group out sound (`Group`): every conflict stays within the group,
    /// and no value may start with `-`.
    #[test]
    fn no_option_of_a_group_depends_on_another_group() {
        let whole = command(&[true; GROUPS.len()]);
        for g in &GROUPS {
            let own = (g.build)(bare());
            let ids: Vec<&str> = own.get_arguments().map(|a| a.get_id().as_str()).collect();
            for a in own.get_arguments() {
                let full = whole
                    .get_arguments()
                    .find(|b| b.get_id() == a.get_id())
                    .unwrap();
                for other in whole.get_arg_conflicts_with(full) {
                    assert!(
                        ids.contains(&other.get_id().as_str()),
                        "{} conflicts with {} of another group",
                        a.get_id(),
                        other.get_id()
                    );
                }
                assert!(!a.is_allow_hyphen_values_set(), "{}", a.get_id());
                assert!(!a.is_allow_negative_numbers_set(), "{}", a.get_id());
            }
        }
    }

    #[test]
    fn with_every_group_the_command_defines_every_option_of_a_run() {
        let ids = |c: Command| {
            let mut v: Vec<String> = c.get_arguments().map(|a| a.get_id().to_string()).collect();
            v.sort();
            v
        };
        assert_eq!(
            ids(command(&[true; GROUPS.len()])),
            ids(RunArgs::<NoSeries>::augment_args(bare()))
        );
    }

    #[test]
    fn a_group_left_out_has_the_values_clap_gives_it_unnamed() {
        fn check<G: Args + FromArgMatches + Default + std::fmt::Debug>() {
            let m = G::augment_args(bare()).get_matches_from(["t"]);
            let parsed = G::from_arg_matches(&m).unwrap();
            assert_eq!(format!("{:?}", G::default()), format!("{parsed:?}"));
        }
        check::<ReportArgs>();
        check::<EventArgs>();
        check::<CountingArgs>();
        check::<FunctionArgs>();
        check::<SyscallArgs>();
        check::<WatchArgs>();
        check::<StrictArgs>();
        check::<super::super::SeriesArgs>();
    }

    #[test]
    fn a_word_names_the_groups_of_its_options_only_before_the_program() {
        let os = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(named(&os(&["arum", "--", "true"])), [false; 6]);
        assert_eq!(
            named(&os(&["arum", "-o", "r.txt", "--", "true", "-e", "x"])),
            [true, false, false, false, false, false]
        );
        assert_eq!(
            named(&os(&["arum", "--per-task=all", "-aI", "5", "--", "x"])),
            [false, false, true, false, false, true]
        );
        assert_eq!(
            named(&os(&["arum", "--tasks", "--syscalls=file", "-F", "f"])),
            [false, false, false, true, true, true]
        );
    }

    /// A word of a command line: an option of the run (or of a series, which the run's parser
    /// refuses) spelled in any of the ways clap takes, a value, or a cluster of short flags.
    fn word() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let options: Vec<clap::Arg> = <super::super::Cli as clap::CommandFactory>::command()
            .get_arguments()
            .cloned()
            .collect();
        let values = prop_oneof![
            Just("1".to_string()),
            Just("all".to_string()),
            Just("json".to_string()),
            Just("-e".to_string()),
            Just("--html".to_string()),
            Just("r.txt".to_string()),
            "[a-z0-9,=-]{0,6}",
        ];
        (0..options.len(), 0..6usize, values, "[aCIoeMFlrwiLPD]{1,3}").prop_map(
            move |(i, spelling, v, letters)| {
                let a = &options[i];
                // The name or one of its aliases, by the value's length.
                let longs: Vec<&str> = a
                    .get_long()
                    .into_iter()
                    .chain(a.get_all_aliases().into_iter().flatten())
                    .collect();
                let long =
                    (!longs.is_empty()).then(|| format!("--{}", longs[v.len() % longs.len()]));
                let short = a.get_short().map(|c| format!("-{c}"));
                match (spelling, long, short) {
                    (0, Some(l), _) => l,
                    (1, Some(l), _) => format!("{l}={v}"),
                    (2, Some(l), _) => format!("{l} {v}"),
                    (3, _, Some(s)) => format!("{s}{v}"),
                    (4, _, _) => format!("-{letters}"),
                    _ => v,
                }
            },
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(600))]

        #[test]
        fn the_run_parser_answers_as_the_full_parser(
            words in proptest::collection::vec(word(), 0..5),
            launch in proptest::bool::ANY,
        ) {
            let mut args = vec!["arum".to_string()];
            args.extend(words.iter().flat_map(|w| w.split(' ').map(String::from)));
            if launch {
                args.extend(["--launch".into(), "true".into()]);
            } else {
                args.extend(["--".into(), "true".into(), "-e".into()]);
            }
            let os: Vec<OsString> = args.iter().map(OsString::from).collect();
            let fast = super::super::Cli::parse_args(os);
            let full = <super::super::Cli as clap::Parser>::try_parse_from(&args);
            match (fast, full) {
                (Ok(f), Ok(g)) => proptest::prop_assert_eq!(format!("{f:?}"), format!("{g:?}")),
                (Err(f), Err(g)) => proptest::prop_assert_eq!(f.to_string(), g.to_string()),
                (f, g) => proptest::prop_assert!(false, "{args:?}: {f:?} against {g:?}"),
            }
        }
    }
}
