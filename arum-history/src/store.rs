//! A store of runs: opened (and migrated) once, then batches saved and runs read back.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::HistoryError;
use crate::filter::Filter;
use crate::location::Location;
use crate::postgres::Postgres;
use crate::record::{Commit, Machine, Record, StoredRun};
use crate::schema::{self, Migration};
use crate::sql::{in_write_transaction, Sql, Value};
use crate::sqlite::Sqlite;

pub struct Store {
    sql: Box<dyn Sql>,
    location: Location,
}

/// The columns of `runs` a query reads, in [`stored_run`]'s order.
const RUN_COLUMNS: &str = "id, batch, saved_unix_ns, started_unix_ns, host, cpu_key, cpu_name, \
     kernel, cpus, arum_version, command, commit_id, dirty, run_index, exit_status";

impl Store {
    /// Opens the store at `location`, creating it (an SQLite file and its directory) when it
    /// does not exist, and brings its schema to this arum's version.
    pub fn open(location: &Location) -> Result<Store, HistoryError> {
        let mut sql = connect(location).map_err(|why| HistoryError::Open {
            store: location.to_string(),
            why,
        })?;
        match schema::migrate(sql.as_mut()) {
            Ok(()) => {}
            Err(Migration::Newer(found)) => {
                return Err(HistoryError::Newer {
                    store: location.to_string(),
                    found,
                    known: schema::VERSION,
                })
            }
            Err(Migration::Failed(why)) => {
                return Err(HistoryError::Open {
                    store: location.to_string(),
                    why: format!(
                        "cannot bring it to schema version {}: {why}",
                        schema::VERSION
                    ),
                })
            }
        }
        Ok(Store {
            sql,
            location: location.clone(),
        })
    }

    /// Opens an existing SQLite store without creating it: reading a store that was never
    /// written is a mistake worth saying so.
    pub fn open_existing(location: &Location) -> Result<Store, HistoryError> {
        if let Location::Sqlite(path) = location {
            if !path.exists() {
                return Err(HistoryError::Open {
                    store: location.to_string(),
                    why: "no run was saved there yet (save runs with --save, or name the store \
                          with --store)"
                        .into(),
                });
            }
        }
        Store::open(location)
    }

    pub fn location(&self) -> &Location {
        &self.location
    }

    fn failed(&self, why: String) -> HistoryError {
        HistoryError::Database {
            store: self.location.to_string(),
            why,
        }
    }

    /// Saves `records` as one batch, all or none; their ids, in order.
    pub fn save(&mut self, records: &[Record]) -> Result<Vec<i64>, HistoryError> {
        let saved = now_ns();
        let batch = format!("{}-{}-{saved}", hostname_of(records), std::process::id());
        in_write_transaction(self.sql.as_mut(), |sql| {
            records
                .iter()
                .map(|r| insert(sql, &batch, saved, r))
                .collect()
        })
        .map_err(|e| self.failed(e))
    }

    /// The runs `filter` selects, in saved order, with the metrics it names.
    pub fn runs(&mut self, filter: &Filter) -> Result<Vec<StoredRun>, HistoryError> {
        let (restrict, params) = label_restriction(&filter.labels);
        let rows = self
            .sql
            .query(
                &format!("SELECT {RUN_COLUMNS} FROM runs r WHERE 1 = 1{restrict} ORDER BY id"),
                &params,
            )
            .map_err(|e| self.failed(e))?;
        let mut runs = rows
            .into_iter()
            .map(stored_run)
            .collect::<Result<Vec<_>, String>>()
            .map_err(|e| self.failed(e))?;
        let mut labels = self.labels(&restrict, &params)?;
        for run in &mut runs {
            run.labels = labels.remove(&run.id).unwrap_or_default();
        }
        let mut runs = filter.select(runs).map_err(HistoryError::Selection)?;
        for metric in &filter.metrics {
            let mut values = self.metric(metric, &restrict, &params)?;
            for run in &mut runs {
                if let Some(v) = values.remove(&run.id) {
                    run.metrics.push((metric.clone(), v));
                }
            }
        }
        Ok(runs)
    }

