//! The launched process tree: which processes belong to it, the one source of that answer for
//! every facility. Where the machine allows, the tree is born into a cgroup v2 group of its own
//! (see `cgroup`), whose `cgroup.procs` lists exactly its processes however they were forked;
//! elsewhere, the tree is found in /proc from the launched process down: each thread's list of
//! children, or, where the kernel keeps none, every process's parent link.

pub(crate) mod cgroup;

use std::fs::File;
use std::os::fd::BorrowedFd;
use std::os::unix::fs::FileExt;

use nix::unistd::Pid;

use cgroup::TreeCgroup;

/// Before fork: the tree's cgroup, if one could be made, into which the child can be born.
pub struct Unborn {
    cgroup: Option<TreeCgroup>,
}

impl Unborn {
    /// Makes the tree's own cgroup v2 group where the machine has a writable hierarchy and the
    /// group gives something: `memory.peak` (the memory controller is on cgroup v2), or an exact
    /// list of the tree for a facility that `lists` it. Making one costs about half a
    /// millisecond, so a run that needs neither does without.
    pub fn prepare(lists: bool) -> Unborn {
        let wanted = lists || cgroup::memory_on_v2();
        Unborn {
            cgroup: wanted.then(TreeCgroup::create).flatten(),
        }
    }

    /// The group to fork the child into, if there is one.
    pub fn cgroup_fd(&self) -> Option<BorrowedFd<'_>> {
        self.cgroup.as_ref().map(TreeCgroup::fd)
    }

    /// The child `root` exists; `born_in_cgroup` says whether it started in the group. If not,
    /// it is moved there (slow, see `cgroup`), or the group is given up for /proc walking.
    pub fn attach(self, root: Pid, born_in_cgroup: bool) -> Tree {
        let cgroup = self.cgroup.filter(|c| born_in_cgroup || c.adopt(root));
        Tree { root, cgroup }
    }
}

/// The launched tree while it runs and until arum ends.
pub struct Tree {
    root: Pid,
    cgroup: Option<TreeCgroup>,
}

impl Tree {
    /// A tree without a cgroup, for tests of the facilities.
    #[cfg(test)]
    pub fn detached(root: Pid) -> Tree {
        Tree { root, cgroup: None }
    }

    pub fn root(&self) -> Pid {
        self.root
    }

    /// Whether the tree has a cgroup of its own (its pid list is exact).
    pub fn has_cgroup(&self) -> bool {
        self.cgroup.is_some()
    }

    /// `memory.peak` of the tree's group, where the memory controller is enabled for it.
    pub fn memory_peak(&self) -> Option<u64> {
        self.cgroup.as_ref()?.memory_peak()
    }

    /// A reader of the tree's pids for one thread: it keeps `cgroup.procs` open and reuses its
    /// buffers, so a sampler can list the tree at every tick without allocating.
    pub fn reader(&self) -> PidReader {
        PidReader {
            root: self.root.as_raw(),
            procs: self
                .cgroup
                .as_ref()
                .and_then(|c| File::open(c.procs_file()).ok()),
            buf: Vec::with_capacity(4096),
        }
    }
}

pub struct PidReader {
    root: i32,
    procs: Option<File>,
    buf: Vec<u8>,
}

impl PidReader {
    /// The tree's processes now, into `out`.
    pub fn read(&mut self, out: &mut Vec<i32>) {
        out.clear();
        match &self.procs {
            Some(f) => {
                read_whole(f, &mut self.buf);
                out.extend(parse_pids(&self.buf));
            }
            None => walk_proc(self.root, out),
        }
    }
}

