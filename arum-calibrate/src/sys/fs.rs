//! File-system facilities the file and fault measurements need: dropping a file's pages from
//! the cache, read-ahead hints, direct I/O, and naming the file system.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};

use super::errno;

/// Writes back and drops `file`'s pages from the page cache (clean pages only can be dropped,
/// hence the fdatasync first). Whether it worked is for the caller to check: some file systems
/// (tmpfs) keep file data in memory whatever the advice.
pub fn drop_cached(file: &File) -> io::Result<()> {
    file.sync_data()?;
    posix_fadvise(file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED).map_err(errno)
}

/// Disables read-ahead for `file` (each read fetches only what it asks for).
pub fn advise_random(file: &File) -> io::Result<()> {
    posix_fadvise(file, 0, 0, PosixFadviseAdvice::POSIX_FADV_RANDOM).map_err(errno)
}

/// Restores normal read-ahead.
pub fn advise_normal(file: &File) -> io::Result<()> {
    posix_fadvise(file, 0, 0, PosixFadviseAdvice::POSIX_FADV_NORMAL).map_err(errno)
}

/// Opens `path` for reading with O_DIRECT (transfers bypass the page cache).
pub fn open_direct(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
}

/// The file system holding `path` (ext4, xfs, tmpfs, overlayfs, ...).
pub fn fs_type(path: &Path) -> String {
    use nix::sys::statfs::*;
    let known = [
        (EXT4_SUPER_MAGIC, "ext4"),
        (XFS_SUPER_MAGIC, "xfs"),
        (BTRFS_SUPER_MAGIC, "btrfs"),
        (TMPFS_MAGIC, "tmpfs"),
        (OVERLAYFS_SUPER_MAGIC, "overlayfs"),
        (NFS_SUPER_MAGIC, "nfs"),
        (FUSE_SUPER_MAGIC, "fuse"),
        (SMB_SUPER_MAGIC, "smb"),
    ];
    match statfs(path) {
        Ok(s) => {
            let t = s.filesystem_type();
            known
                .iter()
                .find(|(m, _)| *m == t)
                .map_or_else(|| format!("file system {:#x}", t.0), |(_, n)| n.to_string())
        }
        Err(e) => format!("unknown ({e})"),
    }
}

/// Bytes free for an unprivileged user under `path`.
pub fn free_bytes(path: &Path) -> u64 {
    nix::sys::statvfs::statvfs(path)
        .map(|s| s.blocks_available() * s.fragment_size())
        .unwrap_or(0)
}
