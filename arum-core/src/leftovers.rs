//! What an arum ended before it could clean up (SIGKILL, a crash) left on the machine, found and
//! removed when the next arum measures a program:
//!
//! - the launched tree's cgroup `arum-<pid>` in arum's own cgroup (its processes go back there);
//! - a marker `arum-delayacct-<pid>`: an empty cgroup in the same place, made while arum had
//!   `kernel.task_delayacct` turned on (`--enable-delayacct`); the setting goes back to 0;
//! - uprobe event groups `arum_<pid>` in tracefs (`-F` by the records' path).
//!
//! Each carries the pid of the arum that made it; one whose pid runs no more is stale. Markers
//! live in arum's own cgroup because that, besides `-o`'s target, is the one place arum writes.
//! Every run checks its cgroup: one `stat` where the group has no subgroup (a cgroup directory's
//! link count is 2 plus its subdirectories), a directory read where it has. Uprobe groups are
//! looked for only by a run that defines uprobe events itself ([`uprobe_groups`]): a definition
//! without an open event is inert, and reading tracefs at every run would cost every run a
//! file (`benchmarks/overhead.sh`).

use std::fs;
use std::path::{Path, PathBuf};

use nix::unistd::Pid;

use crate::system::{delayacct, kernel_file, tracefs};
use crate::tree::cgroup;

/// Names of cgroups arum makes start with this; then the pid, or a kind, a dash and the pid.
const CGROUP_PREFIX: &str = "arum-";
/// Uprobe event groups are `arum_<pid>`.
const UPROBE_PREFIX: &str = "arum_";

/// Whether process `pid` runs (a process of another user counts).
fn running(pid: i32) -> bool {
    nix::sys::signal::kill(Pid::from_raw(pid), None) != Err(nix::errno::Errno::ESRCH)
}

/// Removes the cgroups dead arums left and restores what their markers record; returns a few
/// words for each thing removed or restored.
pub fn clean() -> Vec<String> {
    cgroup::own_cgroup_dir()
        .map(|parent| cgroups(&parent))
        .unwrap_or_default()
}

/// The one warning that says what was removed or restored (none where nothing was).
pub fn warning(done: &[String]) -> Option<String> {
    (!done.is_empty()).then(|| {
        format!(
            "removed what an arum that was killed left behind: {}",
            done.join("; ")
        )
    })
}

/// Whether `dir` may hold a subdirectory: false only where its link count says none.
fn may_have_subdirectories(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(dir).map_or(true, |m| m.nlink() != 2)
}

/// The kind and pid of a cgroup name arum makes: `arum-123` is the tree's group (kind ""),
/// `arum-delayacct-123` a marker.
fn cgroup_owner(name: &str) -> Option<(&str, i32)> {
    let rest = name.strip_prefix(CGROUP_PREFIX)?;
    let (kind, pid) = rest.rsplit_once('-').unwrap_or(("", rest));
    Some((kind, pid.parse().ok().filter(|p: &i32| *p > 0)?))
}

fn cgroups(parent: &Path) -> Vec<String> {
    if !may_have_subdirectories(parent) {
        return Vec::new();
    }
    let Ok(entries) = fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut done = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((kind, pid)) = name.to_str().and_then(cgroup_owner) else {
            continue;
        };
        if running(pid) {
            continue;
        }
        match kind {
            "" if cgroup::remove(&e.path(), parent) => {
                done.push(format!("its tree's cgroup {}", e.path().display()))
            }
            DELAYACCT => {
                if delayacct::is_on() == Some(true) && delayacct::turn_off().is_ok() {
                    done.push("kernel.task_delayacct, which it had turned on, back to 0".into());
                }
                let _ = fs::remove_dir(e.path());
            }
            _ => {}
        }
    }
    done
}

/// The marker kind of `--enable-delayacct`.
pub const DELAYACCT: &str = "delayacct";

/// An empty cgroup `arum-<kind>-<pid>` in arum's own cgroup, for as long as this lives: the
/// record that this arum changed something the next one must undo if this one is killed.
pub struct Marker(PathBuf);

/// Makes the marker of `kind`; none where arum has no writable cgroup v2 group.
pub fn mark(kind: &str) -> Option<Marker> {
    let dir =
        cgroup::own_cgroup_dir()?.join(format!("{CGROUP_PREFIX}{kind}-{}", std::process::id()));
    fs::create_dir(&dir).ok()?;
    Some(Marker(dir))
}

impl Drop for Marker {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.0);
    }
}

/// Uprobe event groups of dead arums, removed (`-:GROUP/` in uprobe_events); a few words for
/// each. Called by a run that defines its own, before it does: a dead arum's pid may be this
/// one's, and so its group name.
pub fn uprobe_groups() -> Vec<String> {
    let Some((root, text)) = tracefs::USUAL.iter().find_map(|root| {
        let text = kernel_file::read(Path::new(root).join("uprobe_events")).ok()?;
        Some((root, text))
    }) else {
        return Vec::new();
    };
    let mut groups: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            l.split_whitespace()
                .next()?
                .split_once(':')?
                .1
                .split_once('/')
        })
        .map(|(group, _)| group)
        .filter(|g| {
            g.strip_prefix(UPROBE_PREFIX)
                .and_then(|p| p.parse::<i32>().ok())
                .is_some_and(|p| p > 0 && !running(p))
        })
        .collect();
    groups.sort_unstable();
    groups.dedup();
    groups
        .into_iter()
        .filter(|g| {
            use std::io::Write;
            fs::OpenOptions::new()
                .append(true)
                .open(Path::new(root).join("uprobe_events"))
                .and_then(|mut f| f.write_all(format!("-:{g}/\n").as_bytes()))
                .is_ok()
        })
        .map(|g| format!("its uprobe events {g}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_names_give_their_kind_and_owner() {
        assert_eq!(cgroup_owner("arum-123"), Some(("", 123)));
        assert_eq!(cgroup_owner("arum-delayacct-77"), Some(("delayacct", 77)));
        assert_eq!(cgroup_owner("arum-"), None);
        assert_eq!(cgroup_owner("arum-x"), None);
        assert_eq!(cgroup_owner("arum-0"), None);
        assert_eq!(cgroup_owner("user.slice"), None);
    }

    #[test]
    fn a_directory_without_subdirectories_is_told_by_its_link_count() {
        let dir = tempfile::tempdir().unwrap();
        // A file system that counts links (tmpfs, ext4, kernfs) gives 2 here; one that does
        // not (btrfs gives 1) must be read.
        let counted = fs::metadata(dir.path()).map(|m| {
            use std::os::unix::fs::MetadataExt;
            m.nlink()
        });
        if counted.as_ref().is_ok_and(|n| *n == 2) {
            assert!(!may_have_subdirectories(dir.path()));
        } else {
            println!(
                "{:?} does not count links ({counted:?}): read instead",
                dir.path()
            );
            assert!(may_have_subdirectories(dir.path()));
        }
        fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(may_have_subdirectories(dir.path()));
        assert!(may_have_subdirectories(&dir.path().join("missing")));
    }
}
