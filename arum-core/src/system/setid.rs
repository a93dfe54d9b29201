//! Programs that run with more privilege than the user who starts them: set-user-ID or
//! set-group-ID files owned by someone else, and files with capabilities. perf lets a user
//! count or probe only what the user could trace (perf_event_open's ptrace check), and the kernel
//! detaches a task's counters when it execs such a program. arum holding capabilities for a user
//! must not go further than perf would: it does not probe such a program for a user who is not
//! root.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// How the program at `path` raises its privilege when the current user runs it, if it does.
pub fn raises_privilege(path: &Path) -> Option<&'static str> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    if meta.mode() & libc::S_ISUID != 0 && meta.uid() != uid {
        return Some("set-user-ID");
    }
    if meta.mode() & libc::S_ISGID != 0 && meta.gid() != gid {
        return Some("set-group-ID");
    }
    let mut buf = [0u8; 64];
    rustix::fs::getxattr(path, "security.capability", &mut buf[..])
        .is_ok()
        .then_some("given capabilities by its file")
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
        mode(0o0755).unwrap();
        assert_eq!(raises_privilege(&f), None);
    }
}
