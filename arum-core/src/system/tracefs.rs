//! tracefs, where the kernel lists its tracepoints' ids and takes uprobe definitions.
//!
//! Found where it is mounted: the usual places first (the old one under debugfs is mounted on
//! first use), then any other tracefs mount. A system that mounts it nowhere (one booted without
//! systemd's mount unit, as some VMs and containers are) gets no mount from arum either: arum makes
//! a private, detached one with the kernel's mount API (fsopen, fsmount), reachable only through
//! arum's own descriptor and gone when that is closed. The system's mount table never changes and
//! the program never sees it.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::mount::{FsMountFlags, FsOpenFlags, MountAttrFlags};

/// Where tracefs is usually mounted, in the order tried.
pub const USUAL: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Why tracefs cannot give what was asked of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreachable {
    /// It is there, but this user may not look into it (tracefs is root's unless an
    /// administrator changed its permissions).
    Denied(String),
    /// It is mounted nowhere reachable, or does not hold the file.
    Missing(String),
}

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreachable::Denied(why) | Unreachable::Missing(why) => f.write_str(why),
        }
    }
}

impl From<Unreachable> for String {
    fn from(u: Unreachable) -> String {
        u.to_string()
    }
}

/// How tracefs was reached.
pub struct Tracefs {
    /// Where its files are opened: a mount point, or the private mount through /proc/self/fd.
    root: PathBuf,
    /// The private mount, when tracefs was mounted nowhere; kept open as long as it is used.
    private: Option<OwnedFd>,
}

impl Tracefs {
    /// The tracefs that holds `wanted` (a path inside it, such as `uprobe_events`).
    pub fn open(wanted: &str) -> Result<Tracefs, Unreachable> {
        // A path this user may not look into answers "permission denied", not "absent": the
        // difference between tracefs being root's and the kernel lacking the file.
        let mut denied: Option<PathBuf> = None;
        let mut holds = |root: &PathBuf| match root.join(wanted).try_exists() {
            Ok(there) => there,
            Err(e) => {
                if e.kind() == std::io::ErrorKind::PermissionDenied {
                    denied.get_or_insert_with(|| root.clone());
                }
                false
            }
        };
        let mounted_at = |root| Tracefs {
            root,
            private: None,
        };
        if let Some(root) = USUAL.iter().map(PathBuf::from).find(&mut holds) {
            return Ok(mounted_at(root));
        }
        // The mount table is read only when the usual places do not have it.
        let mounted = mount_points();
        if let Some(root) = mounted.iter().find(|r| holds(r)) {
            return Ok(mounted_at(root.clone()));
        }
        if let Some(root) = denied {
            return Err(Unreachable::Denied(format!(
                "tracefs at {} may not be read by this user (it is root's unless an administrator \
                 opened it to a group)",
                root.display()
            )));
        }
        if let Some(root) = mounted.first() {
            return Err(Unreachable::Missing(format!(
                "tracefs at {} has no {wanted}",
                root.display()
            )));
        }
        // Mounting is root's: arum holding capabilities for another user only measures.
        if !rustix::process::getuid().is_root() {
            return Err(Unreachable::Missing(
                "tracefs is mounted nowhere, and arum mounts it (privately) only when run by root: \
                 mount it with `sudo mount -t tracefs nodev /sys/kernel/tracing`"
                    .into(),
            ));
        }
        let private = private_mount().map_err(|e| {
            Unreachable::Missing(format!(
                "tracefs is mounted nowhere and arum could not mount it privately ({e}); mount it with `mount -t tracefs nodev /sys/kernel/tracing`"
            ))
        })?;
        let tracefs = Tracefs {
            root: PathBuf::from(format!("/proc/self/fd/{}", private.as_raw_fd())),
            private: Some(private),
        };
        if !tracefs.path(wanted).exists() {
            return Err(Unreachable::Missing(format!("tracefs has no {wanted}")));
        }
        Ok(tracefs)
    }

    /// `rel` inside tracefs.
    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.root.join(rel)
    }

    /// Whether tracefs was mounted nowhere and is reached through arum's private mount.
    pub fn is_private(&self) -> bool {
        self.private.is_some()
    }

    /// Where tracefs is, for messages.
    pub fn describe(&self) -> String {
        if self.is_private() {
            "arum's private tracefs mount".into()
        } else {
            self.root.display().to_string()
        }
    }
}

/// Where tracefs is mounted in arum's mount namespace.
fn mount_points() -> Vec<PathBuf> {
    let Ok(infos) = procfs::process::Process::myself().and_then(|p| p.mountinfo()) else {
        return Vec::new();
    };
    infos
        .into_iter()
        .filter(|m| m.fs_type == "tracefs")
        .map(|m| m.mount_point)
        .collect()
}

/// A tracefs mount attached nowhere: its descriptor is the only way to it.
fn private_mount() -> rustix::io::Result<OwnedFd> {
    let context = rustix::mount::fsopen("tracefs", FsOpenFlags::FSOPEN_CLOEXEC)?;
    rustix::mount::fsconfig_create(&context)?;
    rustix::mount::fsmount(
        &context,
        FsMountFlags::FSMOUNT_CLOEXEC,
        MountAttrFlags::MOUNT_ATTR_NOSUID
            | MountAttrFlags::MOUNT_ATTR_NODEV
            | MountAttrFlags::MOUNT_ATTR_NOEXEC,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_tracefs_does_not_hold_is_named_in_the_error() {
        // Whatever this machine has: tracefs mounted, mountable privately, or neither (not root),
        // a path that no tracefs holds is an error that names it, never a tracefs without it.
        let err = Tracefs::open("no_such_file_in_tracefs")
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("no_such_file_in_tracefs") || err.contains("mount it with"),
            "{err}"
        );
    }
}