    /// Every label of the runs the restriction selects, by run.
    fn labels(
        &mut self,
        restrict: &str,
        params: &[Value],
    ) -> Result<HashMap<i64, Vec<(String, String)>>, HistoryError> {
        let rows = self
            .sql
            .query(
                &format!(
                    "SELECT l.run_id, l.key, l.value FROM labels l JOIN runs r ON r.id = l.run_id \
                     WHERE 1 = 1{restrict} ORDER BY l.run_id, l.key"
                ),
                params,
            )
            .map_err(|e| self.failed(e))?;
        let mut by_run: HashMap<i64, Vec<(String, String)>> = HashMap::new();
        for row in rows {
            let mut row = row.into_iter();
            if let (Some(Value::Int(id)), Some(Value::Text(k)), Some(Value::Text(v))) =
                (row.next(), row.next(), row.next())
            {
                by_run.entry(id).or_default().push((k, v));
            }
        }
        Ok(by_run)
    }

    /// `metric`'s value in each run the restriction selects.
    fn metric(
        &mut self,
        metric: &str,
        restrict: &str,
        params: &[Value],
    ) -> Result<HashMap<i64, f64>, HistoryError> {
        let mut all = vec![Value::from(metric)];
        all.extend_from_slice(params);
        let rows = self
            .sql
            .query(
                &format!(
                    "SELECT m.run_id, m.value FROM metrics m JOIN runs r ON r.id = m.run_id \
                     WHERE m.name = ?{restrict}"
                ),
                &all,
            )
            .map_err(|e| self.failed(e))?;
        Ok(rows
            .into_iter()
            .filter_map(|row| Some((row.first()?.int()?, row.get(1)?.real()?)))
            .collect())
    }

    /// The names of every metric saved, sorted.
    pub fn metric_names(&mut self) -> Result<Vec<String>, HistoryError> {
        let rows = self
            .sql
            .query("SELECT DISTINCT name FROM metrics ORDER BY name", &[])
            .map_err(|e| self.failed(e))?;
        Ok(rows
            .into_iter()
            .filter_map(|r| r.into_iter().next()?.into_text())
            .collect())
    }

    /// The report of run `id` (`arum.report/1` JSON).
    pub fn report(&mut self, id: i64) -> Result<String, HistoryError> {
        let rows = self
            .sql
            .query(
                "SELECT report_lz4 FROM runs WHERE id = ?",
                &[Value::Int(id)],
            )
            .map_err(|e| self.failed(e))?;
        let corrupt = |why: String| HistoryError::Corrupt {
            store: self.location.to_string(),
            id,
            why,
        };
        let bytes = rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .and_then(Value::into_blob)
            .ok_or_else(|| corrupt("no such run".into()))?;
        schema::decompress(&bytes).map_err(corrupt)
    }
}

/// A connection to the database at `location`, as it is.
pub(crate) fn connect(location: &Location) -> Result<Box<dyn Sql>, String> {
    match location {
        Location::Sqlite(path) => Sqlite::open(path).map(|s| Box::new(s) as Box<dyn Sql>),
        Location::Postgres(url) => Postgres::open(url).map(|s| Box::new(s) as Box<dyn Sql>),
    }
}

/// `AND` clauses that keep the runs (aliased `r`) carrying every label, and their parameters.
fn label_restriction(labels: &[(String, String)]) -> (String, Vec<Value>) {
    let mut sql = String::new();
    let mut params = Vec::new();
    for (k, v) in labels {
        sql.push_str(
            " AND EXISTS (SELECT 1 FROM labels x WHERE x.run_id = r.id AND x.key = ? AND x.value = ?)",
        );
        params.push(Value::from(k.as_str()));
        params.push(Value::from(v.as_str()));
    }
    (sql, params)
}

