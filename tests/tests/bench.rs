//! Repeated runs, their statistics and exports, `arum compare` and its gates, `arum merge`, and
//! the output names and rank information of parallel jobs (with the launchers' variables set by
//! the test; tests/tests/parallel.rs runs real mpirun and srun).

mod common;

use std::path::Path;
use std::process::Output;

use arum_core::series::result::RunSet;
use common::{arum, helper, temp_dir};
use serde_json::Value;

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "arum failed ({:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

fn read_runs(path: &Path) -> RunSet {
    let text = std::fs::read_to_string(path).expect("the series was exported");
    serde_json::from_str(&text).expect("the export parses as arum.runs/1")
}

/// The element of a JSON array of metrics whose `metric` is `name`.
fn named<'a>(metrics: &'a Value, name: &str) -> &'a Value {
    metrics
        .as_array()
        .expect("an array of metrics")
        .iter()
        .find(|m| m["metric"] == name)
        .unwrap_or_else(|| panic!("no {name} in {metrics}"))
}

fn metric<'a>(
    set: &'a RunSet,
    b: usize,
    name: &str,
) -> &'a arum_core::series::result::MetricSummary {
    set.benchmarks[b]
        .metrics
        .iter()
        .find(|m| m.metric == name)
        .unwrap_or_else(|| panic!("no {name} in benchmark {b}"))
}

#[test]
fn parameters_run_every_combination_and_substitute_in_command_and_env() {
    let dir = temp_dir();
    let log = dir.path().join("log");
    let json = dir.path().join("runs.json");
    let out = arum()
        .args([
            "-r", "2", "-w", "1", "-L", "mode", "a,b", "-P", "n", "1", "3",
        ])
        .args(["--env", "MODE_ENV=env-{mode}"])
        .arg("--export-json")
        .arg(&json)
        .args(["-o", "/dev/null", "--launch"])
        .arg(format!(
            "sh -c 'echo {{mode}} {{n}} $MODE_ENV $ARUM_RUN_INDEX >> {}'",
            log.display()
        ))
        .output()
        .unwrap();
    ok(&out);
    let lines = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<&str> = lines.lines().collect();
    // 2 × 3 combinations, each one warm-up run (index -1) and two measured runs (0, 1).
    assert_eq!(lines.len(), 18, "{lines:?}");
    lines.sort();
    lines.dedup();
    assert_eq!(
        lines.len(),
        18,
        "every run is a different combination and index"
    );
    for mode in ["a", "b"] {
        for n in 1..=3 {
            for index in [-1, 0, 1] {
                let want = format!("{mode} {n} env-{mode} {index}");
                assert!(
                    lines.contains(&want.as_str()),
                    "missing {want:?} in {lines:?}"
                );
            }
        }
    }
    let set = read_runs(&json);
    assert_eq!(set.benchmarks.len(), 6);
    let first = &set.benchmarks[0];
    assert_eq!(
        (
            first.parameters[0].value.as_str(),
            first.parameters[1].value.as_str()
        ),
        ("a", "1")
    );
    assert_eq!(first.env[0].value, "env-a");
    assert_eq!(first.runs.len(), 2);
    assert!(first.runs[0].report.command.argv[2].starts_with("echo a 1 "));
    assert_eq!(set.warmup_runs, 1);
    // Five comparisons against the first benchmark.
    assert_eq!(set.comparisons.len(), 5);
}

