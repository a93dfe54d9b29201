//! For tests of migrations: a store as an older arum wrote it.

use crate::location::Location;
use crate::record::Record;
use crate::schema;
use crate::sql::{in_write_transaction, Sql, Value};

/// Creates a store at `location` in schema version 1 holding `records`, written as version 1
/// wrote them (the report as JSON text).
pub fn version_1_store(location: &Location, records: &[Record]) -> Result<(), String> {
    let mut sql = crate::store::connect(location)?;
    schema::migrate_to(sql.as_mut(), 1).map_err(|e| format!("{e:?}"))?;
    in_write_transaction(sql.as_mut(), |sql| {
        for r in records {
            insert_v1(sql, r)?;
        }
        Ok(())
    })
}

fn insert_v1(sql: &mut dyn Sql, r: &Record) -> Result<(), String> {
    let m = &r.machine;
    let rows = sql.query(
        "INSERT INTO runs (batch, saved_unix_ns, started_unix_ns, host, cpu_key, cpu_name, \
         kernel, cpus, arum_version, command, commit_id, dirty, run_index, exit_status, report) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        &[
            "v1".into(),
            Value::Int(1),
            Value::Int(r.started_unix_ns as i64),
            m.host.as_str().into(),
            m.cpu_key.as_str().into(),
            m.cpu_name.as_str().into(),
            m.kernel.as_str().into(),
            Value::Int(m.cpus.into()),
            r.arum_version.as_str().into(),
            r.command.as_str().into(),
            r.commit
                .as_ref()
                .map_or(Value::Null, |c| c.id.as_str().into()),
            Value::Null,
            Value::Int(r.run_index as i64),
            Value::Int(r.exit_status.into()),
            r.report.as_str().into(),
        ],
    )?;
    let id = crate::store::returned_id(&rows)?;
    crate::store::insert_details(sql, id, r)
}

/// A PostgreSQL server of its own for a test: a cluster in a temporary directory, reached only
/// by a unix socket there (no TCP port), stopped when dropped. Started as the `postgres` user
/// when the test runs as root, which PostgreSQL refuses to run as.
pub struct PostgresServer {
    dir: std::path::PathBuf,
    bin: std::path::PathBuf,
    user: Option<String>,
    pub url: String,
}

impl PostgresServer {
    /// Starts a server in `dir` (which it takes over), or says why it cannot.
    pub fn start(dir: &std::path::Path) -> Result<PostgresServer, String> {
        let bin = postgres_bin().ok_or(
            "no PostgreSQL server binaries under /usr/lib/postgresql (Debian's postgresql package)",
        )?;
        let root = nix_is_root();
        let user = if root {
            Some("postgres".to_string())
        } else {
            None
        };
        if let Some(u) = &user {
            let status = std::process::Command::new("chown")
                .args(["-R", &format!("{u}:"), &dir.display().to_string()])
                .status()
                .map_err(|e| format!("chown: {e}"))?;
            if !status.success() {
                return Err(format!("cannot give {} to user {u}", dir.display()));
            }
        }
        let server = PostgresServer {
            dir: dir.to_path_buf(),
            bin,
            user,
            url: format!("postgresql:///postgres?host={}&user=arum", dir.display()),
        };
        let data = dir.join("data");
        server.run(
            "initdb",
            &[
                "-D",
                &data.display().to_string(),
                "-U",
                "arum",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        )?;
        let options = format!(
            "-k {} -h '' -c fsync=off -c max_connections=50",
            dir.display()
        );
        server.run(
            "pg_ctl",
            &[
                "-D",
                &data.display().to_string(),
                "-o",
                &options,
                "-l",
                &dir.join("log").display().to_string(),
                "-w",
                "-t",
                "60",
                "start",
            ],
        )?;
        Ok(server)
    }

    fn run(&self, tool: &str, args: &[&str]) -> Result<(), String> {
        let program = self.bin.join(tool);
        let mut c = match &self.user {
            Some(u) => {
                let mut c = std::process::Command::new("setpriv");
                c.args([
                    &format!("--reuid={u}"),
                    &format!("--regid={u}"),
                    "--init-groups",
                    "--",
                ])
                .arg(&program);
                c
            }
            None => std::process::Command::new(&program),
        };
        let out = c
            .args(args)
            .current_dir(&self.dir)
            .output()
            .map_err(|e| format!("{tool}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{tool} failed: {}{}",
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
            ))
        }
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        let data = self.dir.join("data").display().to_string();
        let _ = self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
    }
}

/// The newest installed server's binaries.
fn postgres_bin() -> Option<std::path::PathBuf> {
    let mut versions: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, b)| b)
}

fn nix_is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid() == 0
    })
}

/// Sets the schema version of the SQLite store at `path` (to test a store from a newer arum).
pub fn set_version(path: &std::path::Path, version: i64) -> Result<(), String> {
    let mut sql = crate::sqlite::Sqlite::open(path)?;
    in_write_transaction(&mut sql, |sql| {
        sql.execute("UPDATE arum_schema SET version = ?", &[Value::Int(version)])
            .map(drop)
    })
}
