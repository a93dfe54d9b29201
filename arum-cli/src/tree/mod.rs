//! The launched process tree: which processes belong to it, the one source of that answer for
//! every facility. Where the machine allows, the tree is born into a cgroup v2 group of its own
//! (see `cgroup`), whose `cgroup.procs` lists exactly its processes however they were forked;
//! elsewhere, the tree is found by following parent links in /proc from the launched process.

mod cgroup;

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

/// The tree of `root` by parent links in /proc (the fallback without a cgroup).
fn walk_proc(root: i32, out: &mut Vec<i32>) {
    out.push(root);
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
    fn without_a_cgroup_the_tree_is_found_through_parent_links() {
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
