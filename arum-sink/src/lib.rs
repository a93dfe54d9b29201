//! The one writer of every file arum writes: reports, pages, plots, exports, saved figures. A
//! destination is opened before the work that fills it, so an unwritable one stops arum before
//! anything runs, and written once at the end:
//!
//! - `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`: arum's own descriptor N, as is;
//! - a symbolic link: its target, never the link itself (resolved one link at a time);
//! - an existing device, FIFO or socket: that file, opened for writing (nothing is replaced);
//! - a regular file (or a new one) in a writable directory: an unnamed file (O_TMPFILE) in that
//!   directory, given a name and renamed over the target only when it is complete, so a reader
//!   never sees half a file and a killed arum leaves nothing behind. An existing file
//!   keeps its permissions (and, for root, its owner). The file is not synced: the rename
//!   makes it whole for every reader at once, and a sync, which only guards against a power
//!   cut, would be most of arum's time after the program ends (the journal commit it forces
//!   delays the link as well);
//! - a regular file in a directory arum may not create files in: rewritten in place.
//!
//! Nothing is ever created under /dev, and errors name the path the user gave. A new file gets
//! 0666 less the umask, as any file the user creates; a replaced one keeps its mode.

use std::fs::{File, OpenOptions};
use std::io::{Seek, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::Mode;

/// A destination that cannot be opened or written: the path as the user gave it, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct SinkError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

pub enum Sink {
    Stderr,
    /// Standard output; a reader that leaves early (`| head`) is not a failure.
    Stdout,
    /// An existing file written as it is: one of arum's descriptors, a device, a FIFO.
    Direct {
        path: PathBuf,
        file: File,
    },
    /// A regular file replaced atomically at the end.
    Atomic {
        path: PathBuf,
        dir: File,
        name: PathBuf,
        tmp: File,
        keep: Option<Box<std::fs::Metadata>>,
    },
    /// A regular file rewritten in place at the end.
    InPlace {
        path: PathBuf,
        file: File,
    },
}

/// Symbolic links followed at most (as the kernel's ELOOP limit).
const MAX_LINKS: usize = 40;

impl Sink {
    /// `path`, or standard error when none is given (where the report goes by default).
    pub fn open(path: Option<&Path>) -> Result<Sink, SinkError> {
        match path {
            None => Ok(Sink::Stderr),
            Some(p) => Sink::open_path(p),
        }
    }

    /// `path`, or standard output when none is given.
    pub fn open_or_stdout(path: Option<&Path>) -> Result<Sink, SinkError> {
        match path {
            None => Ok(Sink::Stdout),
            Some(p) => Sink::open_path(p),
        }
    }

    fn open_path(given: &Path) -> Result<Sink, SinkError> {
        let failed = |source: std::io::Error| SinkError {
            path: given.to_path_buf(),
            source,
        };
        let (target, existing) = match resolve(given).map_err(failed)? {
            Resolved::Descriptor(fd) => {
                // SAFETY: fcntl(F_DUPFD_CLOEXEC) only duplicates an existing descriptor; failure
                // (a closed descriptor) is reported below.
                let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
                if dup < 0 {
                    return Err(failed(std::io::Error::last_os_error()));
                }
                // SAFETY: `dup` is a new descriptor that nobody else owns.
                let file = unsafe { File::from_raw_fd(dup) };
                return Ok(Sink::Direct {
                    path: given.to_path_buf(),
                    file,
                });
            }
            Resolved::Path(p, existing) => (p, existing),
        };
        if let Some(m) = &existing {
            if m.is_dir() {
                return Err(failed(std::io::Error::from(
                    std::io::ErrorKind::IsADirectory,
                )));
            }
            if !m.is_file() {
                let file = OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(failed)?;
                return Ok(Sink::Direct {
                    path: given.to_path_buf(),
                    file,
                });
            }
        }
        let (dir_path, name) = split(&target);
        if under_dev(&dir_path) {
            return match existing {
                // A regular file someone put in /dev: written in place, nothing created there.
                Some(_) => in_place(given, &target),
                None => Err(SinkError {
                    path: given.to_path_buf(),
                    source: std::io::Error::other(
                        "arum creates no files under /dev; name an existing device or a file elsewhere",
                    ),
                }),
            };
        }
        let dir = File::open(&dir_path).map_err(failed)?;
        match unnamed_in(&dir) {
            Ok(tmp) => Ok(Sink::Atomic {
                path: given.to_path_buf(),
                dir,
                name,
                tmp,
                keep: existing.map(Box::new),
            }),
            // A directory arum may not create files in: an existing file is rewritten in place.
            Err(Errno::EACCES | Errno::EPERM | Errno::EROFS) if existing.is_some() => {
                in_place(given, &target)
            }
            Err(e) => Err(failed(std::io::Error::from(e))),
        }
    }

    /// Writes a report whole; on a failure it goes to stderr instead, so it is not lost.
    pub fn write_report(self, report: &str) -> Result<(), SinkError> {
        self.write(report.as_bytes()).inspect_err(|_| {
            let _ = std::io::stderr().lock().write_all(report.as_bytes());
        })
    }

    /// Writes a report whose `slot` (a placeholder of fixed width) is to hold a figure known
    /// only once the report is written: `measure` gives it, padded with spaces to the slot's
    /// width (JSON and text allow white space after a number), and is called as late as the
    /// destination allows. A regular file replaced at the end gets the figure after its rename,
    /// written into the file in place; any other destination gets the bytes before the slot,
    /// then the figure and the rest. On a failure the report goes to stderr, the figure in it.
    pub fn write_report_measured(
        self,
        report: &str,
        slot: std::ops::Range<usize>,
        measure: impl FnOnce() -> String,
    ) -> Result<(), SinkError> {
        let bytes = report.as_bytes();
        let width = slot.len();
        let mut measure = Some(measure);
        let mut figure = move || -> Vec<u8> {
            let text = measure.take().map(|m| m()).unwrap_or_default();
            let mut padded = format!("{text:<width$}").into_bytes();
            padded.truncate(width);
            padded
        };
        let mut filled: Option<Vec<u8>> = None;
        let result = match self {
            Sink::Atomic {
                path,
                dir,
                name,
                mut tmp,
                keep,
            } => {
                let written = tmp
                    .write_all(bytes)
                    .and_then(|_| keep_attributes(&tmp, keep.as_deref()))
                    .and_then(|_| link_over(&tmp, &dir, &name))
                    .and_then(|_| {
                        let f = filled.insert(figure());
                        std::os::unix::fs::FileExt::write_all_at(&tmp, f, slot.start as u64)
                    });
                written.map_err(|source| SinkError { path, source })
            }
            sink => {
                let mut parts = StreamWriter::new(sink);
                parts.put(&bytes[..slot.start]);
                parts.put(filled.insert(figure()));
                parts.put(&bytes[slot.end..]);
                parts.finish()
            }
        };
        result.inspect_err(|_| {
            let f = filled.unwrap_or_else(figure);
            let mut out = std::io::stderr().lock();
            let _ = out
                .write_all(&bytes[..slot.start])
                .and_then(|_| out.write_all(&f))
                .and_then(|_| out.write_all(&bytes[slot.end..]));
        })
    }

    /// Writes `bytes` whole.
    pub fn write(self, bytes: &[u8]) -> Result<(), SinkError> {
        let mut out = StreamWriter::new(self);
        out.put(bytes);
        out.finish()
    }
}

/// A destination written in parts, in order: the first failure is kept, later parts skipped.
struct StreamWriter {
    sink: Sink,
    started: bool,
    failed: Option<SinkError>,
}

impl StreamWriter {
    fn new(sink: Sink) -> StreamWriter {
        StreamWriter {
            sink,
            started: false,
            failed: None,
        }
    }

    fn put(&mut self, part: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        let first = !std::mem::replace(&mut self.started, true);
        let (path, written) = match &mut self.sink {
            Sink::Stderr => {
                let _ = std::io::stderr().lock().write_all(part);
                return;
            }
            Sink::Stdout => {
                let mut out = std::io::stdout().lock();
                match out.write_all(part).and_then(|_| out.flush()) {
                    Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                        (PathBuf::from("/dev/stdout"), Err(e))
                    }
                    _ => return,
                }
            }
            Sink::Direct { path, file } => (path.clone(), file.write_all(part)),
            Sink::InPlace { path, file } => {
                let cleared = if first {
                    file.set_len(0).and_then(|_| file.rewind())
                } else {
                    Ok(())
                };
                (path.clone(), cleared.and_then(|_| file.write_all(part)))
            }
            Sink::Atomic { path, tmp, .. } => (path.clone(), tmp.write_all(part)),
        };
        if let Err(source) = written {
            self.failed = Some(SinkError { path, source });
        }
    }

    fn finish(self) -> Result<(), SinkError> {
        match (self.failed, self.sink) {
            (Some(e), _) => Err(e),
            (
                None,
                Sink::Atomic {
                    path,
                    dir,
                    name,
                    tmp,
                    keep,
                },
            ) => keep_attributes(&tmp, keep.as_deref())
                .and_then(|_| link_over(&tmp, &dir, &name))
                .map_err(|source| SinkError { path, source }),
            (None, _) => Ok(()),
        }
    }
}