#[test]
fn an_unused_parameter_is_a_usage_error() {
    let out = arum()
        .args(["-L", "n", "1,2", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("parameter n is not used"));
}

#[test]
fn exports_parse_as_json_csv_and_markdown() {
    let dir = temp_dir();
    let (json, csv, md) = (
        dir.path().join("r.json"),
        dir.path().join("r.csv"),
        dir.path().join("r.md"),
    );
    let out = arum()
        .args(["-r", "3", "-o", "/dev/null", "--export-json"])
        .arg(&json)
        .arg("--export-csv")
        .arg(&csv)
        .arg("--export-markdown")
        .arg(&md)
        .args(["--", &helper("burn"), "0.02"])
        .output()
        .unwrap();
    ok(&out);
    let set = read_runs(&json);
    assert_eq!(set.schema, "arum.runs/1");
    assert_eq!(set.benchmarks[0].runs.len(), 3);
    for r in &set.benchmarks[0].runs {
        assert_eq!(r.report.schema, "arum.report/1");
    }
    let wall = metric(&set, 0, "usage.wall_ns");
    let walls: Vec<f64> = set.benchmarks[0]
        .runs
        .iter()
        .map(|r| r.report.usage.wall_ns as f64)
        .collect();
    assert_eq!(wall.stats.n, 3);
    assert!((wall.stats.mean - walls.iter().sum::<f64>() / 3.0).abs() < 1.0);
    let ci = wall.stats.ci.expect("three runs give an interval");
    assert!(ci.low <= wall.stats.mean && wall.stats.mean <= ci.high);
    assert_eq!(ci.level, 0.9);

    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = csv_text.lines();
    assert_eq!(
        rows.next().unwrap(),
        arum_core::series::export::csv::HEADER.join(",")
    );
    let wall_row = rows
        .find(|r| r.contains(",usage.wall_ns,"))
        .expect("a wall-time row");
    // command,parameters,metric,unit,n,mean,...: the same numbers as the JSON.
    let fields: Vec<&str> = wall_row.split(',').collect();
    assert_eq!(
        fields.len(),
        arum_core::series::export::csv::HEADER.len(),
        "{wall_row}"
    );
    assert_eq!(
        (fields[2], fields[3], fields[4]),
        ("usage.wall_ns", "nanoseconds", "3")
    );
    let csv_mean: f64 = fields[5].parse().unwrap();
    assert!(
        (csv_mean - wall.stats.mean).abs() < 1e-6 * wall.stats.mean,
        "{wall_row}"
    );
    let md_text = std::fs::read_to_string(&md).unwrap();
    assert!(
        md_text.starts_with("| Command | Runs | Wall mean ± σ | 90% CI |"),
        "{md_text}"
    );
    assert!(md_text.contains("|:---|---:|"));
    assert!(md_text.contains("| usage.user_ns |"), "{md_text}");
}

#[test]
fn compare_flags_a_program_made_20_percent_slower_and_gates_on_it() {
    let dir = temp_dir();
    let base = dir.path().join("base.json");
    let new = dir.path().join("new.json");
    // burn spends a fixed amount of CPU time: 0.1 s, then 0.12 s (20% more work).
    for (file, secs) in [(&base, "0.1"), (&new, "0.12")] {
        let out = arum()
            .args(["-r", "8", "-o", "/dev/null", "--export-json"])
            .arg(file)
            .args(["--", &helper("burn"), secs])
            .output()
            .unwrap();
        ok(&out);
    }
    let out = arum()
        .args(["compare", "--format", "json", "--fail-if-worse", "user:10"])
        .arg(&base)
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "the gate fails: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let user = named(&c["metrics"], "usage.user_ns");
    assert_eq!(user["significant"], true, "{user}");
    assert_eq!(user["change"], "worse");
    let ratio = user["ratio"].as_f64().unwrap();
    assert!((1.1..1.3).contains(&ratio), "ratio {ratio}");
    assert_eq!(c["gates"][0]["failed"], true);

    // A 30% gate lets the same change through; text output marks the change.
    let out = arum()
        .args(["compare", "--fail-if-worse", "usage.user_ns:30"])
        .arg(&base)
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("worse *"), "{text}");
    assert!(text.contains("passed"), "{text}");
}

#[test]
fn two_identical_configurations_are_not_flagged() {
    let dir = temp_dir();
    let json = dir.path().join("same.json");
    let html = dir.path().join("same.html");
    let burn = helper("burn");
    // Interleaved (A B A B ...), so drift in the machine's load reaches both alike.
    let out = arum()
        .args(["-r", "8", "--compare", "-o", "/dev/null", "--export-json"])
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .args(["--", &burn, "0.1", ":::", &burn, "0.1"])
        .output()
        .unwrap();
    ok(&out);
    let out = arum()
        .args([
            "compare",
            "--format",
            "json",
            "--base-name",
            "1",
            "--new-name",
            "2",
        ])
        // CPU time, not wall time: the work is the same, the machine's load is not.
        .args(["--fail-if-worse", "user:5"])
        .arg(&json)
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let user = named(&c["metrics"], "usage.user_ns");
    let ratio = user["ratio"].as_f64().unwrap();
    assert!(
        (0.95..1.05).contains(&ratio),
        "the same work: ratio {ratio}"
    );
    // The series' own comparison is in the export too, over the headline metrics, each with
    // its p adjusted for the family; the HTML page gives each metric the verdict the text does.
    let set = read_runs(&json);
    assert_eq!(set.comparisons.len(), 1);
    let page = std::fs::read_to_string(&html).unwrap();
    let (_, compared) = page
        .split_once("Comparisons with the first benchmark")
        .expect("the page compares the two");
    for m in &set.comparisons[0].metrics {
        assert!(
            arum_core::report::metrics::headline(&m.metric),
            "{}",
            m.metric
        );
        let (p, q) = (m.p_value.unwrap(), m.p_adjusted.unwrap());
        assert!(q >= p && q <= 1.0, "{}: p {p}, adjusted {q}", m.metric);
        assert_eq!(m.significant, Some(q < 0.1));
        let row = compared
            .split("<tr>")
            .find(|r| r.contains(&format!(">{}<", m.metric)))
            .unwrap_or_else(|| panic!("no HTML row for {}", m.metric));
        let verdict = arum_core::series::compare::cells::verdict(m);
        assert!(row.contains(&format!(">{verdict}<")), "{verdict} in {row}");
    }
}

