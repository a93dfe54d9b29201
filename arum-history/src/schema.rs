//! The store's schema, one version number for the whole of it, and the migrations from each
//! version to the next. Opening a store brings it to [`VERSION`] under the write lock (and on
//! PostgreSQL an advisory lock), so concurrent openers migrate it once; a store newer than this
//! arum is refused rather than misread.
//!
//! Versions:
//! 1. runs (identity, command, commit, status, the report as JSON text), their labels and their
//!    metrics by name;
//! 2. the report kept LZ4-compressed: a report with per-CPU counters or the ambient time series
//!    is tens of kilobytes of repetitive JSON, and a CI store keeps thousands.

use crate::sql::{in_write_transaction, Dialect, Sql, Value};

/// The schema this arum reads and writes.
pub const VERSION: i64 = 2;

/// Version 1's tables.
const V1: &str = "
CREATE TABLE runs (
    id {id},
    batch TEXT NOT NULL,
    saved_unix_ns BIGINT NOT NULL,
    started_unix_ns BIGINT NOT NULL,
    host TEXT NOT NULL,
    cpu_key TEXT NOT NULL,
    cpu_name TEXT NOT NULL,
    kernel TEXT NOT NULL,
    cpus BIGINT NOT NULL,
    arum_version TEXT NOT NULL,
    command TEXT NOT NULL,
    commit_id TEXT,
    dirty BIGINT,
    run_index BIGINT NOT NULL,
    exit_status BIGINT NOT NULL,
    report TEXT NOT NULL
);
CREATE TABLE labels (
    run_id BIGINT NOT NULL REFERENCES runs (id),
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX labels_by_key ON labels (key, value);
CREATE TABLE metrics (
    run_id BIGINT NOT NULL REFERENCES runs (id),
    name TEXT NOT NULL,
    value {real} NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE INDEX metrics_by_name ON metrics (name, run_id);
";

/// Brings the store to [`VERSION`].
pub fn migrate(sql: &mut dyn Sql) -> Result<(), Migration> {
    migrate_to(sql, VERSION)
}

/// Why a store could not be brought to the current version.
#[derive(Debug)]
pub enum Migration {
    Newer(i64),
    Failed(String),
}

impl From<String> for Migration {
    fn from(e: String) -> Migration {
        Migration::Failed(e)
    }
}

/// The store's version, 0 for an empty database; read without writing, so a reader with no
/// right to change the store can read it.
fn version(sql: &mut dyn Sql) -> Result<i64, String> {
    let exists = match sql.dialect() {
        Dialect::Sqlite => "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
        Dialect::Postgres => {
            "SELECT count(*) FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_name = ?"
        }
    };
    let found = sql.query(exists, &["arum_schema".into()])?;
    if found.first().and_then(|r| r.first()).and_then(Value::int) != Some(1) {
        return Ok(0);
    }
    let rows = sql.query("SELECT max(version) FROM arum_schema", &[])?;
    Ok(rows
        .first()
        .and_then(|r| r.first())
        .and_then(Value::int)
        .unwrap_or(0))
}

/// Brings the store to `target` (tests build older stores with it).
pub fn migrate_to(sql: &mut dyn Sql, target: i64) -> Result<(), Migration> {
    // Most opens find the store current: no lock, no write (readers never wait for writers).
    match version(sql)? {
        v if v > VERSION => return Err(Migration::Newer(v)),
        v if v >= target => return Ok(()),
        _ => {}
    }
    let mut newer = None;
    in_write_transaction(sql, |sql| {
        sql.lock_schema()?;
        sql.batch("CREATE TABLE IF NOT EXISTS arum_schema (version BIGINT NOT NULL)")?;
        // Again under the lock: another opener may have migrated it meanwhile.
        let found = version(sql)?;
        if found > VERSION {
            newer = Some(found);
            return Ok(());
        }
        for v in found + 1..=target {
            step(sql, v)?;
        }
        if target > found {
            sql.execute("DELETE FROM arum_schema", &[])?;
            sql.execute(
                "INSERT INTO arum_schema (version) VALUES (?)",
                &[target.into()],
            )?;
        }
        Ok(())
    })?;
    match newer {
        Some(found) => Err(Migration::Newer(found)),
        None => Ok(()),
    }
}

/// The migration to version `v` from the one before.
fn step(sql: &mut dyn Sql, v: i64) -> Result<(), String> {
    match v {
        1 => {
            let ddl = sql.dialect().ddl(V1);
            sql.batch(&ddl)
        }
        2 => compress_reports(sql),
        _ => Err(format!("no migration to schema version {v}")),
    }
}

/// Version 2: each report's JSON text becomes LZ4-compressed bytes.
fn compress_reports(sql: &mut dyn Sql) -> Result<(), String> {
    let ddl = sql
        .dialect()
        .ddl("ALTER TABLE runs ADD COLUMN report_lz4 {blob}");
    sql.batch(&ddl)?;
    for row in sql.query("SELECT id, report FROM runs", &[])? {
        let mut row = row.into_iter();
        let (Some(Value::Int(id)), Some(Value::Text(report))) = (row.next(), row.next()) else {
            return Err("a run of schema version 1 has no report text".into());
        };
        sql.execute(
            "UPDATE runs SET report_lz4 = ? WHERE id = ?",
            &[Value::Blob(compress(&report)), Value::Int(id)],
        )?;
    }
    sql.batch("ALTER TABLE runs DROP COLUMN report")
}

/// A report as it is kept from version 2 on.
pub fn compress(report: &str) -> Vec<u8> {
    lz4_flex::compress_prepend_size(report.as_bytes())
}

/// A kept report's JSON text.
pub fn decompress(bytes: &[u8]) -> Result<String, String> {
    let raw = lz4_flex::decompress_size_prepended(bytes).map_err(|e| e.to_string())?;
    String::from_utf8(raw).map_err(|e| e.to_string())
}
