//! A real server under load: Debian's nginx (one process, a configuration of the test's own in a
//! temporary directory, a free port on 127.0.0.1, a static file) under `arum --syscalls -F
//! 'ngx_http_*' --task-begin accept4 --task-end close`, driven by wrk for a bounded time with
//! `Connection: close` (every request is a connection: a task from accept4 to close), stopped
//! with SIGTERM through arum. The report's calls must agree with wrk's completed requests, the
//! per-request hierarchy must be there, and the probe overhead is estimated.
//!
//! Needs nginx and wrk (scripts/deps.sh) and system call tracing (root); without them it says
//! which is missing and checks nothing more.

mod common;

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{arum, temp_dir, tracing_allowed, u64_at};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

const NGINX: &str = "/usr/sbin/nginx";
const CONNECTIONS: u64 = 4;
const FILE_BYTES: usize = 4096;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port on 127.0.0.1")
        .port()
}

fn config(dir: &Path, port: u16) -> String {
    let d = dir.display();
    format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log;\nevents {{ worker_connections 256; }}\n\
         http {{\n  access_log off;\n  sendfile on;\n  client_body_temp_path {d}/body;\n\
         proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n\
         scgi_temp_path {d}/scgi;\n  server {{ listen 127.0.0.1:{port}; root {d}/www; }}\n}}\n"
    )
}

/// Whether nginx exports its HTTP functions (Debian's binary is stripped of .symtab but keeps
/// them in .dynsym for modules): then -F can probe them.
fn exports_http_functions() -> bool {
    let out = Command::new("nm").args(["-D", NGINX]).output();
    match out {
        Ok(o) => String::from_utf8_lossy(&o.stdout).contains(" ngx_http_process_request"),
        Err(_) => false,
    }
}

fn call<'a>(json: &'a Value, name: &str) -> Option<&'a Value> {
    json["syscalls"]["calls"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)
}

/// Successful calls of `name` (0 when it was never called).
fn ok_calls(json: &Value, name: &str) -> u64 {
    call(json, name).map_or(0, |c| u64_at(c, "/calls") - u64_at(c, "/errors"))
}

#[test]
fn nginx_under_wrk_matches_the_completed_requests() {
    if !tools_installed() || !tracing_allowed() {
        return;
    }
    let dir = temp_dir();
    let port = free_port();
    let report = dir.path().join("report.json");
    let functions = exports_http_functions();
    if !functions {
        eprintln!("nginx exports no ngx_http_* functions here (or nm is missing): tasks are delimited by system calls only, no -F");
    }
    let mut server = serve(dir.path(), port, &report, functions);
    wait_until_listening(&mut server, dir.path(), port);
    let wrk = load(port);
    let said = String::from_utf8_lossy(&wrk.stdout).to_string();
    // arum forwards SIGTERM to nginx.
    let _ = kill(Pid::from_raw(server.id() as i32), Signal::SIGTERM);
    let out = server.wait_with_output().expect("arum ends");
    assert!(
        out.status.success() || out.status.code().is_some(),
        "{out:?}"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap_or_else(|e| {
            panic!("no report: {e}; {}", String::from_utf8_lossy(&out.stderr))
        }))
        .expect("JSON");
    let requests = completed_requests(&said);
    eprintln!(
        "wrk: {requests} requests; arum: {}",
        json["syscalls"]["records"]
    );
    calls_match_the_requests(&json, requests);
    a_task_per_request(&json, requests);
    probe_overhead(&json);
    if functions {
        functions_are_in_the_views(&json);
    }
}

/// Whether nginx and wrk are installed; says which is missing when not.
fn tools_installed() -> bool {
    let missing: Vec<&str> = [(NGINX, "nginx"), ("/usr/bin/wrk", "wrk")]
        .iter()
        .filter(|(p, _)| !Path::new(p).exists())
        .map(|(_, n)| *n)
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "{} not installed (scripts/deps.sh installs them): the server test cannot run",
            missing.join(" and ")
        );
    }
    missing.is_empty()
}

