//! A cgroup v2 group of its own for the launched tree: `cgroup.procs` lists every process of the
//! tree, and `memory.peak` (when the memory controller is enabled there) is its exact peak.
//!
//! The group is created before fork so that the child can be born in it (clone3 with
//! CLONE_INTO_CGROUP): moving a running task between groups takes the kernel's threadgroup lock,
//! which waits for an RCU grace period: milliseconds, more than the rest of arum's launch.

use std::fs::{self, File};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use nix::unistd::Pid;

use crate::system::kernel_file;

pub(super) struct TreeCgroup {
    dir: PathBuf,
    handle: File,
    parent: PathBuf,
}

impl TreeCgroup {
    /// Creates `arum-<pid>` beside arum's own cgroup v2 group. `None` where the machine has no
    /// writable cgroup v2 hierarchy (the tree is then found by walking /proc).
    pub fn create() -> Option<Self> {
        let parent = own_cgroup_dir()?;
        let dir = parent.join(format!("{PREFIX}{}", std::process::id()));
        // A group with our own pid was left by a dead arum that had this pid before us.
        remove(&dir, &parent);
        fs::create_dir(&dir).ok()?;
        match File::open(&dir) {
            Ok(handle) => Some(TreeCgroup {
                dir,
                handle,
                parent,
            }),
            Err(_) => {
                let _ = fs::remove_dir(&dir);
                None
            }
        }
    }

    /// The group's directory, for clone3's CLONE_INTO_CGROUP.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.handle.as_fd()
    }

    /// Moves an already running process into the group (the slow path, see the module note).
    pub fn adopt(&self, pid: Pid) -> bool {
        fs::write(self.procs_file(), pid.as_raw().to_string()).is_ok()
    }

    /// The file listing the tree's processes.
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// `memory.peak` in bytes, where the memory controller is enabled for the group.
    pub fn memory_peak(&self) -> Option<u64> {
        fs::read_to_string(self.dir.join("memory.peak"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

impl Drop for TreeCgroup {
    fn drop(&mut self) {
        remove(&self.dir, &self.parent);
    }
}

/// Groups are named `arum-<pid of the arum that made it>`.
const PREFIX: &str = "arum-";
/// Rounds of moving survivors out before giving up on removing a group (a process may fork
/// while its siblings are being moved).
const EMPTYING_ROUNDS: u32 = 10;

/// Empties `dir` into `parent` (processes the program left behind, such as daemons, go back to
/// arum's own group) and removes it. Whether it is gone.
pub(crate) fn remove(dir: &Path, parent: &Path) -> bool {
    for _ in 0..EMPTYING_ROUNDS {
        if fs::remove_dir(dir).is_ok() || !dir.exists() {
            return true;
        }
        let Ok(left) = fs::read_to_string(dir.join("cgroup.procs")) else {
            return false;
        };
        for pid in left.lines() {
            let _ = fs::write(parent.join("cgroup.procs"), pid);
        }
    }
    false
}

/// Whether a group made beside arum's own would have the memory controller (and so
/// memory.peak): arum's group delegates `memory` to its children. On a hybrid machine the
/// controller is bound to a v1 hierarchy of its own, which arum's line for that hierarchy in
/// /proc/self/cgroup names (`4:memory:/...`); otherwise the group's `cgroup.subtree_control`
/// says.
pub fn memory_on_v2() -> bool {
    !self_cgroup().is_some_and(memory_on_v1)
        && own_cgroup_dir().is_some_and(|dir| {
            kernel_file::read(dir.join("cgroup.subtree_control"))
                .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"))
        })
}

/// Whether a /proc/self/cgroup text puts the memory controller on a v1 hierarchy.
fn memory_on_v1(text: &str) -> bool {
    text.lines().any(|l| {
        let mut f = l.splitn(3, ':');
        f.next().is_some_and(|h| h != "0")
            && f.next()
                .is_some_and(|c| c.split(',').any(|c| c == "memory"))
    })
}

/// /proc/self/cgroup, read once: arum's group in each hierarchy (`ID:CONTROLLERS:PATH`, the
/// unified one with ID 0), which does not change while arum runs.
fn self_cgroup() -> Option<&'static str> {
    static TEXT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| kernel_file::read("/proc/self/cgroup").ok())
        .as_deref()
}

/// Whether a /proc/self/cgroup text has lines of v1 hierarchies (any but the unified one's).
fn has_v1_hierarchies(text: &str) -> bool {
    text.lines().any(|l| !l.starts_with("0::"))
}

/// arum's path in the unified (v2) hierarchy, relative to its mount point.
fn unified_path() -> Option<&'static str> {
    let line = self_cgroup()?.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(line.trim().trim_start_matches('/'))
}

