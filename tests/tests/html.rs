//! `--html FILE`: the page of a run and of a series of runs. Checked as text (a section for
//! every part of the JSON report written beside it, plots with drawn data, no network
//! references) and, with Debian's chromium, in a real browser: the DOM it builds (--dump-dom)
//! and what it draws (--screenshot, decoded: every plot's area holds coloured data).
//! Without chromium the test says so and checks the text alone.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::browser::{check_in_browser, chromium, dump_dom, has_data, svgs};
use common::{arum, helper, temp_dir, tracing_allowed};
use serde_json::Value;

/// Runs arum with `args`, writing `page.html` and `report.json` into `dir`.
fn run_page(dir: &Path, args: &[&str]) -> Output {
    arum()
        .arg("--html")
        .arg(dir.join("page.html"))
        .args(["--format", "json", "-o"])
        .arg(dir.join("report.json"))
        .args(args)
        .output()
        .expect("arum runs")
}

/// The page and the JSON report `run_page` wrote, and the page's path.
fn written(dir: &Path) -> (String, Value, PathBuf) {
    let page = dir.join("page.html");
    let html = std::fs::read_to_string(&page).expect("the page was written");
    let json = std::fs::read_to_string(dir.join("report.json")).expect("json written");
    let report = serde_json::from_str(&json).expect("the report is JSON");
    (html, report, page)
}

