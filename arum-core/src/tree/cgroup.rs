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
/// controller is on a v1 hierarchy of its own, which /proc/cgroups tells at once; otherwise
/// (recent kernels list only v1 controllers there) the group's `cgroup.subtree_control` says.
pub fn memory_on_v2() -> bool {
    let on_v1 = read_proc_file("/proc/cgroups").is_ok_and(|t| {
        t.lines().any(|l| {
            let mut f = l.split_whitespace();
            f.next() == Some("memory") && f.next().is_some_and(|h| h != "0")
        })
    });
    !on_v1
        && own_cgroup_dir().is_some_and(|dir| {
            fs::read_to_string(dir.join("cgroup.subtree_control"))
                .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"))
        })
}

/// A /proc file read with one buffer large enough for it: `read_to_string` starts from the
/// size /proc reports (zero) with 32-byte reads, and the kernel regenerates the whole text for
/// every read.
fn read_proc_file(path: &str) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::with_capacity(4096);
    fs::File::open(path)?.read_to_string(&mut text)?;
    Ok(text)
}

/// arum's own cgroup v2 directory: the cgroup2 mount point joined with the path of the
/// hierarchy-0 (unified) line of /proc/self/cgroup. The usual mount points (systemd's unified
/// and hybrid layouts) are checked by their file system's magic number first; the mount table
/// (hundreds of lines to parse) only if neither is cgroup2. Looked up once: the leftovers check,
/// the memory controller's check and the tree's group (every run of a series) all ask.
pub(crate) fn own_cgroup_dir() -> Option<PathBuf> {
    static DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(find_own_cgroup_dir).clone()
}

fn find_own_cgroup_dir() -> Option<PathBuf> {
    const USUAL: [&str; 2] = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"];
    let is_v2 = |p: &&&str| {
        nix::sys::statfs::statfs(**p)
            .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::CGROUP2_SUPER_MAGIC)
    };
    if let Some(mount) = USUAL.iter().find(is_v2) {
        let text = read_proc_file("/proc/self/cgroup").ok()?;
        let rel = text.lines().find_map(|l| l.strip_prefix("0::"))?;
        let dir = Path::new(mount).join(rel.trim().trim_start_matches('/'));
        return dir.is_dir().then_some(dir);
    }
    let me = procfs::process::Process::myself().ok()?;
    let mount = me
        .mountinfo()
        .ok()?
        .into_iter()
        .find(|m| m.fs_type == "cgroup2")?
        .mount_point;
    let rel = me
        .cgroups()
        .ok()?
        .into_iter()
        .find(|c| c.hierarchy == 0)?
        .pathname;
    let dir = mount.join(Path::new(rel.trim_start_matches('/')));
    dir.is_dir().then_some(dir)
}