/// arum's own cgroup v2 directory: the cgroup2 mount point joined with the path of the
/// hierarchy-0 (unified) line of /proc/self/cgroup. The usual mount points (systemd's unified
/// and hybrid layouts) are tried first, by one look for the group's `cgroup.controllers`, a file
/// only cgroup2 directories have; the mount table (hundreds of lines to parse) only if neither
/// has it. Lines of v1 hierarchies in /proc/self/cgroup tell a hybrid layout, whose cgroup2
/// sits at `unified`: that mount point is tried first there, sparing the look that would fail.
/// Looked up once: the leftovers check, the memory controller's check and the tree's group
/// (every run of a series) all ask.
pub(crate) fn own_cgroup_dir() -> Option<PathBuf> {
    static DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(find_own_cgroup_dir).clone()
}

fn find_own_cgroup_dir() -> Option<PathBuf> {
    const UNIFIED: &str = "/sys/fs/cgroup";
    const HYBRID: &str = "/sys/fs/cgroup/unified";
    let rel = unified_path()?;
    let group_in = |mount: &Path| {
        let dir = mount.join(rel);
        dir.join("cgroup.controllers").exists().then_some(dir)
    };
    let usual = if self_cgroup().is_some_and(has_v1_hierarchies) {
        [HYBRID, UNIFIED]
    } else {
        [UNIFIED, HYBRID]
    };
    if let Some(dir) = usual.iter().find_map(|m| group_in(Path::new(m))) {
        return Some(dir);
    }
    let mount = procfs::process::Process::myself()
        .ok()?
        .mountinfo()
        .ok()?
        .into_iter()
        .find(|m| m.fs_type == "cgroup2")?
        .mount_point;
    group_in(&mount)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hybrid_layout_is_told_by_its_v1_lines() {
        assert!(has_v1_hierarchies(
            "9:name=systemd:/\n4:memory:/user.slice\n0::/\n"
        ));
        assert!(has_v1_hierarchies(
            "1:name=systemd:/init.scope\n0::/init.scope\n"
        ));
        // Only the unified hierarchy, whatever its path says; or no file text at all.
        assert!(!has_v1_hierarchies("0::/system.slice/1:memory:/x\n"));
        assert!(!has_v1_hierarchies("0::/\n"));
        assert!(!has_v1_hierarchies(""));
    }

    #[test]
    fn the_own_group_is_the_one_under_the_mount_tables_cgroup2() {
        let mount = procfs::process::Process::myself()
            .and_then(|p| p.mountinfo())
            .ok()
            .and_then(|m| m.into_iter().find(|m| m.fs_type == "cgroup2"));
        let Some(mount) = mount else {
            eprintln!("no cgroup2 mounted here: only the absence is checked");
            assert_eq!(own_cgroup_dir(), None);
            return;
        };
        let expected = unified_path().map(|rel| mount.mount_point.join(rel));
        assert_eq!(own_cgroup_dir(), expected.filter(|d| d.exists()));
    }

    #[test]
    fn the_memory_controller_on_a_v1_hierarchy_is_told_by_its_line() {
        // A hybrid machine: memory on hierarchy 4, the unified hierarchy without it.
        let hybrid = "12:pids:/\n4:memory:/user.slice\n1:name=systemd:/\n0::/user.slice\n";
        assert!(memory_on_v1(hybrid));
        // Co-mounted controllers, and a named hierarchy whose name merely contains the word.
        assert!(memory_on_v1("5:cpu,memory,cpuacct:/\n0::/\n"));
        assert!(!memory_on_v1("3:name=memory_notes:/\n0::/\n"));
        assert!(!memory_on_v1("7:blkio:/\n2:memory_x:/\n0::/\n"));
        // Only the unified hierarchy (its line never names controllers), or nothing at all.
        assert!(!memory_on_v1("0::/system.slice/ssh.service\n"));
        assert!(!memory_on_v1(""));
        // This machine's own file has the three fields on every line.
        if let Some(text) = self_cgroup() {
            assert!(
                text.lines().all(|l| l.splitn(3, ':').count() == 3),
                "{text}"
            );
        }
    }
}
