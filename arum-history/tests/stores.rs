//! The store on both databases: what is saved is read back, filters select, concurrent writers
//! lose nothing, an older schema is migrated and a newer one refused. The PostgreSQL half runs
//! against a server the test starts (Debian's postgresql); without one it says so and the
//! SQLite half still runs.

use std::sync::Arc;

use arum_history::testing::{version_1_store, PostgresServer};
use arum_history::{Commit, Filter, HistoryError, Location, Machine, Record, Store};

fn record(command: &str, commit: &str, labels: &[(&str, &str)], wall: f64) -> Record {
    Record {
        started_unix_ns: 1_700_000_000_000_000_000,
        machine: Machine {
            host: "h".into(),
            cpu_key: "GenuineIntel-6-55".into(),
            cpu_name: "Xeon".into(),
            kernel: "6.1.0".into(),
            cpus: 2,
        },
        arum_version: "0.1.0".into(),
        command: command.into(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        commit: Some(Commit {
            id: commit.into(),
            dirty: Some(false),
        }),
        run_index: 0,
        exit_status: 0,
        metrics: vec![
            ("usage.wall_ns".into(), wall),
            ("usage.user_ns".into(), wall / 2.0),
        ],
        report: format!(
            "{{\"schema\":\"arum.report/1\",\"wall\":{wall},\"pad\":\"{}\"}}",
            "x".repeat(2000)
        ),
    }
}

/// Each test on SQLite, then on a PostgreSQL server of its own when one can start.
fn on_each_store(test: impl Fn(&Location)) {
    let dir = tempfile::tempdir().unwrap();
    test(&Location::Sqlite(dir.path().join("h.sqlite")));
    let pg_dir = tempfile::tempdir().unwrap();
    match PostgresServer::start(pg_dir.path()) {
        Ok(server) => {
            eprintln!("PostgreSQL half on {}", server.url);
            test(&Location::Postgres(server.url.clone()))
        }
        Err(why) => eprintln!("PostgreSQL half not run: {why}"),
    }
}

#[test]
fn what_is_saved_is_read_back_and_filters_select() {
    on_each_store(|loc| {
        let mut store = Store::open(loc).unwrap();
        let a: Vec<Record> = (0..5)
            .map(|i| record("./a", &format!("c{i}"), &[("bench", "a")], 100.0 + i as f64))
            .collect();
        let ids = store.save(&a).unwrap();
        assert_eq!(ids.len(), 5);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        store
            .save(&[record("./b", "c9", &[("bench", "b"), ("os", "x")], 7.0)])
            .unwrap();
        let all = store.runs(&Filter::default()).unwrap();
        assert_eq!(all.len(), 6);
        assert!(all.iter().all(|r| r.metrics.is_empty()), "no metric asked");
        let only_a = store
            .runs(&Filter {
                labels: vec![("bench".into(), "a".into())],
                metrics: vec!["usage.wall_ns".into()],
                ..Filter::default()
            })
            .unwrap();
        let walls: Vec<f64> = only_a
            .iter()
            .filter_map(|r| r.metric("usage.wall_ns"))
            .collect();
        assert_eq!(walls, [100.0, 101.0, 102.0, 103.0, 104.0]);
        assert_eq!(only_a[2].commit.as_ref().unwrap().id, "c2");
        assert_eq!(only_a[2].commit.as_ref().unwrap().dirty, Some(false));
        assert_eq!(only_a[0].labels, [("bench".to_string(), "a".to_string())]);
        let range = store
            .runs(&Filter {
                labels: vec![("bench".into(), "a".into())],
                since: Some("c1".into()),
                until: Some("c3".into()),
                ..Filter::default()
            })
            .unwrap();
        let commits: Vec<&str> = range
            .iter()
            .map(|r| r.commit.as_ref().unwrap().id.as_str())
            .collect();
        assert_eq!(commits, ["c1", "c2", "c3"]);
        let last = store
            .runs(&Filter {
                last: Some(2),
                command: Some("./a".into()),
                ..Filter::default()
            })
            .unwrap();
        assert_eq!(last.len(), 2);
        assert_eq!(last[1].commit.as_ref().unwrap().id, "c4");
        let b = &all[5];
        assert_eq!(b.label("os"), Some("x"));
        assert_eq!(
            store.report(b.id).unwrap(),
            record("./b", "c9", &[], 7.0).report
        );
        assert_eq!(
            store.metric_names().unwrap(),
            ["usage.user_ns", "usage.wall_ns"]
        );
        let missing = store.runs(&Filter {
            since: Some("nope".into()),
            ..Filter::default()
        });
        assert!(
            matches!(missing, Err(HistoryError::Selection(_))),
            "{missing:?}"
        );
        let reversed = store.runs(&Filter {
            since: Some("c3".into()),
            until: Some("c1".into()),
            ..Filter::default()
        });
        let e = reversed.unwrap_err().to_string();
        assert!(e.contains("commit c1 from commit c3 on"), "{e}");
    });
}

/// Eight threads, each with its own connection, create the store at once and save 50 batches:
/// every run is there, once, with its own values.
#[test]
fn concurrent_writers_lose_nothing() {
    on_each_store(|loc| {
        let loc = Arc::new(loc.clone());
        let writers: Vec<_> = (0..8)
            .map(|w| {
                let loc = Arc::clone(&loc);
                std::thread::spawn(move || {
                    let mut store = Store::open(&loc).unwrap();
                    for i in 0..50 {
                        let label = format!("w{w}");
                        store
                            .save(&[record(
                                "./c",
                                &format!("{i}"),
                                &[("writer", &label)],
                                (w * 1000 + i) as f64,
                            )])
                            .unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        let mut store = Store::open(&loc).unwrap();
        let runs = store
            .runs(&Filter {
                metrics: vec!["usage.wall_ns".into()],
                ..Filter::default()
            })
            .unwrap();
        assert_eq!(runs.len(), 400);
        let mut values: Vec<u64> = runs
            .iter()
            .map(|r| r.metric("usage.wall_ns").unwrap() as u64)
            .collect();
        values.sort_unstable();
        let expected: Vec<u64> = (0..8)
            .flat_map(|w| (0..50).map(move |i| w * 1000 + i))
            .collect();
        assert_eq!(values, expected);
    });
}

/// A store written in schema version 1 (reports as text) is brought to the current version on
/// opening, and reads back as it was written.
#[test]
fn an_older_store_is_migrated() {
    on_each_store(|loc| {
        let old: Vec<Record> = (0..3)
            .map(|i| record("./m", &format!("m{i}"), &[("bench", "m")], 50.0 + i as f64))
            .collect();
        version_1_store(loc, &old).unwrap();
        let mut store = Store::open(loc).unwrap();
        let runs = store
            .runs(&Filter {
                metrics: vec!["usage.wall_ns".into()],
                ..Filter::default()
            })
            .unwrap();
        assert_eq!(runs.len(), 3);
        for (run, r) in runs.iter().zip(&old) {
            assert_eq!(store.report(run.id).unwrap(), r.report);
            assert_eq!(run.metric("usage.wall_ns"), Some(r.metrics[0].1));
            assert_eq!(run.label("bench"), Some("m"));
        }
        // Opened again: already current, nothing to do, same runs.
        let mut again = Store::open(loc).unwrap();
        assert_eq!(again.runs(&Filter::default()).unwrap().len(), 3);
        again
            .save(&[record("./m", "m3", &[("bench", "m")], 53.0)])
            .unwrap();
        assert_eq!(again.runs(&Filter::default()).unwrap().len(), 4);
    });
}

#[test]
fn a_newer_store_is_refused_not_misread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let loc = Location::Sqlite(path.clone());
    Store::open(&loc).unwrap();
    arum_history::testing::set_version(&path, arum_history::SCHEMA_VERSION + 1).unwrap();
    match Store::open(&loc) {
        Err(HistoryError::Newer { found, known, .. }) => {
            assert_eq!(found, arum_history::SCHEMA_VERSION + 1);
            assert_eq!(known, arum_history::SCHEMA_VERSION);
        }
        other => panic!("a newer store was opened: {:?}", other.err()),
    }
}

#[test]
fn reading_a_store_that_was_never_written_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let loc = Location::Sqlite(dir.path().join("none.sqlite"));
    let e = Store::open_existing(&loc).err().unwrap().to_string();
    assert!(e.contains("no run was saved there yet"), "{e}");
    assert!(
        !dir.path().join("none.sqlite").exists(),
        "reading created nothing"
    );
}
