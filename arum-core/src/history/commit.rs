//! The commit of the current directory's git work tree, read when a run is saved: `git
//! rev-parse HEAD`, and whether tracked files differ from it. Files the program wrote beside
//! them (untracked) do not make the tree dirty. Git is told not to refresh its index, so saving
//! writes nothing into the repository.

use std::process::{Command, Stdio};

use arum_history::Commit;

/// The current directory's commit, or none outside a work tree or without git.
pub fn current() -> Option<Commit> {
    let id = git(&["rev-parse", "--verify", "-q", "HEAD"])?;
    let id = id.trim().to_string();
    if id.is_empty() {
        return None;
    }
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
    Some(Commit { id, dirty })
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
