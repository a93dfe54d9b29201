//! Where a store is: a PostgreSQL server (a `postgres://` or `postgresql://` URL, which may name
//! a unix socket's directory as `?host=/path`) or else an SQLite file.

use std::fmt;
use std::path::PathBuf;

/// The file name of the default store in the user's data directory.
const DEFAULT_FILE: &str = "arum/history.sqlite";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    /// `text` as a store: a PostgreSQL URL, or a file path.
    pub fn parse(text: &str) -> Location {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Location::Postgres(text.to_string())
        } else {
            Location::Sqlite(PathBuf::from(text))
        }
    }

    /// The store `named` names, or the default one when it names none (absent or empty, as a
    /// bare `--save` gives); none only when there is no default either.
    pub fn named_or_default(named: Option<&str>) -> Option<Location> {
        match named {
            Some(s) if !s.is_empty() => Some(Location::parse(s)),
            _ => Location::default_store(),
        }
    }

    /// The store used when none is named: `$ARUM_HISTORY` when set, else `history.sqlite` in
    /// the user's data directory (`$XDG_DATA_HOME/arum`, `~/.local/share/arum`).
    pub fn default_store() -> Option<Location> {
        if let Some(v) = std::env::var_os("ARUM_HISTORY").filter(|v| !v.is_empty()) {
            return Some(Location::parse(&v.to_string_lossy()));
        }
        dirs::data_dir().map(|d| Location::Sqlite(d.join(DEFAULT_FILE)))
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            // A URL may carry a password: only its scheme and what follows the last `@`.
            Location::Postgres(url) => match url.rsplit_once('@') {
                Some((_, rest)) => write!(f, "postgresql://…@{rest}"),
                None => f.write_str(url),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_servers_and_the_rest_are_files_and_passwords_are_not_shown() {
        assert_eq!(
            Location::parse("history.db"),
            Location::Sqlite("history.db".into())
        );
        assert_eq!(
            Location::parse("postgres://u@h/db"),
            Location::Postgres("postgres://u@h/db".into())
        );
        let shown = Location::parse("postgresql://me:secret@db.example/arum").to_string();
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.ends_with("db.example/arum"), "{shown}");
    }
}