enum Resolved {
    /// One of arum's own descriptors, named by /dev/std*, /dev/fd/N or /proc/self/fd/N.
    Descriptor(i32),
    /// A path that is not a symbolic link, with its metadata if it exists.
    Path(PathBuf, Option<std::fs::Metadata>),
}

/// Follows `path` through symbolic links, one at a time, to a file that is not a link, stopping
/// at the names of arum's own descriptors (whose /proc links name pipes and sockets, not paths).
fn resolve(path: &Path) -> std::io::Result<Resolved> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if let Some(fd) = descriptor_name(&p) {
            return Ok(Resolved::Descriptor(fd));
        }
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(parent) if to.is_relative() => parent.join(to),
                    _ => to,
                };
            }
            // Not a link: its own metadata is what stat would say (none: nothing there).
            Ok(m) => return Ok(Resolved::Path(p, Some(m))),
            Err(_) => return Ok(Resolved::Path(p, None)),
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::ELOOP))
}

/// The descriptor named by `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` or `/proc/self/fd/N`.
fn descriptor_name(p: &Path) -> Option<i32> {
    let s = p.to_str()?;
    match s {
        "/dev/stdout" => Some(1),
        "/dev/stderr" => Some(2),
        _ => s
            .strip_prefix("/dev/fd/")
            .or_else(|| s.strip_prefix("/proc/self/fd/"))
            .or_else(|| {
                let rest = s.strip_prefix("/proc/")?;
                let (pid, fd) = rest.split_once("/fd/")?;
                (pid.parse::<u32>().ok()? == std::process::id()).then_some(fd)
            })?
            .parse()
            .ok(),
    }
}

