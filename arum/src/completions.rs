//! Shell completions and the man page, generated from the clap definition itself so they never
//! disagree with `--help`.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use arum_core::error::ArumError;

/// `arum completions SHELL`: the completion script on stdout.
pub fn completions(args: &CompletionsArgs) -> Result<i32, ArumError> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "arum", &mut out);
    write_stdout(&out)
}

/// `arum man [SUBCOMMAND]`: the man page (section 1, roff) on stdout.
pub fn man(args: &ManArgs) -> Result<i32, ArumError> {
    write_stdout(&page(args.subcommand.as_deref())?)
}

/// arum's page, or `arum-SUBCOMMAND`'s (the pages arum's own lists under its subcommands).
fn page(subcommand: Option<&str>) -> Result<Vec<u8>, ArumError> {
    let cli = Cli::command();
    let cmd = match subcommand {
        None => cli,
        Some(name) => {
            let sub = cli.find_subcommand(name).ok_or_else(|| {
                let names: Vec<&str> = cli.get_subcommands().map(|s| s.get_name()).collect();
                ArumError::Usage(format!(
                    "no subcommand {name:?} has a page; the pages are those of {}",
                    names.join(", ")
                ))
            })?;
            let full = format!("arum-{}", sub.get_name());
            sub.clone().name(full.clone()).bin_name(full)
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .map_err(|e| ArumError::Internal(format!("rendering the man page: {e}")))?;
    Ok(out)
}

fn write_stdout(bytes: &[u8]) -> Result<i32, ArumError> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|_| stdout.flush()) {
        Ok(()) => Ok(0),
        // `arum man | head`: the reader left; nothing is wrong.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(ArumError::Output {
            path: "stdout".into(),
            source: e,
            option: "a redirection of stdout",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap_complete::Shell;

    #[test]
    fn bash_completion_knows_the_options_and_subcommands() {
        let mut out = Vec::new();
        clap_complete::generate(Shell::Bash, &mut Cli::command(), "arum", &mut out);
        let script = String::from_utf8(out).unwrap();
        for word in ["--runs", "--export-json", "--ambient", "compare", "merge"] {
            assert!(
                script.contains(word),
                "{word} missing from the bash completion"
            );
        }
    }

    #[test]
    fn man_page_has_the_name_and_options() {
        let mut out = Vec::new();
        clap_mangen::Man::new(Cli::command())
            .render(&mut out)
            .unwrap();
        let page = String::from_utf8(out).unwrap();
        assert!(
            page.starts_with(".ie") || page.contains(".TH arum"),
            "{page:.200}"
        );
        assert!(page.contains("\\-\\-runs") || page.contains("--runs"));
    }

    #[test]
    fn every_subcommand_arum_s_page_names_has_a_page_of_its_own() {
        let main = String::from_utf8(page(None).unwrap()).unwrap();
        for sub in Cli::command().get_subcommands() {
            let name = format!("arum\\-{}", sub.get_name());
            assert!(main.contains(&name), "arum's page does not name {name}");
            let own = String::from_utf8(page(Some(sub.get_name())).unwrap()).unwrap();
            let title = format!(".TH arum-{} 1", sub.get_name());
            assert!(own.contains(&title), "{own:.300}");
        }
        let e = page(Some("nosuch")).unwrap_err();
        assert!(e.to_string().contains("hourglass"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }
}