/// nginx serving a file of `FILE_BYTES` from `dir` on `port`, under `arum --syscalls` with the
/// tasks from accept4 to close (and `-F 'ngx_http_*'` when `functions`), its report to `report`.
fn serve(dir: &Path, port: u16, report: &Path, functions: bool) -> Child {
    let www = dir.join("www");
    std::fs::create_dir(&www).unwrap();
    std::fs::write(www.join("index.html"), vec![b'a'; FILE_BYTES]).unwrap();
    let conf = dir.join("nginx.conf");
    std::fs::write(&conf, config(dir, port)).unwrap();
    let mut cmd = arum();
    cmd.args([
        "--syscalls",
        "--task-begin",
        "accept4",
        "--task-end",
        "close",
    ]);
    if functions {
        cmd.args(["-F", "ngx_http_*"]);
    }
    cmd.args(["--format", "json", "-o"])
        .arg(report)
        .args(["--", NGINX, "-p"])
        .arg(dir)
        .arg("-c")
        .arg(&conf)
        .arg("-e")
        .arg(dir.join("error.log"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd.spawn().expect("arum starts nginx")
}

/// Waits (20 s at most) until nginx accepts; that connection is one accept more.
fn wait_until_listening(server: &mut Child, dir: &Path, port: u16) {
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20) && server.try_wait().unwrap().is_none(),
            "nginx did not listen on {port}: {}",
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// wrk for 2 s on `CONNECTIONS` connections, each request on a connection of its own.
fn load(port: u16) -> Output {
    let url = format!("http://127.0.0.1:{port}/index.html");
    Command::new("wrk")
        .args([
            "-t1",
            &format!("-c{CONNECTIONS}"),
            "-d2s",
            "-H",
            "Connection: close",
            &url,
        ])
        .output()
        .expect("wrk runs")
}

/// The requests wrk completed, from what it said; none may have failed.
fn completed_requests(said: &str) -> u64 {
    assert!(!said.contains("Non-2xx"), "{said}");
    let requests: u64 = said
        .lines()
        .find_map(|l| {
            l.trim()
                .split_once(" requests in")
                .map(|(n, _)| n.trim().parse().ok())
        })
        .flatten()
        .unwrap_or_else(|| panic!("wrk's completed requests in {said}"));
    assert!(requests > 0, "{said}");
    requests
}

/// What the counts may differ from the requests by: connections in flight when wrk stopped,
/// the readiness probe's, and lost records (as the kernel reported them, and as the views miss
/// them against the in-kernel counts: the reader keeps to its CPU budget, so under this load a
/// debug build's reader falls behind and a ring buffer fills).
fn slack(json: &Value) -> u64 {
    let missing = u64_at(&json["views"], "/missing_calls");
    CONNECTIONS + 2 + u64_at(&json["syscalls"], "/lost") + missing
}

/// Every request: a connection accepted, its request received, the response sent (headers by
/// writev, the file by sendfile), the connection closed.
fn calls_match_the_requests(json: &Value, requests: u64) {
    let s = &json["syscalls"];
    assert_eq!(s["off_reason"], Value::Null, "{s}");
    let lost = u64_at(s, "/lost");
    let slack = slack(json);
    let accepted = ok_calls(json, "accept4");
    assert!(
        accepted + lost >= requests && accepted <= requests + slack,
        "accept4 {accepted}, requests {requests}, lost {lost}"
    );
    let received = ok_calls(json, "recvfrom") + ok_calls(json, "read");
    assert!(
        received + lost >= requests,
        "received {received} < {requests}"
    );
    let sent = ok_calls(json, "sendfile");
    assert!(
        sent + lost >= requests && sent <= requests + slack,
        "sendfile {sent}"
    );
    assert!(ok_calls(json, "writev") + ok_calls(json, "write") + lost >= requests);
    let file_bytes = call(json, "sendfile").map_or(0, |c| u64_at(c, "/bytes"));
    assert!(
        file_bytes >= requests.saturating_sub(lost) * FILE_BYTES as u64,
        "{file_bytes}"
    );
    assert!(ok_calls(json, "close") + lost >= requests);
}

/// The calls of `name` counted in the kernel that are not in the views' table (no record).
fn unrecorded(json: &Value, name: &str) -> u64 {
    let in_views: u64 = json["views"]["table"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["probe"] == name)
        .map(|r| u64_at(r, "/calls"))
        .sum();
    call(json, name).map_or(0, |c| u64_at(c, "/calls").saturating_sub(in_views))
}

/// The per-request hierarchy: a task per connection, with its receive and send nested.
fn a_task_per_request(json: &Value, requests: u64) {
    let slack = slack(json);
    let t = &json["views"]["tasks"];
    assert_eq!(t["keyed_by"], "descriptor", "{t}");
    let tasks = u64_at(t, "/tasks");
    // A task needs its accept4 and its close: each of those without a record may cost one.
    let (accepts, closes) = (unrecorded(json, "accept4"), unrecorded(json, "close"));
    let missing = u64_at(&json["views"], "/missing_calls");
    eprintln!(
        "{tasks} tasks; calls without a record: {missing} (accept4 {accepts}, close {closes})"
    );
    assert!(accepts + closes <= missing, "{}", json["views"]);
    assert!(
        tasks + CONNECTIONS + 2 + accepts + closes >= requests && tasks <= requests + slack,
        "{tasks} tasks for {requests} requests"
    );
    let nested = |p: &str| {
        t["nested"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["probe"] == p)
            .unwrap_or_else(|| panic!("{p} is not nested in the tasks: {t}"))
    };
    assert!(u64_at(nested("sendfile"), "/tasks") + slack >= tasks);
    assert!(u64_at(nested("recvfrom"), "/tasks") + slack >= tasks);
    assert!(!t["slowest"].as_array().unwrap().is_empty());
    assert_eq!(
        json["views"]["overview"]["processes"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// The probe overhead, estimated from the calibrated cost of a traced call.
fn probe_overhead(json: &Value) {
    let s = &json["syscalls"];
    let cost = s["probe_cost_ns"].as_f64().expect("a calibrated cost");
    let overhead = u64_at(s, "/overhead_ns");
    let cpu = u64_at(json, "/usage/user_ns") + u64_at(json, "/usage/system_ns");
    assert!(cost > 0.0 && overhead > 0, "{s}");
    eprintln!(
        "probe overhead: {cost:.0} ns per traced call, {:.1} ms in all, {:.1}% of nginx's CPU time",
        overhead as f64 / 1e6,
        overhead as f64 * 100.0 / cpu.max(1) as f64
    );
}

/// The functions probed: ngx_http_process_request counted, and every paired call of each
/// function a probe event of the views.
fn functions_are_in_the_views(json: &Value) {
    let f = &json["functions"];
    if !f["off_reason"].is_null() {
        eprintln!("function timing is off: {}", f["off_reason"]);
        return;
    }
    let functions = f["functions"].as_array().unwrap();
    let request = functions
        .iter()
        .find(|x| x["name"] == "ngx_http_process_request")
        .expect("ngx_http_process_request was probed");
    // Counted, or estimated after its throttling (the estimate's accuracy is the
    // functions tests' concern). Under this load the budget may throttle it before one
    // of its calls is paired.
    assert!(u64_at(request, "/calls") > 0, "{request}");
    // Every paired call of a function is a probe event of the views, and nothing else
    // is: the views' rows (from the journal) against the functions' own histograms.
    let rows = json["views"]["table"].as_array().unwrap();
    let mut timed_somewhere = 0;
    for x in functions {
        let name = x["name"].as_str().unwrap();
        let timed = u64_at(x, "/timed_calls");
        let in_views: u64 = rows
            .iter()
            .filter(|r| r["probe"] == name)
            .map(|r| u64_at(r, "/calls"))
            .sum();
        assert_eq!(in_views, timed, "{name}: {x}");
        timed_somewhere += u64::from(timed > 0);
    }
    // Start-up's functions (variables, listeners) return before any throttling.
    assert!(timed_somewhere > 0, "no function was timed: {f}");
}