/// The directory and the file name of a path (`.` for a bare name).
fn split(p: &Path) -> (PathBuf, PathBuf) {
    let name = p.file_name().map(PathBuf::from).unwrap_or_default();
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    (dir, name)
}

/// Whether `dir` is on the file system mounted at /dev (devtmpfs: device nodes, where a stray
/// regular file would shadow a device). Other mounts below it, such as /dev/shm, are ordinary.
fn under_dev(dir: &Path) -> bool {
    match (std::fs::metadata(dir), std::fs::metadata("/dev")) {
        (Ok(d), Ok(dev)) => d.dev() == dev.dev(),
        _ => false,
    }
}

fn in_place(given: &Path, target: &Path) -> Result<Sink, SinkError> {
    let file = OpenOptions::new()
        .write(true)
        .open(target)
        .map_err(|source| SinkError {
            path: given.to_path_buf(),
            source,
        })?;
    Ok(Sink::InPlace {
        path: given.to_path_buf(),
        file,
    })
}

/// An unnamed regular file in `dir` (0666 less the umask, as any file the user creates).
fn unnamed_in(dir: &File) -> Result<File, Errno> {
    let fd: OwnedFd = nix::fcntl::openat(
        dir.as_fd(),
        ".",
        OFlag::O_TMPFILE | OFlag::O_WRONLY | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o666),
    )?;
    Ok(File::from(fd))
}

/// The replaced file's permissions (and owner, where arum may set it) carry over.
fn keep_attributes(tmp: &File, old: Option<&std::fs::Metadata>) -> std::io::Result<()> {
    let Some(old) = old else { return Ok(()) };
    tmp.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))?;
    if nix::unistd::geteuid().is_root() {
        std::os::unix::fs::fchown(tmp, Some(old.uid()), Some(old.gid()))?;
    }
    Ok(())
}

/// Gives the unnamed `tmp` a temporary name in `dir`, then renames it over `name`.
fn link_over(tmp: &File, dir: &File, name: &Path) -> std::io::Result<()> {
    let proc_path = format!("/proc/self/fd/{}", tmp.as_raw_fd());
    let mut last = Errno::EEXIST;
    for attempt in 0..16u32 {
        let staging = format!(".arum-output.{}.{attempt}", std::process::id());
        match nix::unistd::linkat(
            nix::fcntl::AT_FDCWD,
            proc_path.as_str(),
            dir.as_fd(),
            staging.as_str(),
            AtFlags::AT_SYMLINK_FOLLOW,
        ) {
            Ok(()) => {
                return nix::fcntl::renameat(dir.as_fd(), staging.as_str(), dir.as_fd(), name)
                    .map_err(|e| {
                        let _ = nix::unistd::unlinkat(
                            dir.as_fd(),
                            staging.as_str(),
                            nix::unistd::UnlinkatFlags::NoRemoveDir,
                        );
                        std::io::Error::from(e)
                    });
            }
            Err(Errno::EEXIST) => continue,
            Err(e) => {
                last = e;
                break;
            }
        }
    }
    Err(std::io::Error::from(last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_names_are_recognised() {
        assert_eq!(descriptor_name(Path::new("/dev/stdout")), Some(1));
        assert_eq!(descriptor_name(Path::new("/dev/stderr")), Some(2));
        assert_eq!(descriptor_name(Path::new("/dev/fd/7")), Some(7));
        assert_eq!(descriptor_name(Path::new("/proc/self/fd/3")), Some(3));
        let own = format!("/proc/{}/fd/4", std::process::id());
        assert_eq!(descriptor_name(Path::new(&own)), Some(4));
        assert_eq!(descriptor_name(Path::new("/proc/1/fd/4")), None);
        assert_eq!(descriptor_name(Path::new("/dev/null")), None);
    }

    #[test]
    fn the_device_file_system_is_recognised_however_the_path_is_spelt() {
        assert!(under_dev(Path::new("/dev")));
        assert!(under_dev(Path::new("/dev/../dev/.")));
        assert!(!under_dev(Path::new("/")));
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(!under_dev(elsewhere.path()));
    }
}
