//! The program to run, as the user named it: `--launch` strings split as a shell would (or run
//! by one), the words after `--`, several commands around `:::`, and `--env` pairs.

use crate::error::ArumError;
use crate::header::{CommandInfo, LaunchHow};
use crate::request::ProgramRequest;

/// The program to run, as the report will name it.
#[derive(Debug, Clone)]
pub struct Program {
    pub argv: Vec<String>,
    pub how: LaunchHow,
    pub line: Option<String>,
}

impl Program {
    /// The command as people read it and series are named: the --launch string as given, or
    /// the words quoted as for a shell.
    pub fn label(&self) -> String {
        match &self.line {
            Some(line) => line.clone(),
            None => shell_words::join(&self.argv),
        }
    }

    pub fn command_info(&self) -> CommandInfo {
        CommandInfo {
            argv: self.argv.clone(),
            how: self.how,
            launch: self.line.clone(),
        }
    }

    /// The word bare function names belong to: the program, or through `--shell` the first
    /// command word of the line.
    pub fn first_word(&self) -> String {
        match (&self.how, &self.line) {
            (LaunchHow::Shell, Some(line)) => shell_words::split(line)
                .ok()
                .and_then(|w| w.into_iter().find(|w| !is_assignment(w)))
                .unwrap_or_default(),
            _ => self.argv.first().cloned().unwrap_or_default(),
        }
    }
}

/// The program to run (the first one, when several are given for a comparison).
pub fn program(request: &ProgramRequest) -> Result<Program, ArumError> {
    programs(request).map(|mut all| all.remove(0))
}

/// Every program named: repeated `--launch` strings, or `-- CMD1 ::: CMD2` with `--compare`.
pub fn programs(request: &ProgramRequest) -> Result<Vec<Program>, ArumError> {
    if request.shell && request.launch.is_empty() {
        return Err(ArumError::Usage(
            "--shell runs a --launch string through /bin/sh; give one with --launch \"...\"".into(),
        ));
    }
    if !request.launch.is_empty() {
        return request
            .launch
            .iter()
            .map(|line| from_line(line, request.shell))
            .collect();
    }
    if !request.compare {
        return Ok(vec![from_argv(request.argv.clone())]);
    }
    let commands: Vec<&[String]> = request.argv.split(|w| w == ":::").collect();
    if commands.iter().any(|c| c.is_empty()) {
        return Err(ArumError::Usage(
            "--compare: an empty command around `:::`; write `-- CMD1 ARGS ::: CMD2 ARGS`".into(),
        ));
    }
    Ok(commands
        .into_iter()
        .map(|c| from_argv(c.to_vec()))
        .collect())
}

fn from_argv(argv: Vec<String>) -> Program {
    Program {
        argv,
        how: LaunchHow::Argv,
        line: None,
    }
}

/// A `--launch` string: split as a shell would, or given to /bin/sh -c with `--shell`.
pub fn from_line(line: &str, shell: bool) -> Result<Program, ArumError> {
    if shell {
        return Ok(Program {
            argv: vec!["/bin/sh".into(), "-c".into(), line.to_string()],
            how: LaunchHow::Shell,
            line: Some(line.to_string()),
        });
    }
    let argv = shell_words::split(line).map_err(|e| ArumError::BadLaunch {
        line: line.to_string(),
        why: e.to_string(),
    })?;
    if argv.is_empty() {
        return Err(ArumError::BadLaunch {
            line: line.to_string(),
            why: "it names no program".into(),
        });
    }
    if is_assignment(&argv[0]) {
        return Err(ArumError::ShellAssignment {
            word: argv[0].clone(),
        });
    }
    Ok(Program {
        argv,
        how: LaunchHow::Split,
        line: Some(line.to_string()),
    })
}

/// `NAME=value` as a first word: a shell assignment, which only a shell understands.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `--env NAME=VALUE` options as (name, value) pairs.
pub fn env_pairs(given: &[String]) -> Result<Vec<(String, String)>, ArumError> {
    given
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(ArumError::Usage(format!(
                "--env {kv:?}: write NAME=VALUE (e.g. --env OMP_NUM_THREADS=2)"
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(launch: &str) -> ProgramRequest {
        ProgramRequest {
            launch: vec![launch.into()],
            ..ProgramRequest::default()
        }
    }

    #[test]
    fn launch_string_is_split_like_a_shell() {
        let p = program(&words(r#"sh -c 'echo "a b"' x\ y"#)).unwrap();
        assert_eq!(p.argv, ["sh", "-c", r#"echo "a b""#, "x y"]);
        assert_eq!(p.how, LaunchHow::Split);
    }

    #[test]
    fn argv_after_double_dash_is_taken_verbatim() {
        let r = ProgramRequest {
            argv: ["./app", "-t", "2", "--launch"].map(String::from).to_vec(),
            ..ProgramRequest::default()
        };
        assert_eq!(program(&r).unwrap().argv, ["./app", "-t", "2", "--launch"]);
    }

    #[test]
    fn shell_mode_runs_sh_c() {
        let r = ProgramRequest {
            shell: true,
            ..words("echo $HOME | wc -c")
        };
        assert_eq!(
            program(&r).unwrap().argv,
            ["/bin/sh", "-c", "echo $HOME | wc -c"]
        );
    }

    #[test]
    fn unbalanced_quotes_assignments_and_empty_lines_are_errors() {
        for bad in ["echo 'oops", "", "A=1 make"] {
            assert!(program(&words(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn compare_splits_at_triple_colons_and_refuses_an_empty_command() {
        let r = |argv: &[&str]| ProgramRequest {
            argv: argv.iter().map(|w| w.to_string()).collect(),
            compare: true,
            ..ProgramRequest::default()
        };
        let all = programs(&r(&["a", "1", ":::", "b"])).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].argv, ["b"]);
        assert!(programs(&r(&["a", ":::"])).is_err());
    }

    #[test]
    fn bare_names_belong_to_the_first_command_word_of_a_shell_line() {
        let p = from_line("A=1 ./app -x", true).unwrap();
        assert_eq!(p.first_word(), "./app");
        assert_eq!(from_line("./b c", false).unwrap().first_word(), "./b");
    }
}
