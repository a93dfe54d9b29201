//! The store's operations on an SQLite file: write-ahead logging, so readers never wait for a
//! writer, and a long busy timeout, so concurrent writers (CI jobs on one store) wait for each
//! other instead of failing.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ErrorCode, ToSql};

use crate::sql::{Dialect, Sql, Value};

/// How long a writer waits for another's transaction before giving up. A batch of runs is
/// written in milliseconds; a minute covers many queued writers on a loaded machine.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Sqlite {
    conn: Connection,
}

impl Sqlite {
    /// Opens (creating) the database at `path`, its directory too.
    pub fn open(path: &Path) -> Result<Sqlite, String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let conn = Connection::open(path).map_err(|e| e.to_string())?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| e.to_string())?;
        // WAL is kept in the file once set; `synchronous = NORMAL` is WAL's durable-on-commit
        // setting short of a power failure, which loses at most the last commits, never the file.
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .map_err(|e| e.to_string())?;
        if !mode.eq_ignore_ascii_case("wal") {
            write_ahead(&conn)?;
        }
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| e.to_string())?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| e.to_string())?;
        Ok(Sqlite { conn })
    }
}

/// Turns a new file to write-ahead logging. Two writers creating the store at once both get
/// here, and the change of mode fails at once with SQLITE_BUSY instead of waiting on the busy
/// handler: it is retried for as long as a write would wait.
fn write_ahead(conn: &Connection) -> Result<(), String> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0)) {
            Ok(_) => return Ok(()),
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                ) && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(r) => ToSqlOutput::Borrowed(ValueRef::Real(*r)),
            Value::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

fn value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

impl Sql for Sqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn batch(&mut self, sql: &str) -> Result<(), String> {
        self.conn.execute_batch(sql).map_err(|e| e.to_string())
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, String> {
        let mut st = self.conn.prepare_cached(sql).map_err(|e| e.to_string())?;
        st.execute(rusqlite::params_from_iter(params))
            .map(|n| n as u64)
            .map_err(|e| e.to_string())
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let mut st = self.conn.prepare_cached(sql).map_err(|e| e.to_string())?;
        let columns = st.column_count();
        let rows = st
            .query_map(rusqlite::params_from_iter(params), |row| {
                (0..columns)
                    .map(|i| row.get_ref(i).map(value))
                    .collect::<rusqlite::Result<Vec<Value>>>()
            })
            .map_err(|e| e.to_string())?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| e.to_string())
    }

    fn begin_write(&mut self) -> Result<(), String> {
        self.batch("BEGIN IMMEDIATE")
    }

    fn lock_schema(&mut self) -> Result<(), String> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// The bundled SQLite is built as `.cargo/config.toml`'s `LIBSQLITE3_FLAGS` asks: without
    /// the extras arum's SQL never uses, whose tables of pointers the start-up would relocate at
    /// every run.
    #[test]
    fn sqlite_is_built_without_the_extras() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let mut stmt = conn.prepare("PRAGMA compile_options").unwrap();
        let options: Vec<String> = stmt
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for extra in [
            "ENABLE_FTS3",
            "ENABLE_FTS5",
            "ENABLE_RTREE",
            "ENABLE_DBSTAT_VTAB",
            "ENABLE_STAT4",
            "SOUNDEX",
        ] {
            assert!(!options.iter().any(|o| o == extra), "{extra}: {options:?}");
        }
        for omitted in ["OMIT_LOAD_EXTENSION", "OMIT_JSON"] {
            assert!(
                options.iter().any(|o| o == omitted),
                "{omitted}: {options:?}"
            );
        }
        assert!(conn.query_row("SELECT json('{}')", [], |_| Ok(())).is_err());
        // What arum's store does use still works.
        conn.execute_batch(
            "CREATE TABLE t (k TEXT PRIMARY KEY, v REAL); INSERT INTO t VALUES ('a', 1.5);",
        )
        .unwrap();
        let v: f64 = conn
            .query_row("SELECT v FROM t WHERE k = 'a'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, 1.5);
    }
}
