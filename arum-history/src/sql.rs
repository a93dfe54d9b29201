//! The operations the store needs from a database, alike on SQLite and PostgreSQL, so that the
//! schema, its migrations and every query are written once. Statements use `?` for parameters
//! and `{id}`, `{real}`, `{blob}` for the column types the two spell differently.

/// A value bound to a parameter or read from a column.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn real(&self) -> Option<f64> {
        match self {
            Value::Real(r) => Some(*r),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    pub fn into_text(self) -> Option<String> {
        match self {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }

    pub fn into_blob(self) -> Option<Vec<u8>> {
        match self {
            Value::Blob(b) => Some(b),
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.to_string())
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

/// The column types each database spells its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// `ddl` with its type placeholders replaced.
    pub fn ddl(self, ddl: &str) -> String {
        let (id, real, blob) = match self {
            Dialect::Sqlite => ("INTEGER PRIMARY KEY AUTOINCREMENT", "REAL", "BLOB"),
            Dialect::Postgres => ("BIGSERIAL PRIMARY KEY", "DOUBLE PRECISION", "BYTEA"),
        };
        ddl.replace("{id}", id)
            .replace("{real}", real)
            .replace("{blob}", blob)
    }
}

/// One connection to a store. Errors are the database's own words; the store adds which store.
pub trait Sql {
    fn dialect(&self) -> Dialect;
    /// Several statements without parameters (DDL).
    fn batch(&mut self, sql: &str) -> Result<(), String>;
    /// One statement; the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, String>;
    /// One query's rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, String>;
    /// Starts a transaction that will write, taking the write lock now: SQLite's `BEGIN
    /// IMMEDIATE`, so that two writers queue at the start instead of one failing at its first
    /// write; PostgreSQL's row locks need nothing more than `BEGIN`.
    fn begin_write(&mut self) -> Result<(), String>;
    /// Inside a write transaction, serialises schema changes between connections: SQLite's
    /// write lock does already; PostgreSQL takes a transaction-scoped advisory lock.
    fn lock_schema(&mut self) -> Result<(), String>;
    fn commit(&mut self) -> Result<(), String> {
        self.batch("COMMIT")
    }
    fn rollback(&mut self) -> Result<(), String> {
        self.batch("ROLLBACK")
    }
}

/// Runs `f` in a write transaction: committed when it returns `Ok`, rolled back otherwise.
pub fn in_write_transaction<T>(
    sql: &mut dyn Sql,
    f: impl FnOnce(&mut dyn Sql) -> Result<T, String>,
) -> Result<T, String> {
    sql.begin_write()?;
    match f(sql) {
        Ok(v) => {
            sql.commit()?;
            Ok(v)
        }
        Err(e) => {
            // The first error is the one to report; a failed rollback ends with the connection.
            let _ = sql.rollback();
            Err(e)
        }
    }
}
