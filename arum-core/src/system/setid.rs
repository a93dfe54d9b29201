//! Programs that run with more privilege than the user who starts them: set-user-ID or
//! set-group-ID files owned by someone else, and files with capabilities. perf lets a user
//! count or probe only what the user could trace (perf_event_open's ptrace check), and the kernel
//! detaches a task's counters when it execs such a program. arum holding capabilities for a user
//! must not go further than perf would: it does not probe such a program for a user who is not
//! root.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How many interpreters deep the kernel follows `#!` lines (BINPRM_MAX_RECURSION).
const MAX_INTERPRETERS: usize = 4;

/// How the program at `path` raises its privilege when the current user runs it, if it does:
/// as the kernel decides at exec. A script's own set-ID bits count for nothing, its
/// interpreter's do; on a filesystem mounted nosuid, neither set-ID bits nor file capabilities
/// are honoured.
pub fn raises_privilege(path: &Path) -> Option<&'static str> {
    let mut path = path.to_path_buf();
    for _ in 0..=MAX_INTERPRETERS {
        let meta = std::fs::metadata(&path).ok()?;
        if !meta.is_file() {
            return None;
        }
        match interpreter(&path) {
            Some(next) => path = next,
            None => return own_privilege(&path, &meta),
        }
    }
    None
}

/// What the binary at `path` itself raises.
fn own_privilege(path: &Path, meta: &std::fs::Metadata) -> Option<&'static str> {
    if on_nosuid_mount(path) {
        return None;
    }
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    if meta.mode() & libc::S_ISUID != 0 && meta.uid() != uid {
        return Some("set-user-ID");
    }
    // The kernel gives a file's group only with its group-execute bit (fs/exec.c,
    // bprm_fill_uid): set-group-ID without it marks mandatory locking, no privilege.
    let setgid = libc::S_ISGID | libc::S_IXGRP;
    if meta.mode() & setgid == setgid && meta.gid() != gid {
        return Some("set-group-ID");
    }
    let mut buf = [0u8; 64];
    rustix::fs::getxattr(path, "security.capability", &mut buf[..])
        .is_ok()
        .then_some("given capabilities by its file")
}

/// Whether `path` is on a filesystem mounted nosuid.
fn on_nosuid_mount(path: &Path) -> bool {
    rustix::fs::statvfs(path)
        .is_ok_and(|v| v.f_flag.contains(rustix::fs::StatVfsMountFlags::NOSUID))
}

/// The interpreter a `#!` line at the start of the file names (its first word), if any.
fn interpreter(path: &Path) -> Option<PathBuf> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let word = line
        .split(|b| *b == b' ' || *b == b'\t')
        .find(|w| !w.is_empty())?;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(word)))
}

