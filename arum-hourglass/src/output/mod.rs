//! Renderings of a run: tagged text lines for people and scripts, JSON with everything, and
//! the output's destination (stdout, or a file written atomically).

pub mod json;
pub mod svg;
pub mod text;

use std::io::Write;
use std::path::Path;

use crate::error::Error;

/// Writes `text` to `path` atomically (a temporary file in the same directory, renamed), or to
/// stdout.
pub fn emit(text: &str, path: Option<&Path>) -> Result<(), Error> {
    match path {
        None => {
            let mut out = std::io::stdout().lock();
            // A closed stdout (e.g. `| head`) is not arum's failure.
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
            Ok(())
        }
        Some(p) => write_atomically(p, text.as_bytes()),
    }
}

pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let fail = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}
