//! The store's operations on a PostgreSQL server, through the synchronous `postgres` client
//! (no TLS: a shared store is reached over a unix socket or a trusted network, as the
//! connection string says).

use std::error::Error;

use postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use postgres::{Client, NoTls, Row};

use crate::sql::{Dialect, Sql, Value};

/// The advisory lock that serialises schema migrations between connections ("ARUM" in ASCII).
const SCHEMA_LOCK: i64 = 0x4152_554d;

pub struct Postgres {
    client: Client,
}

impl Postgres {
    pub fn open(url: &str) -> Result<Postgres, String> {
        let client = Client::connect(url, NoTls).map_err(|e| describe(&e))?;
        Ok(Postgres { client })
    }
}

/// The server's own message where there is one (the driver's summary alone says "db error").
fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => match e.source() {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}

/// `?` placeholders numbered as PostgreSQL writes them (`$1`, `$2`, ...). The store's
/// statements hold no `?` inside a literal.
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) if *ty == Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
            Value::Int(i) if *ty == Type::FLOAT8 => (*i as f64).to_sql(ty, out),
            Value::Int(i) => i.to_sql(ty, out),
            Value::Real(r) => r.to_sql(ty, out),
            Value::Text(t) => t.to_sql(ty, out),
            Value::Blob(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        // Each variant is checked by the type it delegates to.
        true
    }

    to_sql_checked!();
}

fn row_values(row: &Row) -> Result<Vec<Value>, String> {
    let get = |i: usize| -> Result<Value, postgres::Error> {
        let ty = row.columns()[i].type_();
        Ok(if *ty == Type::INT8 {
            row.try_get::<_, Option<i64>>(i)?
                .map_or(Value::Null, Value::Int)
        } else if *ty == Type::INT4 {
            row.try_get::<_, Option<i32>>(i)?
                .map_or(Value::Null, |v| Value::Int(v.into()))
        } else if *ty == Type::FLOAT8 {
            row.try_get::<_, Option<f64>>(i)?
                .map_or(Value::Null, Value::Real)
        } else if *ty == Type::BYTEA {
            row.try_get::<_, Option<Vec<u8>>>(i)?
                .map_or(Value::Null, Value::Blob)
        } else {
            row.try_get::<_, Option<String>>(i)?
                .map_or(Value::Null, Value::Text)
        })
    };
    (0..row.len())
        .map(|i| get(i).map_err(|e| describe(&e)))
        .collect()
}

fn params(values: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

impl Sql for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn batch(&mut self, sql: &str) -> Result<(), String> {
        self.client.batch_execute(sql).map_err(|e| describe(&e))
    }

    fn execute(&mut self, sql: &str, values: &[Value]) -> Result<u64, String> {
        self.client
            .execute(numbered(sql).as_str(), &params(values))
            .map_err(|e| describe(&e))
    }

    fn query(&mut self, sql: &str, values: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let rows = self
            .client
            .query(numbered(sql).as_str(), &params(values))
            .map_err(|e| describe(&e))?;
        rows.iter().map(row_values).collect()
    }

    fn begin_write(&mut self) -> Result<(), String> {
        self.batch("BEGIN")
    }

    fn lock_schema(&mut self) -> Result<(), String> {
        self.execute(
            "SELECT pg_advisory_xact_lock(?)",
            &[Value::Int(SCHEMA_LOCK)],
        )
        .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_in_order() {
        assert_eq!(
            numbered("INSERT INTO t (a, b) VALUES (?, ?)"),
            "INSERT INTO t (a, b) VALUES ($1, $2)"
        );
    }
}