/// Reads a whole (pseudo-)file from offset 0 into `buf`, growing it only when it is too small.
fn read_whole(f: &File, buf: &mut Vec<u8>) {
    buf.clear();
    let mut got = 0;
    loop {
        if got == buf.capacity() {
            buf.reserve(buf.capacity().max(4096));
        }
        let cap = buf.capacity();
        buf.resize(cap, 0);
        match f.read_at(&mut buf[got..], got as u64) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    buf.truncate(got);
}

/// The decimal numbers of a `cgroup.procs` listing.
pub fn parse_pids(bytes: &[u8]) -> impl Iterator<Item = i32> + '_ {
    bytes
        .split(|b| !b.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .filter_map(|w| std::str::from_utf8(w).ok()?.parse().ok())
}

/// The tree of `root` from /proc (without a cgroup): the kernel's children lists, or where it
/// has none, the parent links of every process.
fn walk_proc(root: i32, out: &mut Vec<i32>) {
    out.push(root);
    if !walk_children(out) {
        walk_parent_links(out);
    }
}

/// The tree below `out[0]` from the kernel's lists of each thread's children
/// (`/proc/PID/task/TID/children`): a read per thread of the tree, however many processes the
/// machine runs. False where the kernel has no such lists (built without CONFIG_PROC_CHILDREN).
/// A process that is forked or exits during the walk may be missed or listed, as with any
/// reading of /proc; an orphan belongs to its new parent, as with the parent links.
fn walk_children(out: &mut Vec<i32>) -> bool {
    // The kernel's build does not change while arum runs: asked once, not at every sample.
    static KEPT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if !*KEPT.get_or_init(|| std::path::Path::new("/proc/thread-self/children").exists()) {
        return false;
    }
    let mut i = 0;
    while i < out.len() {
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", out[i])) {
            for task in tasks.flatten() {
                if let Ok(list) = std::fs::read(task.path().join("children")) {
                    for pid in parse_pids(&list) {
                        // A process reparented during the walk could be listed twice.
                        if !out.contains(&pid) {
                            out.push(pid);
                        }
                    }
                }
            }
        }
        i += 1;
    }
    true
}

/// The tree below `out[0]` from every process's parent link (its stat file): a scan of the
/// whole of /proc.
fn walk_parent_links(out: &mut Vec<i32>) {
    let Ok(all) = procfs::process::all_processes() else {
        return;
    };
    let links: Vec<(i32, i32)> = all
        .filter_map(|p| p.ok()?.stat().ok())
        .map(|s| (s.pid, s.ppid))
        .collect();
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        out.extend(
            links
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_are_parsed_from_a_procs_listing() {
        assert_eq!(
            parse_pids(b"12\n345\n6\n").collect::<Vec<_>>(),
            [12, 345, 6]
        );
        assert_eq!(parse_pids(b"").count(), 0);
    }

    #[test]
    fn without_a_cgroup_the_tree_is_found_through_proc() {
        // This test process and a child of it: the walk from our pid finds the child.
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep runs");
        let tree = Tree {
            root: Pid::this(),
            cgroup: None,
        };
        let mut pids = Vec::new();
        tree.reader().read(&mut pids);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(pids[0], std::process::id() as i32);
        assert!(pids.contains(&(child.id() as i32)), "{pids:?}");
    }

    #[test]
    fn children_lists_and_parent_links_find_the_same_tree() {
        // A child of this test's thread and a grandchild under it.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & echo; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh runs");
        // The grandchild exists once sh has written its line.
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        // From sh down: other tests of this process start and end children meanwhile.
        let sh = child.id() as i32;
        let mut by_children = vec![sh];
        let lists = walk_children(&mut by_children);
        let mut by_links = vec![sh];
        walk_parent_links(&mut by_links);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(by_links.len(), 2, "sh and its sleep: {by_links:?}");
        if !lists {
            println!("this kernel keeps no children lists (CONFIG_PROC_CHILDREN): the parent links were checked alone");
            return;
        }
        by_children.sort_unstable();
        by_links.sort_unstable();
        assert_eq!(by_children, by_links);
    }

    #[test]
    fn whole_files_are_read_whatever_their_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mut buf = Vec::new();
        read_whole(&File::open(&path).unwrap(), &mut buf);
        assert_eq!(buf, data);
    }
}
