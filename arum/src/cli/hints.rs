//! One line for the usual mistakes behind an argument clap does not know, worked out from clap's
//! own definitions (which options take a value, which words are subcommands), so that a new
//! option cannot make the hint wrong:
//!
//! - the program named without `--` before it (`arum -o r.json sleep 1`);
//! - an option's value that starts with `-` (`arum hourglass -d -1s`), which clap takes for an
//!   option: it goes after `=`.

use clap::{Command, CommandFactory};

use super::Cli;

/// The hint for `args` (arum's arguments, without its own name), if one applies.
pub fn hint(args: &[String]) -> Option<String> {
    let cli = Cli::command();
    if let Some(sub) = args.first().and_then(|a| cli.find_subcommand(a)) {
        return dash_value(sub, &args[1..]);
    }
    dash_value(&cli, args).or_else(|| stray_program(&cli, args))
}

/// Whether `word` is an option of `cmd` that takes a value given in the next word.
fn takes_next(cmd: &Command, word: &str) -> bool {
    if word.contains('=') {
        return false;
    }
    cmd.get_arguments().any(|arg| {
        let named = match word.strip_prefix("--") {
            Some(long) => {
                arg.get_long() == Some(long)
                    || arg.get_all_aliases().is_some_and(|a| a.contains(&long))
            }
            None => {
                let mut chars = word.chars().skip(1);
                chars.next().is_some_and(|c| arg.get_short() == Some(c)) && chars.next().is_none()
            }
        };
        named && takes_value(arg)
    })
}

/// Whether the option takes a value: by its action, unless it takes none at all (the run's
/// flags are set by presence: `num_args = 0`, see `RunArgs`).
pub(super) fn takes_value(arg: &clap::Arg) -> bool {
    arg.get_action().takes_values() && arg.get_num_args().is_none_or(|n| n.max_values() > 0)
}

/// An option taking a value followed by a word starting with `-`.
fn dash_value(cmd: &Command, args: &[String]) -> Option<String> {
    let at = args
        .windows(2)
        .take_while(|w| w[0] != "--")
        .position(|w| takes_next(cmd, &w[0]) && w[1].starts_with('-') && w[1] != "--")?;
    let (option, value) = (&args[at], &args[at + 1]);
    Some(format!(
        "{option} takes a value, and one that starts with '-' is read as an option: write {option}={value}"
    ))
}

/// The first word that is neither an option nor an option's value: the program, named without
/// `--` before it.
fn stray_program(cli: &Command, args: &[String]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            return None;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        i += if takes_next(cli, a) { 2 } else { 1 };
    }
    let (before, program) = args.split_at(i.min(args.len()));
    program.first()?;
    Some(format!(
        "put the program after `--`: arum {}-- {}",
        before
            .iter()
            .map(|a| format!("{} ", shell_words::quote(a)))
            .collect::<String>(),
        shell_words::join(program)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn a_program_without_double_dash_is_put_after_it() {
        for (args, hinted) in [
            ("xz --version", "arum -- xz --version"),
            ("--self-timing xz -9 f", "arum --self-timing -- xz -9 f"),
            ("-o /dev/null sleep 1", "arum -o /dev/null -- sleep 1"),
            ("-e=cycles ./app", "arum '-e=cycles' -- ./app"),
            ("-r 3 -w 1 ./app x", "arum -r 3 -w 1 -- ./app x"),
        ] {
            assert_eq!(
                hint(&words(args)).as_deref(),
                Some(format!("put the program after `--`: {hinted}").as_str()),
                "{args}"
            );
        }
        assert_eq!(hint(&words("-o out.json --bogus")), None);
        assert_eq!(hint(&words("--bogus -- xz")), None);
    }

    #[test]
    fn every_option_that_takes_a_value_has_its_value_skipped() {
        // Whatever options the run parser has: the word after one that takes a value is its
        // value, and the word after that is the program.
        let cli = Cli::command();
        let mut checked = 0;
        for arg in cli.get_arguments().filter(|a| takes_value(a)) {
            let Some(flag) = arg
                .get_long()
                .map(|l| format!("--{l}"))
                .or_else(|| arg.get_short().map(|c| format!("-{c}")))
            else {
                continue;
            };
            let args = vec![flag.clone(), "VALUE".into(), "prog".into()];
            let h = hint(&args).unwrap_or_else(|| panic!("no hint for {args:?}"));
            assert!(
                h.ends_with(&format!("arum {flag} VALUE -- prog")),
                "{flag}: {h}"
            );
            checked += 1;
        }
        assert!(checked > 20, "only {checked} options take a value");
    }

    #[test]
    fn a_value_starting_with_a_dash_goes_after_an_equals_sign() {
        let h = hint(&words("hourglass -d -1s")).unwrap();
        assert!(h.contains("-d=-1s"), "{h}");
        assert!(!h.contains("arum --"), "a subcommand is not a program: {h}");
        let h = hint(&words("--probe-budget -5 -- true")).unwrap();
        assert!(h.contains("--probe-budget=-5"), "{h}");
        assert_eq!(hint(&words("hourglass -n 2 --bogus")), None);
    }
}