/// The warning for `n` processes of the tree that the in-kernel engine stopped following at an
/// exec that raised their privilege, when `what` (their system calls, the probed functions) was
/// counted: the same rule as the kernel's for perf counters.
pub fn left_at_exec(n: u64, what: &str) -> Option<String> {
    (n > 0).then(|| {
        format!(
            "{n} process{} of the tree exec'd a program that raises its privilege (set-user-ID, \
             set-group-ID or file capabilities): {what} of {} are not counted from that exec on, \
             as the kernel stops perf's counters there (run arum as root to measure them)",
            if n == 1 { "" } else { "es" },
            if n == 1 { "it" } else { "them" },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_files_raise_nothing() {
        assert_eq!(raises_privilege(Path::new("/no/such/file")), None);
        assert_eq!(raises_privilege(Path::new("/")), None);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("prog");
        std::fs::write(&f, "").unwrap();
        assert_eq!(raises_privilege(&f), None);
        // Set-user-ID for its own owner (the user running it) raises nothing.
        std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o4755)).unwrap();
        assert_eq!(raises_privilege(&f), None);
    }

    #[test]
    fn another_owner_s_set_id_bits_raise_privilege() {
        if !rustix::process::getuid().is_root() {
            eprintln!(
                "not root: cannot give a file to another owner; the positive case is not checked"
            );
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("prog");
        std::fs::write(&f, "").unwrap();
        std::os::unix::fs::chown(&f, Some(65534), Some(65534)).unwrap();
        let mode =
            |m| std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(m));
        mode(0o4755).unwrap();
        assert_eq!(raises_privilege(&f), Some("set-user-ID"));
        mode(0o2755).unwrap();
        assert_eq!(raises_privilege(&f), Some("set-group-ID"));
        mode(0o2745).unwrap();
        assert_eq!(
            raises_privilege(&f),
            None,
            "set-group-ID without group-execute"
        );
        mode(0o0755).unwrap();
        assert_eq!(raises_privilege(&f), None);
    }

    /// A file of another owner with `mode` in `dir`, holding `text`.
    fn foreign(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        std::os::unix::fs::chown(&f, Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
        f
    }

    #[test]
    fn a_script_raises_what_its_interpreter_raises() {
        if !rustix::process::getuid().is_root() {
            eprintln!("not root: cannot give a file to another owner; scripts are not checked");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        if on_nosuid_mount(d) {
            eprintln!("the temporary directory is on a nosuid mount: scripts are not checked");
            return;
        }
        // The script's own bits: ignored by the kernel, so by arum.
        let plain = foreign(d, "plain", "", 0o755);
        let own = foreign(d, "own", &format!("#!{}\n", plain.display()), 0o4755);
        assert_eq!(raises_privilege(&own), None);
        // A set-ID interpreter, through two levels of scripts, with an argument and spaces.
        let suid = foreign(d, "suid", "", 0o4755);
        let first = foreign(d, "first", &format!("#!  {} -x\n", suid.display()), 0o755);
        let second = foreign(
            d,
            "second",
            &format!("#!{}\necho\n", first.display()),
            0o755,
        );
        assert_eq!(raises_privilege(&first), Some("set-user-ID"));
        assert_eq!(raises_privilege(&second), Some("set-user-ID"));
        // Deeper than the kernel follows: it would not run, so it raises nothing.
        let mut deep = second;
        for i in 0..MAX_INTERPRETERS {
            deep = foreign(
                d,
                &format!("deep{i}"),
                &format!("#!{}\n", deep.display()),
                0o755,
            );
        }
        assert_eq!(raises_privilege(&deep), None);
        // An interpreter that is not there.
        let missing = foreign(d, "missing", "#!/no/such/interpreter\n", 0o755);
        assert_eq!(raises_privilege(&missing), None);
    }

    #[test]
    fn set_id_bits_on_a_nosuid_mount_raise_nothing() {
        if !rustix::process::getuid().is_root() {
            eprintln!("not root: cannot mount a filesystem; nosuid is not checked");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().to_path_buf();
        // A thread with mount and filesystem namespaces of its own mounts a nosuid tmpfs that
        // no other thread or process sees; it goes with the thread.
        let verdicts = std::thread::spawn(move || {
            use nix::sched::{unshare, CloneFlags};
            use rustix::mount::{mount, mount_change, MountFlags, MountPropagationFlags};
            unshare(CloneFlags::CLONE_FS | CloneFlags::CLONE_NEWNS).map_err(|e| e.to_string())?;
            mount_change(
                "/",
                MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
            )
            .map_err(|e| e.to_string())?;
            mount(
                "tmpfs",
                &at,
                "tmpfs",
                MountFlags::NOSUID,
                None::<&std::ffi::CStr>,
            )
            .map_err(|e| e.to_string())?;
            let user = foreign(&at, "prog", "", 0o4755);
            let group = foreign(&at, "group", "", 0o2755);
            Ok::<_, String>((raises_privilege(&user), raises_privilege(&group)))
        })
        .join()
        .unwrap();
        match verdicts {
            Ok(v) => assert_eq!(v, (None, None), "set-ID bits on a nosuid mount"),
            Err(e) => eprintln!("cannot mount a nosuid tmpfs in a namespace ({e}): not checked"),
        }
    }
}
