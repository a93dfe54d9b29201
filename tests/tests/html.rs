//! `--html FILE`: the page of a run and of a series of runs. Checked as text (a section for
//! every part of the JSON report written beside it, plots with drawn data, no network
//! references) and, with Debian's chromium, in a real browser: the DOM it builds (--dump-dom)
//! and what it draws (--screenshot, decoded: every plot's area holds coloured data).
//! Without chromium the test says so and checks the text alone.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// Each `<svg>…</svg>` of `html`.
fn svgs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(s) = rest.find("<svg") {
        let e = rest[s..].find("</svg>").map_or(rest.len(), |e| s + e + 6);
        out.push(&rest[s..e]);
        rest = &rest[e..];
    }
    out
}

/// A plot with data: plotted lines, or filled bars and cells beyond the white ground.
fn has_data(svg: &str) -> bool {
    svg.contains("<polyline") || svg.matches("<rect").count() > 2
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

/// Debian's headless chromium, when installed.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Chromium with the flags of a headless check, bounded to two minutes (coreutils' timeout).
fn browser(chromium: &str, profile: &Path) -> Command {
    let mut c = Command::new("timeout");
    c.args(["120", chromium]);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-dev-shm-usage",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// Where the browser put each plot (CSS pixels, from the page's top) and how tall the page is,
/// measured by a script added to a copy of the page; the copy is what is drawn.
struct Layout {
    plots: Vec<[f64; 4]>,
    height: u32,
}

const MEASURE: &str = "<script>(function(){var r=[];\
document.querySelectorAll('div.plot > svg').forEach(function(s){\
var b=s.getBoundingClientRect();if(b.width>0&&b.height>0)\
r.push([b.left+scrollX,b.top+scrollY,b.width,b.height].map(Math.round).join(','));});\
var p=document.createElement('pre');p.id='arum-layout';\
p.textContent=document.documentElement.scrollHeight+';'+r.join(';');\
document.body.appendChild(p);})();</script>";

const WIDTH: u32 = 1280;

fn dump_dom(chromium: &str, page: &Path, profile: &Path) -> String {
    // The width the screenshot is taken at, so the layout measured is the one drawn.
    let out = browser(chromium, profile)
        .arg(format!("--window-size={WIDTH},1000"))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium --dump-dom failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn layout(dom: &str) -> Layout {
    let start = dom
        .find("<pre id=\"arum-layout\">")
        .expect("the layout script ran")
        + 22;
    let text = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let mut parts = text.split(';');
    let height = parts.next().unwrap().parse().expect("page height");
    // A page without plots leaves one empty part after the height.
    let plots = parts
        .filter(|p| !p.is_empty())
        .map(|p| {
            let v: Vec<f64> = p.split(',').map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect();
    Layout { plots, height }
}

struct Image {
    width: usize,
    height: usize,
    rgba: Vec<u8>,
}

fn decode(path: &Path) -> Image {
    let file = std::fs::File::open(path).expect("screenshot written");
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    let rgba = buf[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|p| match channels {
            3 => [p[0], p[1], p[2], 255],
            4 => [p[0], p[1], p[2], p[3]],
            _ => [p[0], p[0], p[0], 255],
        })
        .collect();
    Image {
        width: info.width as usize,
        height: info.height as usize,
        rgba,
    }
}

/// Pixels of the rectangle that carry colour (plotted data: lines, bars, cells), against the
/// black, grey and white of axes, text and ground.
fn coloured_pixels(img: &Image, r: [f64; 4]) -> usize {
    let (x0, y0) = (r[0] as usize, r[1] as usize);
    let (x1, y1) = (
        ((r[0] + r[2]) as usize).min(img.width),
        ((r[1] + r[3]) as usize).min(img.height),
    );
    let mut n = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            let p = &img.rgba[(y * img.width + x) * 4..][..3];
            let hi = p.iter().max().unwrap();
            let lo = p.iter().min().unwrap();
            if hi - lo > 60 {
                n += 1;
            }
        }
    }
    n
}

/// In the browser: the same sections and plots in the DOM as in the file, and every plot on
/// the screen with data drawn in it. Returns the DOM and how many plots were on the screenshot.
fn check_in_browser(chromium: &str, html: &str, page: &Path, dir: &Path) -> (String, usize) {
    let profile = dir.join("chromium-profile");
    let dom = dump_dom(chromium, page, &profile);
    let ids: Vec<&str> = html
        .match_indices("<details class=\"section\" id=\"")
        .map(|(i, m)| {
            let s = i + m.len();
            &html[s..s + html[s..].find('"').unwrap()]
        })
        .collect();
    for id in &ids {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "section {id} is not in the browser's DOM"
        );
    }
    let in_file = svgs(html);
    let in_dom = svgs(&dom);
    assert_eq!(
        in_dom.len(),
        in_file.len(),
        "the browser built another number of SVG elements"
    );
    assert!(in_dom.iter().all(|s| has_data(s)), "an SVG lost its data");

    let measured = dir.join("measured.html");
    std::fs::write(
        &measured,
        html.replace("</body>", &format!("{MEASURE}</body>")),
    )
    .unwrap();
    let at = layout(&dump_dom(chromium, &measured, &profile));
    let open_plots = html.matches("<div class=\"plot\">").count()
        - html
            .split("<details class=\"item\">")
            .skip(1)
            .map(|s| {
                s[..s.find("</details>").unwrap()]
                    .matches("<div class=\"plot\">")
                    .count()
            })
            .sum::<usize>();
    assert_eq!(
        at.plots.len(),
        open_plots,
        "every plot of an open section is laid out with a size"
    );
    let height = at.height.min(16000);
    let shot = dir.join("page.png");
    let out = browser(chromium, &profile)
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size={WIDTH},{height}"))
        .arg(format!("file://{}", measured.display()))
        .output()
        .expect("chromium runs");
    assert!(out.status.success(), "chromium --screenshot failed");
    let img = decode(&shot);
    assert_eq!(img.width, WIDTH as usize, "screenshot width");
    let mut drawn = 0;
    for r in at.plots.iter().filter(|r| r[1] + r[3] <= img.height as f64) {
        let n = coloured_pixels(&img, *r);
        eprintln!("plot at {r:?}: {n} coloured pixels");
        assert!(
            n >= 300,
            "the plot at {r:?} is blank on the screen ({n} coloured pixels)"
        );
        drawn += 1;
    }
    assert!(
        drawn > 0 || at.plots.is_empty(),
        "none of the {} plots was on the screenshot",
        at.plots.len()
    );
    // The check can fail: the page's top (title, lead, the first table) has no colour.
    assert!(
        coloured_pixels(&img, [0.0, 0.0, 1280.0, 40.0]) < 50,
        "colour where no plot is: the measure does not tell plots from the page"
    );
    eprintln!(
        "browser: {} sections, {} plots drawn, page {} px high",
        ids.len(),
        drawn,
        at.height
    );
    (dom, drawn)
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