#[test]
fn levels_are_read_as_given_and_printed_as_given() {
    for (given, shown) in [
        ("99.9", "99.9% CI"),
        ("0.975", "97.5% CI"),
        ("80%", "80% CI"),
    ] {
        let out = arum()
            .args(["-r", "2", "--confidence", given, "--", "true"])
            .output()
            .unwrap();
        ok(&out);
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(text.contains(shown), "{given}: {text}");
    }
    // 1.5 could be 1.5% or 0.015: refused with both spellings.
    let out = arum()
        .args(["-r", "2", "--confidence", "1.5", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("1.5%") && text.contains("0.015"), "{text}");
}

#[test]
fn single_run_reports_compare_without_significance() {
    let dir = temp_dir();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for (file, secs) in [(&a, "0.05"), (&b, "0.1")] {
        let out = arum()
            .args(["--format", "json", "-o"])
            .arg(file)
            .args(["--", &helper("burn"), secs])
            .output()
            .unwrap();
        ok(&out);
    }
    let out = arum()
        .args(["compare", "--metric", "user", "--fail-if-worse", "user:20"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no significance"), "{text}");
    assert!(text.contains("usage.user_ns"), "{text}");
    assert!(
        !text.contains("usage.wall_ns"),
        "--metric limits the rows: {text}"
    );
    // Twice the work is beyond 20%: with single runs the change alone decides.
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("the change alone decides"), "{text}");
}

#[test]
fn a_failed_run_stops_the_series_unless_ignored() {
    let dir = temp_dir();
    let json = dir.path().join("f.json");
    let out = arum()
        .args(["-r", "3", "-o", "/dev/null", "--export-json"])
        .arg(&json)
        .args(["--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let set = read_runs(&json);
    assert_eq!(set.benchmarks[0].runs.len(), 1);
    assert!(set.stopped_early.unwrap().contains("exited with status 3"));

    let out = arum()
        .args(["-r", "3", "-i", "-o", "/dev/null", "--export-json"])
        .arg(&json)
        .args(["--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let set = read_runs(&json);
    let statuses: Vec<i32> = set.benchmarks[0]
        .runs
        .iter()
        .map(|r| r.exit_status)
        .collect();
    assert_eq!(statuses, [3, 3, 3]);
}

#[test]
fn setup_prepare_and_cleanup_run_in_order() {
    let dir = temp_dir();
    let log = dir.path().join("log");
    let l = log.display();
    let out = arum()
        .args(["-r", "2", "-o", "/dev/null"])
        .args(["--setup", &format!("echo setup >> {l}")])
        .args(["--prepare", &format!("echo prepare >> {l}")])
        .args(["--cleanup", &format!("echo cleanup >> {l}")])
        .args(["--", "sh", "-c", &format!("echo run >> {l}")])
        .output()
        .unwrap();
    ok(&out);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "setup\nprepare\nrun\nprepare\nrun\ncleanup\n"
    );
    // A failing --prepare stops arum with one line naming it; cleanup still runs.
    std::fs::remove_file(&log).unwrap();
    let out = arum()
        .args(["-r", "2", "-o", "/dev/null", "--prepare", "exit 9"])
        .args(["--cleanup", &format!("echo cleanup >> {l}")])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--prepare command \"exit 9\" exited with status 9"));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "cleanup\n");
}

#[test]
fn text_summary_names_outliers_and_comparisons() {
    let out = arum()
        .args([
            "-r",
            "3",
            "--launch",
            "sleep 0.01",
            "--launch",
            "sleep 0.03",
        ])
        .output()
        .unwrap();
    ok(&out);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("Benchmark 1: sleep 0.01"), "{text}");
    assert!(text.contains("Benchmark 2: sleep 0.03"), "{text}");
    assert!(text.contains("90% CI of the mean"), "{text}");
    assert!(text.contains("Comparison at 90% confidence"), "{text}");
}

/// The launchers' variables, as mpirun and srun set them, for arum started by hand.
fn as_rank(cmd: &mut std::process::Command, rank: u32) -> &mut std::process::Command {
    cmd.env("SLURM_PROCID", rank.to_string())
        .env("SLURM_NTASKS", "2")
        .env("SLURM_JOB_ID", "4711")
        .env_remove("OMPI_COMM_WORLD_RANK")
        .env_remove("PMIX_RANK")
        .env_remove("PMI_RANK")
}

#[test]
fn rank_reports_are_named_by_pattern_and_merge_into_rows_and_totals() {
    let dir = temp_dir();
    let pattern = dir.path().join("run-%r-%j.json");
    for (rank, secs) in [(0, "0.03"), (1, "0.09")] {
        let out = as_rank(&mut arum(), rank)
            .args(["--format", "json", "-o"])
            .arg(&pattern)
            .args(["--", &helper("burn"), secs])
            .output()
            .unwrap();
        ok(&out);
    }
    let files: Vec<_> = (0..2)
        .map(|r| dir.path().join(format!("run-{r}-4711.json")))
        .collect();
    let reports: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect();
    assert_eq!(reports[1]["rank"]["rank"], 1);
    assert_eq!(reports[1]["rank"]["size"], 2);
    assert_eq!(reports[1]["rank"]["job_id"], "4711");
    assert_eq!(reports[1]["rank"]["launcher"], "slurm");

    let out = arum()
        .args(["merge", "--format", "json"])
        .arg(&files[1])
        .arg(&files[0])
        .output()
        .unwrap();
    ok(&out);
    let m: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(m["schema"], "arum.merge/1");
    let ranks: Vec<u64> = m["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, [0, 1]);
    for field in ["wall_ns", "user_ns"] {
        let total = named(&m["metrics"], &format!("usage.{field}"))["total"]
            .as_f64()
            .unwrap();
        let sum: u64 = reports
            .iter()
            .map(|r| r["usage"][field].as_u64().unwrap())
            .sum();
        assert_eq!(total, sum as f64, "{field}");
    }
    // The slowest is the rank with the longer wall time (rank 1 burns three times the CPU, but
    // on a busy machine rank 0 may still have waited longer).
    let walls: Vec<u64> = reports
        .iter()
        .map(|r| r["usage"]["wall_ns"].as_u64().unwrap())
        .collect();
    let slowest = u64::from(walls[1] >= walls[0]);
    assert_eq!(m["slowest"]["rank"], slowest);
    assert_eq!(m["slowest"]["wall_ns"], walls[slowest as usize]);
    assert_eq!(m["job_id"], "4711");

    let out = arum().arg("merge").args(&files).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ARUM MERGE: 2 ranks of 2, job 4711, on 1 host"),
        "{text}"
    );
    assert!(text.contains(&format!("Slowest rank: {slowest}")), "{text}");
}

#[test]
fn merge_refuses_a_run_given_twice_and_names_failed_ranks() {
    let dir = temp_dir();
    let files: Vec<_> = (0..2)
        .map(|r| dir.path().join(format!("r{r}.json")))
        .collect();
    for (rank, code) in [(0, "0"), (1, "3")] {
        let out = as_rank(&mut arum(), rank)
            .args(["--format", "json", "-o"])
            .arg(&files[rank as usize])
            .args(["--", "sh", "-c", &format!("exit {code}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code.parse().unwrap()));
    }
    // One report twice, by name and as a copy: refused, naming both.
    let copy = dir.path().join("copy.json");
    std::fs::copy(&files[0], &copy).unwrap();
    for twice in [&files[0], &copy] {
        let out = arum()
            .arg("merge")
            .arg(&files[0])
            .arg(twice)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(125));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("the same run as") && err.contains("r0.json"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // The failed rank is named with how it ended.
    let out = arum()
        .args(["merge", "--format", "json"])
        .args(&files)
        .output()
        .unwrap();
    ok(&out);
    let m: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = m["notes"].to_string();
    assert!(
        notes.contains("rank 1 failed: exited with status 3"),
        "{notes}"
    );
    assert!(!notes.contains("rank 0 failed"), "{notes}");
}

#[test]
fn an_unknown_output_pattern_is_a_usage_error() {
    let out = arum()
        .args(["-o", "run-%q.json", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown pattern %q"));
}

#[test]
fn completions_man_page_and_version() {
    let out = arum().args(["completions", "bash"]).output().unwrap();
    ok(&out);
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(
        script.contains("_arum()") && script.contains("--export-json"),
        "{script:.300}"
    );
    let out = arum().arg("man").output().unwrap();
    ok(&out);
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains(".TH arum 1"), "{page:.300}");
    let out = arum().arg("--version").output().unwrap();
    ok(&out);
    let version = String::from_utf8_lossy(&out.stdout);
    // The commit this binary was built from, or a clear "commit unknown" without git.
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(h) => assert!(
            version.contains(&h[..7]) || version.contains('('),
            "{version}"
        ),
        None => assert!(version.contains("commit unknown"), "{version}"),
    }
}
