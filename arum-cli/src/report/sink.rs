//! Where the report goes: stderr; a regular file written atomically (temporary file + rename);
//! or, for an existing non-regular file (/dev/null, a FIFO, /dev/stdout), that file itself, since
//! renaming over a device node would replace it. The destination is opened before the program
//! is launched, so an unwritable one is reported before anything runs.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::ArumError;

pub enum Sink {
    Stderr,
    Atomic { path: PathBuf, tmp: NamedTempFile },
    Direct { path: PathBuf, file: File },
}

impl Sink {
    pub fn open(path: Option<&Path>) -> Result<Sink, ArumError> {
        let Some(path) = path else {
            return Ok(Sink::Stderr);
        };
        let failed = |source| ArumError::Output {
            path: path.to_path_buf(),
            source,
        };
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(failed)?;
            return Ok(Sink::Direct {
                path: path.to_path_buf(),
                file,
            });
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(".arum-report.")
            // 0666 less the umask, as for any file the user creates (tempfile's default is 0600).
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .tempfile_in(dir)
            .map_err(failed)?;
        Ok(Sink::Atomic {
            path: path.to_path_buf(),
            tmp,
        })
    }

    /// Writes the whole report; on a failure the report goes to stderr so it is not lost.
    pub fn write(self, report: &str) -> Result<(), ArumError> {
        let (path, written) = match self {
            Sink::Stderr => {
                let _ = std::io::stderr().lock().write_all(report.as_bytes());
                return Ok(());
            }
            Sink::Direct { path, mut file } => {
                let written = file.write_all(report.as_bytes());
                (path, written)
            }
            Sink::Atomic { path, mut tmp } => {
                let written = tmp
                    .write_all(report.as_bytes())
                    .and_then(|_| tmp.as_file().sync_all())
                    .and_then(|_| tmp.persist(&path).map(drop).map_err(|e| e.error));
                (path, written)
            }
        };
        written.map_err(|source| {
            let _ = std::io::stderr().lock().write_all(report.as_bytes());
            ArumError::Output { path, source }
        })
    }
}