/// Runs arum with `args`, which must succeed; returns the page and the report.
fn page_and_json(dir: &Path, args: &[&str]) -> (String, Value, PathBuf) {
    let out = run_page(dir, args);
    assert!(
        out.status.success(),
        "arum failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    written(dir)
}

/// `arum html SAVED.json` to standard output.
fn saved_page(json: &Path) -> String {
    let out = arum().arg("html").arg(json).output().expect("arum runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The text of the section `id` (from its opening tag to the next top-level section).
fn section<'a>(html: &'a str, id: &str) -> Option<&'a str> {
    let start = html.find(&format!("<details class=\"section\" id=\"{id}\""))?;
    let rest = &html[start..];
    let end = rest[1..]
        .find("<details class=\"section\"")
        .map_or(rest.len(), |e| e + 1);
    Some(&rest[..end])
}

/// Nothing the page refers to is fetched from a network when it is viewed.
fn assert_self_contained(html: &str) {
    let lower = html.to_ascii_lowercase();
    for bad in [
        "src=\"http",
        "src='http",
        "href=\"http",
        "href='http",
        "href=\"//",
        "src=\"//",
        "url(http",
        "url(//",
        "@import",
        "<link",
        "<script src",
        "<iframe",
    ] {
        assert!(
            !lower.contains(bad),
            "the page refers to the network: {bad}"
        );
    }
}

/// Sections the report's JSON says the page must have, and whether each must hold a plot.
fn expected_sections(report: &Value) -> Vec<(&'static str, bool)> {
    let has = |p: &str| report.pointer(p).is_some_and(|v| !v.is_null());
    let len = |p: &str| {
        report
            .pointer(p)
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    };
    let mut want = vec![("usage", false), ("notes", false)];
    if has("/counters") {
        let counted = report["counters"]["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["status"] == "counted");
        want.push(("counters", counted));
    }
    if len("/counters/intervals") > 0 || len("/functions/intervals") > 0 {
        want.push(("intervals", true));
    }
    if has("/ambient") {
        want.push(("ambient", len("/ambient/samples") >= 3));
    }
    if has("/functions") {
        let timed = report["functions"]["functions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["timed_calls"].as_u64() > Some(0));
        want.push(("functions", timed));
    }
    if has("/tasks") {
        want.push(("tasks", false));
    }
    if has("/noise") {
        want.push(("noise", false));
    }
    if has("/syscalls") {
        // The bars of the time per call, when calls were traced.
        want.push(("syscalls", len("/syscalls/calls") > 0));
    }
    if has("/views") {
        // The rate over time, and the shares when a task ended.
        want.push(("views", len("/views/overview/rate") > 0));
    }
    want
}

fn check_page_text(html: &str, report: &Value) {
    assert!(html.starts_with("<!DOCTYPE html>"), "not a page");
    assert_self_contained(html);
    let all = [
        "usage",
        "counters",
        "intervals",
        "ambient",
        "functions",
        "tasks",
        "noise",
        "syscalls",
        "views",
        "notes",
    ];
    let want = expected_sections(report);
    for id in all {
        let expected = want.iter().find(|(w, _)| *w == id);
        let found = section(html, id);
        assert_eq!(
            found.is_some(),
            expected.is_some(),
            "section {id}: in the page {}, in the report {}",
            found.is_some(),
            expected.is_some()
        );
        if let (Some(text), Some((_, plotted))) = (found, expected) {
            if *plotted {
                let drawn = svgs(text);
                assert!(!drawn.is_empty(), "section {id} has no plot");
                assert!(
                    drawn.iter().all(|s| has_data(s)),
                    "a plot of section {id} is empty"
                );
                assert!(!text.contains("plot not drawn"), "section {id}: {text}");
            }
        }
    }
    // The values are the report's: every counted event's total and every function's name.
    if let Some(events) = report.pointer("/counters/events").and_then(Value::as_array) {
        let counters = section(html, "counters").unwrap();
        for e in events {
            // As the page writes counts: the software clocks' nanoseconds as times, other
            // counts grouped by thousands.
            let n = e["total_scaled"].as_u64().unwrap();
            let total = if matches!(e["name"].as_str(), Some("task-clock" | "cpu-clock")) {
                arum_units::Unit::Nanoseconds.format(n as f64)
            } else {
                arum_units::quantity::grouped(n)
            };
            assert!(
                counters.contains(&format!("<td>{total}</td>")),
                "event {} total {total} is not in the page",
                e["name"]
            );
        }
    }
    if let Some(fs) = report
        .pointer("/functions/functions")
        .and_then(Value::as_array)
    {
        let functions = section(html, "functions").unwrap();
        for f in fs {
            let name = f["name"].as_str().unwrap();
            assert!(
                functions.contains(name),
                "function {name} is not in the page"
            );
        }
    }
}

#[test]
fn a_run_page_has_every_section_of_the_report_drawn_in_a_browser() {
    let dir = temp_dir();
    let burn = helper("burn");
    let (html, report, page) = page_and_json(
        dir.path(),
        &[
            "-e",
            "task-clock,context-switches,page-faults",
            "-I",
            "50ms",
            "--ambient=20ms",
            "--per-task",
            "--",
            &burn,
            "0.3",
            "2",
        ],
    );
    check_page_text(&html, &report);
    assert_eq!(
        saved_page(&dir.path().join("report.json")),
        html,
        "`arum html` of the saved report differs from the run's page"
    );
    match chromium() {
        Some(c) => {
            check_in_browser(c, &html, &page, dir.path());
        }
        None => eprintln!(
            "chromium is not installed (scripts/deps.sh installs it): the page was checked as text only"
        ),
    }
}

#[test]
fn a_function_timing_page_has_its_table_and_quantile_plot() {
    let dir = temp_dir();
    let (html, report, page) = page_and_json(
        dir.path(),
        &[
            "--no-throttle",
            "-F",
            "rustfn::work::step",
            "--",
            &helper("rustfn"),
            "300",
        ],
    );
    assert!(report.get("functions").is_some(), "-F gave no section");
    check_page_text(&html, &report);
    if let Some(c) = chromium() {
        check_in_browser(c, &html, &page, dir.path());
    }
}

/// The system-call section and the ALMT views, from `syscall_mix` (N writes, reads and failed
/// opens in one loop) with a task from each write to the next open: the read is nested in it.
#[test]
fn a_syscalls_page_has_its_calls_and_the_almt_views_drawn_in_a_browser() {
    const N: u64 = 200;
    let dir = temp_dir();
    let n = N.to_string();
    let (html, report, page) = page_and_json(
        dir.path(),
        &[
            "--syscalls",
            "--task-begin",
            "write",
            "--task-end",
            "openat",
            "--",
            &helper("syscall_mix"),
            &n,
            "64",
        ],
    );
    check_page_text(&html, &report);
    assert_eq!(
        saved_page(&dir.path().join("report.json")),
        html,
        "`arum html` of the saved report differs from the run's page"
    );
    let calls = section(&html, "syscalls").expect("a syscalls section");
    if !tracing_allowed() {
        // The page says why, as the report does, and has nothing drawn for it.
        let why = report["syscalls"]["off_reason"].as_str().expect("a reason");
        assert!(calls.contains("No system call was traced"), "{calls}");
        assert!(!why.is_empty() && svgs(calls).is_empty(), "{calls}");
        if let Some(c) = chromium() {
            check_in_browser(c, &html, &page, dir.path());
        }
        return;
    }
    // Every traced call is a row with its count; the bars and the table are the report's.
    for c in report["syscalls"]["calls"].as_array().unwrap() {
        let row = format!(
            "<td class=\"l\">{}</td><td>{}</td><td>{}</td>",
            c["name"].as_str().unwrap(),
            c["category"].as_str().unwrap(),
            c["calls"]
        );
        assert!(calls.contains(&row), "no row {row}");
    }
    assert!(calls.contains(&format!(
        "<td class=\"l\">write</td><td>file</td><td>{N}</td>"
    )));
    assert!(calls.contains("ENOENT"), "the failed opens' errno");
    assert!(svgs(calls).len() == 1 && calls.contains("Total time per system call"));

    let views = section(&html, "views").expect("a views section");
    assert!(
        views.contains("System calls completed per second"),
        "the rate"
    );
    let t = &report["views"]["tasks"];
    assert_eq!(t["keyed_by"], "thread", "{t}");
    let tasks = t["tasks"].as_u64().unwrap();
    assert!(tasks >= N - 1, "a task per loop: {t}");
    // The hierarchy: the task, then the read nested in each, collapsible within it.
    let task = views
        .find(&format!("Tasks write → openat: {tasks} tasks"))
        .expect("the task's level");
    let read = views[task..]
        .find("<summary>read: ")
        .expect("read nested in the task")
        + task;
    assert!(
        views[..read].matches("<details").count() - views[..read].matches("</details>").count()
            >= 3,
        "section → task → nested probe"
    );
    assert!(views.contains("Share of the tasks"), "the percentage view");
    assert_eq!(svgs(views).len(), 2, "the rate and the shares");
    assert!(views.contains("<th>µs</th><th>TSC cycles</th>"));
    assert!(
        views.contains(&format!("<td>write</td><td>{N}</td>")),
        "the write row"
    );

    match chromium() {
        Some(c) => {
            let (dom, drawn) = check_in_browser(c, &html, &page, dir.path());
            assert_eq!(drawn, svgs(&html).len(), "every plot is on the screenshot");
            for id in ["syscalls", "views"] {
                assert!(dom.contains(&format!("id=\"{id}\"")), "{id} not in the DOM");
            }
            assert!(dom.contains("<summary>read: "), "the nested probe in the DOM");
        }
        None => eprintln!(
            "chromium is not installed (scripts/deps.sh installs it): the page was checked as text only"
        ),
    }
}

#[test]
fn a_series_page_has_summaries_distributions_sweep_and_comparisons() {
    let dir = temp_dir();
    let page = dir.path().join("runs.html");
    let burn = helper("burn");
    let out = arum()
        .args(["-r", "3", "-o", "/dev/null", "--html"])
        .arg(&page)
        .arg("--export-json")
        .arg(dir.path().join("runs.json"))
        .args(["-L", "t", "0.02,0.06", "-l"])
        .arg(format!("{burn} {{t}}"))
        .output()
        .expect("arum runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).expect("the page was written");
    assert_self_contained(&html);
    for id in [
        "benchmarks",
        "sweep",
        "distributions",
        "comparisons",
        "outliers",
    ] {
        assert!(section(&html, id).is_some(), "no {id} section");
    }
    // Three times the CPU time: wall time varies between the runs, so it has a histogram.
    let dist = section(&html, "distributions").unwrap();
    assert!(
        dist.contains("usage.wall_ns"),
        "wall time has no distribution"
    );
    assert!(
        svgs(dist).len() >= 2,
        "one histogram per benchmark at least"
    );
    assert!(svgs(dist).iter().all(|s| has_data(s)), "an empty histogram");
    let sweep = section(&html, "sweep").unwrap();
    assert!(
        svgs(sweep).iter().any(|s| s.contains("<polyline")),
        "no sweep line"
    );
    assert!(section(&html, "comparisons")
        .unwrap()
        .contains("usage.wall_ns"));
    if let Some(c) = chromium() {
        let dom = dump_dom(c, &page, &dir.path().join("chromium-profile"));
        assert_eq!(svgs(&dom).len(), svgs(&html).len(), "SVGs lost in the DOM");
        for id in ["benchmarks", "sweep", "distributions", "comparisons"] {
            assert!(dom.contains(&format!("id=\"{id}\"")), "{id} not in the DOM");
        }
    } else {
        eprintln!("chromium is not installed: the series page was checked as text only");
    }
}

#[test]
fn an_unwritable_page_stops_arum_before_the_program_runs() {
    let dir = temp_dir();
    let mark = dir.path().join("ran");
    let out = arum()
        .arg("--html")
        .arg(dir.path().join("missing").join("page.html"))
        .args(["-o", "/dev/null", "--", "touch"])
        .arg(&mark)
        .output()
        .expect("arum runs");
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert!(!mark.exists(), "the program ran");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("page.html"),
        "the message names the page: {err}"
    );
}

#[test]
fn a_noise_probe_page_has_its_table_per_cpu() {
    let dir = temp_dir();
    let out = run_page(dir.path(), &["--noise-probe", "--", &helper("burn"), "0.1"]);
    if out.status.code() == Some(125) {
        // The probe needs RDTSCP and CPUs it may pin to: a machine without says why, and the
        // page is then checked by the other tests.
        eprintln!(
            "the noise probe cannot run here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return;
    }
    assert!(out.status.success(), "{out:?}");
    let (html, report, _) = written(dir.path());
    check_page_text(&html, &report);
    let noise = section(&html, "noise").expect("a noise section");
    for cpu in report["noise"]["cpus"].as_array().unwrap() {
        assert!(
            noise.contains(&format!("<td class=\"l\">CPU {}</td>", cpu["cpu"])),
            "CPU {} has no row",
            cpu["cpu"]
        );
    }
}
