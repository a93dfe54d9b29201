//! Shell completions and the man page, generated from the clap definition itself so they never
//! disagree with `--help`.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use arum_core::error::ArumError;

/// `arum completions SHELL`: the completion script on stdout.
pub fn completions(args: &CompletionsArgs) -> Result<i32, ArumError> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "arum", &mut out);
    write_stdout(&out)
}

/// `arum man`: the man page (section 1, roff) on stdout.
pub fn man() -> Result<i32, ArumError> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(|e| ArumError::Internal(format!("rendering the man page: {e}")))?;
    write_stdout(&out)
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
}
