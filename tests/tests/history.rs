//! The run history end to end: `--save` on runs and series, `arum history` and its change
//! points, `compare history:...`, on SQLite and on a PostgreSQL server the test starts
//! (Debian's postgresql; without it the test says so and checks SQLite alone).

mod common;

use std::path::Path;
use std::process::Output;

use arum_history::testing::PostgresServer;
use common::browser::{check_in_browser, chromium, has_data, svgs};
use common::{arum, helper, temp_dir};
use serde_json::Value;

/// Peak memory of `touch $MIB 0` (MiB faulted in, then exit): a cost that steps by exactly as
/// much as the helper is told, whatever else the machine does, unlike its time. The size comes
/// through the environment, so the command, which names the series, is the same at every commit.
const BASE_MIB: &str = "30";
/// 10% more: 3 MiB over about 31-32 MiB of peak resident memory.
const STEPPED_MIB: &str = "33";

fn saved_run(store: &str, labels: &[&str], commit: &str, mib: &str) -> Output {
    let mut c = arum();
    c.arg(format!("--save={store}"));
    for l in labels {
        c.args(["--label", l]);
    }
    c.args([
        "--commit",
        commit,
        "-o",
        "/dev/null",
        "--env",
        &format!("MIB={mib}"),
        "--",
    ])
    .args(["sh", "-c", "exec \"$0\" \"$MIB\" 0"])
    .arg(helper("touch"));
    let out = c.output().expect("arum runs");
    assert!(
        out.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "saving said something: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn history(store: &str, args: &[&str]) -> Output {
    arum()
        .args(["history"])
        .args(args)
        .args(["--store", store])
        .output()
        .expect("arum history runs")
}

fn changes_json(store: &str, label: &str) -> (Value, i32) {
    let out = arum()
        .args([
            "history",
            "changes",
            "memory",
            "--format",
            "json",
            "--fail-if-worse",
        ])
        .args(["--store", store, "--label", label])
        .output()
        .expect("arum history changes runs");
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (json, out.status.code().unwrap())
}

/// 40 commits of a program whose peak memory steps up 10% at commit 21 give one change point,
/// between commits 20 and 21, worse, so the gate fails; 40 commits without a step give none
/// and the gate passes. Then the page of the same runs, in a browser.
#[test]
fn one_step_in_forty_commits_is_one_change_point_at_its_commit() {
    let dir = temp_dir();
    let store = dir.path().join("h.sqlite").display().to_string();
    for i in 1..=40 {
        let mib = if i <= 20 { BASE_MIB } else { STEPPED_MIB };
        saved_run(&store, &["bench=step"], &format!("c{i}"), mib);
        saved_run(&store, &["bench=flat"], &format!("c{i}"), BASE_MIB);
    }
    let (json, status) = changes_json(&store, "bench=step");
    let series = json["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{json:#}");
    assert_eq!(series[0]["commits"], 40);
    let changes = series[0]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "exactly one change point: {json:#}");
    let c = &changes[0];
    assert_eq!(c["commit"], "c21", "{c:#}");
    assert_eq!(c["before_commit"], "c20", "{c:#}");
    assert_eq!(c["position"], 21);
    let shift = c["relative_shift"].as_f64().unwrap();
    assert!(
        (0.07..0.12).contains(&shift),
        "a step of about 10%: {shift}"
    );
    assert_eq!(c["worse"], true);
    assert_eq!(status, 1, "the gate fails on a change for the worse");

    let (json, status) = changes_json(&store, "bench=flat");
    let changes = json["series"][0]["changes"].as_array().unwrap();
    assert!(changes.is_empty(), "no step, no change point: {json:#}");
    assert_eq!(status, 0);

    // The table: every run, in order, with its commit.
    let out = history(
        &store,
        &["--label", "bench=step", "-m", "memory", "--format", "csv"],
    );
    assert!(out.status.success());
    let csv = String::from_utf8(out.stdout).unwrap();
    let commits: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(8).unwrap())
        .collect();
    let expected: Vec<String> = (1..=40).map(|i| format!("c{i}")).collect();
    assert_eq!(commits, expected);

    // The page: a trend plot per series with data, and the change point's table.
    let page = dir.path().join("history.html");
    let out = history(
        &store,
        &["-m", "memory", "--html", &page.display().to_string()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let plots = svgs(&html);
    assert_eq!(plots.len(), 2, "one trend plot per series");
    assert!(plots.iter().all(|s| has_data(s)));
    assert!(
        html.contains("c20 → c21"),
        "the change point is on the page"
    );
    match chromium() {
        Some(c) => {
            let (_, drawn) = check_in_browser(c, &html, &page, dir.path());
            assert!(drawn >= 1, "a trend plot was drawn");
        }
        None => eprintln!("chromium is not installed (scripts/deps.sh installs it): the page was checked as text only"),
    }
}

/// 8 processes save 50 runs each into one store at the same time: all 400 are there.
fn eight_writers(store: &str) {
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let store = store.to_string();
            std::thread::spawn(move || {
                for i in 0..50 {
                    let out = arum()
                        .arg(format!("--save={store}"))
                        .args([
                            "--label",
                            &format!("writer={w}"),
                            "--commit",
                            &format!("{i}"),
                        ])
                        .args(["-o", "/dev/null", "--", "true"])
                        .output()
                        .expect("arum runs");
                    assert!(
                        out.status.success() && out.stderr.is_empty(),
                        "writer {w} run {i}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("a writer failed");
    }
    let out = history(store, &["--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 400, "every run was saved");
    let mut seen: Vec<(String, String)> = runs
        .iter()
        .map(|r| {
            (
                r["labels"]["writer"].as_str().unwrap().to_string(),
                r["commit"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 400, "each writer's each run once");
}

/// Eight processes whose saves create the same new store at once: each of 12 such stores ends
/// with all eight runs (creating the store is the one moment SQLite does not queue writers).
#[test]
fn writers_that_create_a_store_together_lose_nothing() {
    let dir = temp_dir();
    for round in 0..12 {
        let store = dir
            .path()
            .join(format!("new{round}.sqlite"))
            .display()
            .to_string();
        let children: Vec<_> = (0..8)
            .map(|_| {
                arum()
                    .arg(format!("--save={store}"))
                    .args(["-o", "/dev/null", "--", "true"])
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("arum starts")
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success() && out.stderr.is_empty(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let out = history(&store, &["--format", "json"]);
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["runs"].as_array().unwrap().len(), 8, "round {round}");
    }
}

#[test]
fn eight_concurrent_writers_lose_nothing_in_sqlite_or_postgresql() {
    let dir = temp_dir();
    eight_writers(&dir.path().join("h.sqlite").display().to_string());
    let pg = temp_dir();
    match PostgresServer::start(pg.path()) {
        Ok(server) => eight_writers(&server.url),
        Err(why) => eprintln!("PostgreSQL not checked: {why}"),
    }
}

/// A series saves every run with its parameters as labels; `compare history:...` takes the
/// last runs of a label as the baseline, as a saved series would be.
#[test]
fn a_series_is_saved_and_serves_as_a_baseline() {
    let dir = temp_dir();
    let store = dir.path().join("h.sqlite").display().to_string();
    let touch = helper("touch");
    let out = arum()
        .arg(format!("--save={store}"))
        .args(["--label", "bench=series", "--commit", "base"])
        .args(["-r", "3", "-L", "mib", "8,16", "-o", "/dev/null", "--"])
        .args([&touch, "{mib}", "0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = history(&store, &["--label", "mib=16", "--format", "json"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "three runs with mib=16: {json:#}");
    assert!(runs.iter().all(|r| r["labels"]["bench"] == "series"));
    let indexes: Vec<u64> = runs.iter().map(|r| r["index"].as_u64().unwrap()).collect();
    assert_eq!(indexes, [0, 1, 2]);

    let new = dir.path().join("new.json");
    let out = arum()
        .args(["--format", "json", "-o"])
        .arg(&new)
        .args(["--", &touch, "24", "0"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = arum()
        .args([
            "compare", "--store", &store, "--last", "3", "--format", "json", "-m", "memory",
        ])
        .args(["history:bench=series,mib=16"])
        .arg(&new)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cmp: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = cmp.to_string();
    assert!(text.contains("last 3 saved runs"), "{cmp:#}");
    assert!(text.contains("peak_rss_bytes"), "{cmp:#}");

    // Two series under one label cannot be one baseline.
    let out = arum()
        .args(["compare", "--store", &store, "history:bench=series"])
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("add a label that tells them apart"), "{err}");
}

/// A store that cannot be written costs a warning: the report is still written and arum
/// exits with the program's status.
#[test]
fn a_run_that_cannot_be_saved_still_reports_and_keeps_the_status() {
    let dir = temp_dir();
    let report = dir.path().join("r.json");
    let out = arum()
        .arg("--save=/proc/arum-no-such-dir/h.sqlite")
        .args(["--format", "json", "-o"])
        .arg(&report)
        .args(["--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: 1 run(s) not saved"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["exit"]["status"], 3);
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// In a git work tree the commit is read (and whether tracked files changed; a file the
/// program wrote does not count), and saving writes nothing into the repository.
#[test]
fn the_commit_of_the_work_tree_is_saved_without_touching_the_repository() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("git is not installed: the commit detection is not checked");
        return;
    }
    let dir = temp_dir();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("src"), "1").unwrap();
    git(&repo, &["add", "src"]);
    git(&repo, &["commit", "-q", "-m", "one"]);
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let store = dir.path().join("h.sqlite").display().to_string();
    let save = |label: &str| {
        let out = arum()
            .current_dir(&repo)
            .args([
                &format!("--save={store}"),
                "--label",
                label,
                "-o",
                "/dev/null",
            ])
            .args(["--", "sh", "-c", "echo out > untracked"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let snapshot = || -> Vec<(String, std::time::SystemTime, u64)> {
        let mut v: Vec<_> = walk(&repo.join(".git"))
            .into_iter()
            .map(|p| {
                let m = std::fs::metadata(&p).unwrap();
                (p.display().to_string(), m.modified().unwrap(), m.len())
            })
            .collect();
        v.sort();
        v
    };
    let before = snapshot();
    save("tree=clean");
    assert_eq!(snapshot(), before, "saving wrote into .git");
    std::fs::write(repo.join("src"), "2").unwrap();
    save("tree=changed");
    let out = history(&store, &["--format", "json"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs[0]["commit"], head.as_str());
    assert_eq!(runs[0]["dirty"], false, "an untracked file is not a change");
    assert_eq!(runs[1]["commit"], head.as_str());
    assert_eq!(runs[1]["dirty"], true);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn history_options_without_save_and_bad_labels_are_refused_in_one_line() {
    for (args, says) in [
        (&["--label", "a=b", "--", "true"][..], "add --save"),
        (
            &["--save=/tmp/x.sqlite", "--label", "nokey", "--", "true"][..],
            "KEY=VALUE",
        ),
        (
            &[
                "--save=/tmp/x.sqlite",
                "--label",
                "a=1",
                "--label",
                "a=2",
                "--",
                "true",
            ][..],
            "twice",
        ),
    ] {
        let out = arum().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let dir = temp_dir();
    let missing = dir.path().join("none.sqlite").display().to_string();
    let out = history(&missing, &[]);
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run was saved there yet"));
    assert!(!Path::new(&missing).exists());
}
