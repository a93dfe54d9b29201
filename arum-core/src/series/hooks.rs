//! The shell commands around a series: --setup once before it, --prepare before every run,
//! --cleanup once after it. Their time is not measured; their stdout is discarded (as hyperfine
//! does) so the program's own output stays readable, their stderr shows.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use crate::error::ArumError;

/// Runs `command` through /bin/sh -c; `what` names the option for messages.
pub fn run(what: &'static str, command: &str) -> Result<(), ArumError> {
    let failed = |why: String| ArumError::Hook {
        what,
        command: command.to_string(),
        why,
    };
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| failed(format!("could not be started: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(failed(match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(sig)) => format!("was ended by signal {sig}"),
            _ => "failed".into(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_and_failure() {
        assert!(run("prepare", "true").is_ok());
        let e = run("setup", "exit 4").unwrap_err().to_string();
        assert!(
            e.contains("--setup command \"exit 4\" exited with status 4"),
            "{e}"
        );
    }
}