fn insert(sql: &mut dyn Sql, batch: &str, saved: i64, r: &Record) -> Result<i64, String> {
    let (commit, dirty) = match &r.commit {
        Some(c) => (
            Value::Text(c.id.clone()),
            c.dirty.map_or(Value::Null, |d| Value::Int(d.into())),
        ),
        None => (Value::Null, Value::Null),
    };
    let m = &r.machine;
    let rows = sql.query(
        "INSERT INTO runs (batch, saved_unix_ns, started_unix_ns, host, cpu_key, cpu_name, \
         kernel, cpus, arum_version, command, commit_id, dirty, run_index, exit_status, \
         report_lz4) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        &[
            batch.into(),
            Value::Int(saved),
            Value::Int(clamp(r.started_unix_ns)),
            m.host.as_str().into(),
            m.cpu_key.as_str().into(),
            m.cpu_name.as_str().into(),
            m.kernel.as_str().into(),
            Value::Int(m.cpus.into()),
            r.arum_version.as_str().into(),
            r.command.as_str().into(),
            commit,
            dirty,
            Value::Int(clamp(r.run_index)),
            Value::Int(r.exit_status.into()),
            Value::Blob(schema::compress(&r.report)),
        ],
    )?;
    let id = returned_id(&rows)?;
    insert_details(sql, id, r)?;
    Ok(id)
}

/// The id an `INSERT ... RETURNING id` gave.
pub(crate) fn returned_id(rows: &[Vec<Value>]) -> Result<i64, String> {
    rows.first()
        .and_then(|row| row.first())
        .and_then(Value::int)
        .ok_or_else(|| "the database gave no id for a saved run".to_string())
}

/// A saved run's labels and metrics (the same tables in every schema version so far).
pub(crate) fn insert_details(sql: &mut dyn Sql, id: i64, r: &Record) -> Result<(), String> {
    for (k, v) in &r.labels {
        sql.execute(
            "INSERT INTO labels (run_id, key, value) VALUES (?, ?, ?)",
            &[Value::Int(id), k.as_str().into(), v.as_str().into()],
        )?;
    }
    for (name, value) in &r.metrics {
        if value.is_finite() {
            sql.execute(
                "INSERT INTO metrics (run_id, name, value) VALUES (?, ?, ?)",
                &[Value::Int(id), name.as_str().into(), Value::Real(*value)],
            )?;
        }
    }
    Ok(())
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| clamp(d.as_nanos() as u64))
}

fn hostname_of(records: &[Record]) -> &str {
    records.first().map_or("", |r| r.machine.host.as_str())
}

/// A row of [`RUN_COLUMNS`] as a run (labels and metrics are read apart).
fn stored_run(row: Vec<Value>) -> Result<StoredRun, String> {
    let bad = || "a run row of an unexpected shape".to_string();
    let mut it = row.into_iter();
    let mut next = || it.next().ok_or_else(bad);
    let int = |v: Value| v.int().ok_or_else(bad);
    let text = |v: Value| v.into_text().ok_or_else(bad);
    let id = int(next()?)?;
    let batch = text(next()?)?;
    let saved_unix_ns = int(next()?)?;
    let started_unix_ns = int(next()?)?;
    let machine = Machine {
        host: text(next()?)?,
        cpu_key: text(next()?)?,
        cpu_name: text(next()?)?,
        kernel: text(next()?)?,
        cpus: u32::try_from(int(next()?)?).map_err(|_| bad())?,
    };
    let arum_version = text(next()?)?;
    let command = text(next()?)?;
    let commit = next()?.into_text().map(|id| Commit { id, dirty: None });
    let dirty = next()?.int().map(|d| d != 0);
    let commit = commit.map(|c| Commit { dirty, ..c });
    Ok(StoredRun {
        id,
        batch,
        saved_unix_ns,
        started_unix_ns,
        machine,
        arum_version,
        command,
        labels: Vec::new(),
        commit,
        run_index: u64::try_from(int(next()?)?).map_err(|_| bad())?,
        exit_status: i32::try_from(int(next()?)?).map_err(|_| bad())?,
        metrics: Vec::new(),
    })
}
