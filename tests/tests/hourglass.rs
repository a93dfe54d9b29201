//! `arum hourglass` on this machine, checked against what the kernel says and against the
//! peers (sysbench's yielding threads and rt-tests' `cyclictest`) run back to back on the
//! same CPU in the same test, with both figures printed (`cargo test -- --nocapture`).
//!
//! The machine is shared: each test measures the load it competes with (the kernel's own account
//! of the thread's CPU time, gaps outside Hourglass's control) and accounts for it. Every run is
//! bounded by a watchdog that kills it, and real-time threads additionally by the kernel
//! (arum hourglass sets RLIMIT_RTTIME to the run's length plus 2 s). A test that cannot run here
//! (not root, a peer missing) says why and tests what it can.

mod common;

use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{arum, helper, temp_dir};
use serde_json::Value;

/// These tests time the machine: one at a time.
static MACHINE: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    MACHINE.lock().unwrap_or_else(|e| e.into_inner())
}

fn root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The CPUs this process may use.
fn cpus() -> Vec<usize> {
    arum_camp::cpus()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c as usize)
        .collect()
}

/// The CPU the tests load: the last one.
fn test_cpu() -> String {
    cpus().last().copied().unwrap_or(0).to_string()
}

struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` with its output in files, killing it if it outlives `limit` (the watchdog: a
/// failure can never leave a real-time thread spinning).
fn bounded(cmd: &mut Command, limit: Duration) -> Ran {
    let dir = temp_dir();
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = cmd
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("watchdog: {cmd:?} ran longer than {limit:?} and was killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ran {
        status,
        stdout: std::fs::read_to_string(&out).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err).unwrap_or_default(),
    }
}

/// `arum hourglass ARGS --format json`, its document.
fn hourglass(args: &[&str], seconds: u64) -> Value {
    let dir = temp_dir();
    let path = dir.path().join("hourglass.json");
    let ran = bounded(
        arum()
            .arg("hourglass")
            .args(args)
            .args(["--format", "json", "-o"])
            .arg(&path),
        // The analysis after the run: the debug build takes about 3 s per 1.5 s of a thread's
        // gaps where a guest's exits flood them (5,500 gaps), and a noisy host multiplies the
        // gaps; a run of 3 s went past 33 s in CI. Only a hang should reach the watchdog.
        Duration::from_secs(seconds + 120),
    );
    assert!(
        ran.status.success(),
        "arum hourglass {args:?}: {}",
        ran.stderr
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn f(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{pointer} missing in the hourglass document"))
}

fn us(ns: f64) -> String {
    format!("{:.2} µs", ns / 1e3)
}

/// A switch kind's gaps from the analysis.
fn switches<'a>(r: &'a Value, kind: &str) -> Option<&'a Value> {
    r["analysis"]["switches"]
        .as_array()?
        .iter()
        .find(|s| s["kind"] == kind)
}

/// Gaps of thread 0 in which no task ran, longer than `ns`, summed (ns).
fn stalls_over(r: &Value, ns: f64) -> f64 {
    gaps_between(r, ns, f64::INFINITY)
}

/// Gaps of thread 0 in which no task ran, longer than `lo` ns and at most `hi`, summed (ns).
fn gaps_between(r: &Value, lo: f64, hi: f64) -> f64 {
    let hz = f(r, "/run/timebase/hz");
    let mut ivs: Vec<&Value> = r["run"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kind"] == "interval" && x["thread"] == 0)
        .collect();
    ivs.sort_by(|a, b| f(a, "/start").total_cmp(&f(b, "/start")));
    ivs.windows(2)
        .filter(|w| w[0]["ended"]["gap"]["switched"] == false)
        .map(|w| (f(w[1], "/start") - f(w[0], "/end")) / hz * 1e9)
        .filter(|&g| g > lo && g <= hi)
        .fold(0.0, |a, g| a + g)
}

#[test]
fn a_cpu_thread_covers_its_cpu_and_sees_the_kernels_tick() {
    let _one = one_at_a_time();
    let cpu = test_cpu();
    let r = hourglass(&["-n", "1", "-d", "3s", "-A", &cpu], 3);
    let s = &r["analysis"]["shares"][0];
    let (received, window, kernel) = (
        f(s, "/received_ns"),
        f(s, "/window_ns"),
        f(s, "/kernel_cpu_ns"),
    );
    // This machine is shared and virtual: take out of the run what other tasks had (the gaps
    // in which the thread's context-switch count rose; the kernel's own accounting is printed
    // beside) and what the hypervisor took (gaps with no task over 1 ms: no interrupt handler
    // on an idle CPU runs that long). On an idle bare-metal CPU both are zero.
    let tasks = r["analysis"]["own_gaps"][0]["other_tasks"]["total_ns"]
        .as_f64()
        .unwrap_or(0.0);
    let stalls = stalls_over(&r, 1e6);
    let available = window - tasks - stalls;
    println!(
        "idle CPU {cpu}: intervals cover {:.2}% of the run; other tasks had {:.1}% of it \
         (the kernel's account: {:.1}%), hypervisor stalls {:.2}%; intervals cover {:.2}% of \
         the rest",
        received / window * 100.0,
        tasks / window * 100.0,
        (window - kernel) / window * 100.0,
        stalls / window * 100.0,
        received / available * 100.0
    );
    assert!(
        available >= 0.1 * window,
        "other tasks and the hypervisor left this CPU less than 10% of the run: too little to judge"
    );
    // The thread's own work (reading the clock, recording an interval) leaves gaps of at most
    // a few µs; an interrupt's gap is 1-5 µs on bare metal, and 30-130 µs on a VM whose exits
    // are slow (seen here: 250-330 a second, 3-4.5% of the CPU, while the host's short
    // preemptions, which the guest's steal time does not show, added 1-1.5% in gaps below
    // 10 µs). Where interrupts take over 2%, the 95% cannot tell the thread's cost from the
    // machine's, and the gaps below 10 µs are checked alone, at most 3% (0.2% on a quiet host).
    let interrupts = gaps_between(&r, 10e3, 1e6);
    let own = gaps_between(&r, 0.0, 10e3);
    println!(
        "gaps of 10 µs-1 ms (interrupts) {:.2}% of the rest, below 10 µs (the thread's own) {:.3}%",
        interrupts / available * 100.0,
        own / available * 100.0
    );
    if interrupts > 0.02 * available {
        println!(
            "interrupts take over 2% of this CPU: its coverage cannot be judged at 95% here; \
             checked instead: the gaps below 10 µs take at most 3%"
        );
        assert!(
            own <= 0.03 * available,
            "the gaps below 10 µs took more than 3% of the CPU the thread had"
        );
    } else {
        assert!(
            received / available >= 0.95,
            "gap detection and interrupts took more than 5% of the CPU the thread had"
        );
    }
    let t = &r["analysis"]["ticks"][0];
    println!("tick: {}", t["statement"]);
    // The kernel's own count of its timer interrupts on the CPU over the run (the report's):
    // the tick's, and every other timer's there. Where others fire often, their gaps can hide
    // the tick's period (seen here: sources at 275 and 360 per second and none at 250 on an
    // HZ=250 guest, with 300-375 interrupts a second); where there were fewer than HZ, the
    // report itself says the tick cannot be judged. And time the host took the CPU away
    // (steal) comes in preemptions whose gaps can bury the tick's.
    let of_cpu = |key: &str| {
        r["run"]["kernel"][key]
            .as_array()
            .and_then(|rates| {
                rates
                    .iter()
                    .find(|c| c[0] == cpu.parse::<u64>().unwrap_or(u64::MAX))
            })
            .and_then(|c| c[1].as_f64())
    };
    let (timer_hz, stolen) = (of_cpu("local_timer_hz"), of_cpu("stolen_ms").unwrap_or(0.0));
    let kernel_hz = t["kernel_hz"].as_f64();
    println!(
        "timer interrupts on CPU {cpu}: {timer_hz:?} a second (HZ={kernel_hz:?}); the host took \
         {stolen:.0} ms of it"
    );
    let others = matches!((timer_hz, kernel_hz), (Some(timer), Some(hz)) if timer > 1.1 * hz);
    if others || stolen >= 0.01 * window / 1e6 {
        println!(
            "{}: the tick's period cannot be judged here; checked instead: a periodic source \
             was found, or the tick's lattice",
            if others {
                "other timers fired on the CPU beside the tick"
            } else {
                "the host took over 1% of the CPU during the run"
            }
        );
        assert!(
            t["agrees"] == true || !t["sources_hz"].as_array().unwrap().is_empty(),
            "{t}"
        );
        return;
    }
    match t["agrees"].as_bool() {
        Some(agrees) => assert!(
            agrees,
            "the gaps disagree with the kernel's tick (timer interrupts: {timer_hz:?}/s)"
        ),
        None => {
            // Either the kernel's HZ is not readable here (no /proc/config.gz or
            // /boot/config-*), or the tick may ride on a faster source at a multiple of HZ (a
            // hypervisor's), or the CPU took fewer timer interrupts than HZ (the host delivered
            // the tick late): the statement above says which, and the period is reported, not
            // checked.
            println!("the tick cannot be checked against the kernel's HZ here; checked instead: a periodic source was found");
            assert!(!t["sources_hz"].as_array().unwrap().is_empty());
        }
    }
}

/// sysbench's yield, pinned to `cpu` at SCHED_FIFO 10 when root, in ns: two threads taking
/// turns by sched_yield, each with a mutex of its own, so a yield is one system call and one
/// switch, the operation Hourglass's yield gap spans. (perf's pipe pair blocks and wakes through
/// a pipe, which costs two more system calls and a wakeup per switch: 2-3 times the yield here.)
fn sysbench_per_yield(cpu: &str) -> Option<f64> {
    if !have("sysbench") {
        println!("sysbench is missing (scripts/deps.sh installs it)");
        return None;
    }
    let mut cmd = Command::new(if root() { "chrt" } else { "taskset" });
    if root() {
        cmd.args(["-f", "10", "taskset"]);
    }
    let yields = 100;
    cmd.args(["-c", cpu, "sysbench", "threads", "--threads=2"])
        .arg(format!("--thread-yields={yields}"))
        .args(["--thread-locks=2", "--time=2", "run"]);
    let ran = bounded(&mut cmd, Duration::from_secs(60));
    arum_calibrate::peers::sysbench_yield_ns(&ran.stdout, yields)
}

#[test]
fn two_threads_on_one_cpu_switch_about_as_fast_as_sysbench_threads_yield() {
    let _one = one_at_a_time();
    let cpu = test_cpu();
    // Two CPU threads: the scheduler preempts one for the other, each switch with a clock
    // interrupt in it (the paper's involuntary switches).
    let r = hourglass(&["-n", "2", "-d", "2s", "-a", "-A", &cpu, "-w", "CPU"], 2);
    let inv = switches(&r, "involuntary").expect("no context-switch gap between two CPU threads");
    println!(
        "two CPU threads on CPU {cpu}: {} involuntary switch gaps, shortest {}, main cluster median {}",
        inv["gaps"]["count"],
        us(f(inv, "/gaps/shortest_ns")),
        us(f(inv, "/gaps/cluster_median_ns"))
    );
    assert!(f(inv, "/gaps/count") >= 10.0);
    // Yielding threads switch directly, as sysbench's pair does: the figures to compare. At
    // SCHED_FIFO when root, so the machine's other tasks do not come in between.
    let prio = if root() { "RTLOW" } else { "NORMAL" };
    let r = hourglass(
        &[
            "-n",
            "2",
            "-d",
            "2s",
            "-a",
            "-A",
            &cpu,
            "-p",
            prio,
            "-w",
            "CPU_YIELD",
            "100us",
        ],
        2,
    );
    let y = switches(&r, "yield").expect("no switch gap between two yielding threads");
    let ours = f(y, "/gaps/cluster_median_ns");
    match sysbench_per_yield(&cpu) {
        Some(theirs) => {
            println!(
                "CPU {cpu} at {prio}: hourglass yield-switch gap median {} ({} gaps); sysbench threads {} per yield; ratio {:.2}",
                us(ours),
                y["gaps"]["count"],
                us(theirs),
                ours / theirs
            );
            assert!(
                ours / theirs <= 3.0 && theirs / ours <= 3.0,
                "more than a factor 3 apart"
            );
        }
        None => {
            println!(
                "no sysbench figure to compare: hourglass yield-switch gap median {}",
                us(ours)
            );
            assert!(ours < 1e6, "a switch took a millisecond");
        }
    }
}

/// cyclictest's median latency (µs) from its histogram, same CPU, same period, back to back.
fn cyclictest_median_us(cpu: &str, prio: &str) -> Option<f64> {
    if !have("cyclictest") {
        println!("cyclictest is missing (Debian's rt-tests; scripts/deps.sh installs it)");
        return None;
    }
    // As root cyclictest holds the CPUs' idle states shallow (/dev/cpu_dma_latency), and so
    // does arum hourglass; otherwise neither can, and --laptop says so to cyclictest.
    let mut args = vec![
        "-q", "-m", "-a", cpu, "-t", "1", "-p", prio, "-i", "1000", "-D", "3", "-h", "20000",
    ];
    if !root() {
        args.insert(0, "--laptop");
    }
    let ran = bounded(
        Command::new("cyclictest").args(&args),
        Duration::from_secs(30),
    );
    if !ran.status.success() {
        // As another user it cannot set even SCHED_OTHER explicitly on some versions.
        println!("cyclictest could not run here: {}", ran.stderr.trim());
        return None;
    }
    let mut hist: Vec<(f64, u64)> = ran
        .stdout
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
        })
        .collect();
    let overflow: u64 = ran
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("# Histogram Overflows:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    hist.push((f64::INFINITY, overflow));
    let total: u64 = hist.iter().map(|h| h.1).sum();
    let mut seen = 0;
    hist.into_iter().find_map(|(lat, n)| {
        seen += n;
        (seen * 2 >= total).then_some(lat)
    })
}

/// hourglass's LAT thread measures dispatch latency as cyclictest does (same CPU, priority,
/// period, memory locking and idle-state policy). The machine's own latency moves from minute
/// to minute, so cyclictest runs before and after hourglass, and hourglass's median must lie
/// within 1.5x of the band the two span (or 5 µs of it: a histogram bin is 1 µs).
#[test]
fn a_latency_thread_agrees_with_cyclictest() {
    let _one = one_at_a_time();
    let cpu = test_cpu();
    let (prio, ct_prio) = if root() {
        ("RTHIGH", "90")
    } else {
        println!("not root: both run at SCHED_OTHER (SCHED_FIFO needs CAP_SYS_NICE)");
        ("NORMAL", "0")
    };
    let before = cyclictest_median_us(&cpu, ct_prio);
    let r = hourglass(
        &[
            "-n", "1", "-d", "3s", "-A", &cpu, "-p", prio, "-w", "LAT", "1ms",
        ],
        3,
    );
    let after = cyclictest_median_us(&cpu, ct_prio);
    if root() {
        let notes = r["run"]["notes"].to_string();
        assert!(notes.contains("held shallow"), "{notes}");
    }
    let l = &r["analysis"]["latency"][0];
    let ours = f(l, "/lateness/median_ns") / 1e3;
    let samples = f(l, "/lateness/count");
    let table: Vec<String> = l["later_than"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!(">{} ms: {}", c["ms"], c["samples"]))
        .collect();
    assert!(samples > 1000.0, "{samples} wake-ups in 3 s at 1 ms");
    let (Some(a), Some(b)) = (before, after) else {
        println!("hourglass LAT median {ours:.1} µs; no cyclictest to compare");
        return;
    };
    let (lo, hi) = (a.min(b), a.max(b));
    println!(
        "CPU {cpu} at {prio}, 1 ms period: hourglass LAT median {ours:.1} µs ({samples} samples; {}); cyclictest median {a:.0} µs before, {b:.0} µs after",
        table.join(", ")
    );
    assert!(
        (lo / 1.5 - 5.0..=hi * 1.5 + 5.0).contains(&ours),
        "hourglass's median {ours:.1} µs is outside 1.5x of cyclictest's {lo:.0}..{hi:.0} µs"
    );
}

/// A job of thread 0: its deadline (s), whether it met it, what its period lost (ns) to things
/// no scheduling decision of this kernel's gave away for a thread above every other task: the
/// timer waking it late, and its own gaps in which no task ran (interrupts, and above all the
/// hypervisor not running the virtual CPU; a 100 ms stall shows here on a busy host), and the
/// time it was switched out inside its period (ns; another task ran: for a thread alone at a
/// real-time priority, only the kernel's own tasks above it).
/// A late wake is lost time from the moment the timer was due to the wake, counted in every
/// period it spans: a wake 7 ms late for a 5 ms period lands in the next period, and the next
/// job starts late too (such jobs were counted as servable, and missed, when only wakes inside
/// the period counted).
struct Job {
    deadline: f64,
    met: bool,
    lost_ns: f64,
    switched_out_ns: f64,
}

fn jobs(r: &Value) -> Vec<Job> {
    let tb = &r["run"]["timebase"];
    let (tsc0, hz) = (f(tb, "/tsc0"), f(tb, "/hz"));
    let secs = |v: &Value| (v.as_f64().unwrap() - tsc0) / hz;
    let recs = r["run"]["records"].as_array().unwrap();
    let mut ivs: Vec<(f64, f64, &Value)> = recs
        .iter()
        .filter(|x| x["kind"] == "interval" && x["thread"] == 0)
        .map(|x| (secs(&x["start"]), secs(&x["end"]), &x["ended"]))
        .collect();
    ivs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let gaps = |switched: bool| -> Vec<(f64, f64)> {
        ivs.windows(2)
            .filter(|w| w[0].2["gap"]["switched"] == switched)
            .map(|w| (w[0].1, w[1].0))
            .collect()
    };
    let late_wakes = recs
        .iter()
        .filter(|w| w["kind"] == "wake" && w["thread"] == 0)
        .map(|w| {
            let at = secs(&w["at"]);
            (at - f(w, "/lateness_ns") / 1e9, at)
        });
    let stalls: Vec<(f64, f64)> = gaps(false).into_iter().chain(late_wakes).collect();
    let switched_out = gaps(true);
    let within = |spans: &[(f64, f64)], rel: f64, dl: f64| -> f64 {
        spans
            .iter()
            .map(|&(a, b)| (b.min(dl) - a.max(rel)).max(0.0))
            .sum::<f64>()
            * 1e9
    };
    recs.iter()
        .filter(|x| x["kind"] == "job" && x["thread"] == 0)
        .map(|j| {
            let (rel, dl) = (secs(&j["release"]), secs(&j["deadline"]));
            Job {
                deadline: dl,
                met: j["finish"].as_f64() <= j["deadline"].as_f64(),
                lost_ns: within(&stalls, rel, dl),
                switched_out_ns: within(&switched_out, rel, dl),
            }
        })
        .collect()
}

/// The periodic thread alone on `cpu` at RTMED for 3 s: whether it met at least 99% of the
/// deadlines it could meet, after printing what it saw.
fn periodic_alone_meets_its_deadlines(cpu: &str) -> bool {
    let alone = hourglass(
        &[
            "-n", "1", "-d", "3s", "-A", cpu, "-p", "RTMED", "-w", "PERIODIC", "4ms", "5ms",
        ],
        3,
    );
    let j = jobs(&alone);
    let met = j.iter().filter(|j| j.met).count();
    // The slack: a period that lost more than 1 ms could not be served by any scheduler. A
    // tenth of it is kept for losses no record shows (interruptions shorter than the gap
    // threshold, the thread's own timer and bookkeeping): a job that lost 989 µs in
    // recorded gaps was seen to miss by 9 µs.
    let available: Vec<&Job> = j.iter().filter(|j| j.lost_ns <= 0.9e6).collect();
    let met_available = available.iter().filter(|j| j.met).count();
    println!(
        "PERIODIC 4ms/5ms alone at RTMED on CPU {cpu}: {met} of {} deadlines met ({:.2}%); \
         {} periods lost more than 0.9 ms of the 1 ms slack to timer lateness and gaps outside the \
         guest's scheduling (hypervisor, interrupts); of the others {met_available} of {} met ({:.2}%)",
        j.len(),
        met as f64 / j.len() as f64 * 100.0,
        j.len() - available.len(),
        available.len(),
        met_available as f64 / available.len().max(1) as f64 * 100.0
    );
    for m in available.iter().filter(|j| !j.met) {
        println!(
            "  missed at {:.4} s: {} lost, {} switched out",
            m.deadline,
            us(m.lost_ns),
            us(m.switched_out_ns)
        );
    }
    assert!(j.len() >= 550, "{} jobs in 3 s of 5 ms periods", j.len());
    assert!(
        available.len() >= j.len() / 2,
        "the machine took more than half the periods: nothing to judge"
    );
    met_available as f64 >= 0.99 * available.len() as f64
}

#[test]
fn a_periodic_thread_meets_its_deadlines_alone_and_misses_them_beside_a_fifo_hog() {
    let _one = one_at_a_time();
    let cpu = test_cpu();
    if !root() {
        println!("not root: SCHED_FIFO needs CAP_SYS_NICE; only the hog's effect is tested, at nice levels");
        let r = hourglass(
            &[
                "-n", "2", "-d", "3s", "-A", &cpu, "-t", "0", "-w", "PERIODIC", "4ms", "5ms", "-t",
                "1", "-w", "CPU", "-s", "1s", "-f", "2s",
            ],
            3,
        );
        let missed = jobs(&r).iter().filter(|j| !j.met).count();
        println!("beside a CPU hog at the same nice level: {missed} deadlines missed");
        assert!(missed > 0);
        return;
    }
    // Now and then a run has misses that no record explains (a CI run had 7 of 596, where 14
    // runs here had at most 2): a second run must then pass. Each such miss is printed with the
    // time the thread was switched out in its period, which tells the kernel's own tasks above
    // it from losses no record shows.
    if !periodic_alone_meets_its_deadlines(&cpu) {
        println!("fewer than 99% met: running it once more");
        assert!(
            periodic_alone_meets_its_deadlines(&cpu),
            "fewer than 99% of the deadlines it could meet were met, in two runs"
        );
    }

    // A SCHED_FIFO hog above it on the same CPU from 1 s to 2 s: bounded by -f, by the
    // kernel's RLIMIT_RTTIME, and by this test's watchdog.
    let hog = hourglass(
        &[
            "-n", "2", "-d", "3s", "-A", &cpu, "-t", "0", "-p", "RTMED", "-w", "PERIODIC", "4ms",
            "5ms", "-t", "1", "-p", "RTHIGH", "-w", "CPU", "-s", "1s", "-f", "2s",
        ],
        3,
    );
    let j = jobs(&hog);
    let in_hog = |d: f64| (1.0..=2.0).contains(&d);
    let missed_in = j.iter().filter(|j| !j.met && in_hog(j.deadline)).count();
    let due_in = j.iter().filter(|j| in_hog(j.deadline)).count();
    let missed = j.iter().filter(|j| !j.met).count();
    println!(
        "with an RTHIGH CPU hog from 1 s to 2 s: {missed} misses in all, {missed_in} of the {due_in} deadlines due while it ran"
    );
    // The hog leaves the periodic thread nothing, except what the kernel's real-time
    // throttling gives back to the rest of the CPU (at most 5%).
    assert!(
        missed_in as f64 >= 0.8 * due_in as f64 && due_in >= 150,
        "the hog's effect was not detected"
    );
}

/// A network namespace with its own loopback, removed when dropped.
struct Netns(String);

impl Netns {
    fn new() -> Option<Netns> {
        let name = format!("arum-hourglass-{}", std::process::id());
        let ok = |args: &[&str]| {
            Command::new("ip")
                .args(args)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if !ok(&["netns", "add", &name]) {
            return None;
        }
        let ns = Netns(name);
        ok(&["netns", "exec", &ns.0, "ip", "link", "set", "lo", "up"]).then_some(ns)
    }

    fn exec(&self) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0]);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// Interrupt gaps per second of the periodic thread, its deadlines met (%), and the run.
fn periodic_noise(cpu: &str) -> (f64, f64) {
    let prio = if root() { "RTMED" } else { "NORMAL" };
    let r = hourglass(
        &[
            "-n", "1", "-d", "2s", "-A", cpu, "-p", prio, "-w", "PERIODIC", "4ms", "5ms",
        ],
        2,
    );
    let g = &r["analysis"]["own_gaps"][0];
    let d = &r["analysis"]["deadlines"][0];
    (
        f(g, "/interrupts_per_second"),
        f(d, "/met") / f(d, "/jobs") * 100.0,
    )
}

#[test]
fn a_udp_flood_shows_as_extra_gaps_in_a_periodic_thread() {
    let _one = one_at_a_time();
    let cpu = test_cpu();
    let (quiet, quiet_met) = periodic_noise(&cpu);
    println!("PERIODIC 4ms/5ms on CPU {cpu} without a flood: {quiet:.0} interrupt gaps/s, {quiet_met:.1}% deadlines met");
    assert!(quiet > 0.0, "not even the clock tick was seen");
    let others: Vec<usize> = cpus()
        .into_iter()
        .filter(|c| c.to_string() != cpu)
        .collect();
    let Some(sender_cpu) = others.first() else {
        println!("one CPU only: the flood's sender would take the periodic thread's CPU; the flood is not tested");
        return;
    };
    if !root() || !have("ip") {
        println!(
            "cannot make a network namespace (needs root and iproute2): the flood is not tested"
        );
        return;
    }
    let Some(ns) = Netns::new() else {
        println!("`ip netns add` failed (no network namespaces in this kernel?): the flood is not tested");
        return;
    };
    // Receive Packet Steering on the namespace's loopback sends the receive processing
    // (an IPI and the NET_RX softirq) to the periodic thread's CPU, as a NIC's interrupts
    // would; the sender and receiver run on another CPU.
    let mask = format!("{:x}", 1u64 << cpu.parse::<u32>().unwrap());
    let rps = ns
        .exec()
        .args([
            "sh",
            "-c",
            &format!("echo {mask} > /sys/class/net/lo/queues/rx-0/rps_cpus"),
        ])
        .status()
        .is_ok_and(|s| s.success());
    assert!(rps, "cannot steer the namespace's loopback to CPU {cpu}");
    // At most 20 million datagrams or 4 s, whichever first; the watchdog kills it at 30 s.
    let flood = std::thread::spawn({
        let mut cmd = ns.exec();
        cmd.args([
            "taskset",
            "-c",
            &sender_cpu.to_string(),
            &helper("udp_flood"),
            "20000000",
            "4",
        ]);
        move || bounded(&mut cmd, Duration::from_secs(30))
    });
    std::thread::sleep(Duration::from_millis(500));
    let (loud, loud_met) = periodic_noise(&cpu);
    let sent = flood.join().expect("the flood thread");
    drop(ns);
    println!(
        "with a UDP flood steered to CPU {cpu} ({}): {loud:.0} interrupt gaps/s, {loud_met:.1}% deadlines met",
        sent.stdout.trim()
    );
    assert!(sent.status.success(), "udp_flood: {}", sent.stderr);
    assert!(
        loud >= 2.0 * quiet && loud - quiet >= 500.0,
        "the flood's receive processing did not show as extra gaps"
    );
}

#[test]
fn bad_options_fail_with_one_line_and_status_125() {
    for (args, want) in [
        (vec!["-n", "2", "-t", "5"], "numbered 0 to 1"),
        (
            vec!["-n", "1", "-w", "PERIODIC", "6ms", "5ms"],
            "exceeds PERIOD",
        ),
        (vec!["-n", "1", "-A", "100000", "-d", "100ms"], "CPUs"),
    ] {
        let out = arum().arg("hourglass").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("arum hourglass: ") && err.contains(want),
            "{err}"
        );
    }
    // clap's own usage errors keep clap's status.
    let out = arum().args(["hourglass", "-w", "CPU"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A working set beyond the machine's memory is refused before anything is allocated (it
    // aborted on the allocation): one line, whatever the machine's size.
    let total_kib: u64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .expect("MemTotal");
    let size = format!("{}K", total_kib + (1 << 20));
    let out = arum()
        .args(["hourglass", "-n", "1", "-d", "1s", "-w", "CPU_SCAN", &size])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("more than this machine's memory") || err.contains("1 TiB"),
        "{err}"
    );
}

#[test]
fn an_unwritable_output_stops_it_before_the_run() {
    let _one = one_at_a_time();
    for (option, path) in [
        ("-o", "/nonexistent/x"),
        ("--svg", "/nonexistent/trace.svg"),
    ] {
        let started = Instant::now();
        let ran = bounded(
            arum()
                .args(["hourglass", "-n", "1", "-d", "1s"])
                .args([option, path]),
            Duration::from_secs(60),
        );
        let took = started.elapsed();
        let err = &ran.stderr;
        assert_eq!(ran.status.code(), Some(125), "{option} {path}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("arum hourglass: cannot write {path}: "))
                && err.contains("choose a writable path"),
            "{err}"
        );
        // A run lasts at least its length: failing sooner means nothing was measured.
        assert!(
            took < Duration::from_secs(1),
            "{option} {path}: failed after {took:?}, so it ran first"
        );
        assert!(ran.stdout.is_empty(), "{}", ran.stdout);
    }
}

#[test]
fn text_trace_and_svg_of_a_short_run() {
    let _one = one_at_a_time();
    let cpu = test_cpu();
    let dir = temp_dir();
    let svg = dir.path().join("trace.svg");
    let ran = bounded(
        arum()
            .args(["hourglass", "-n", "2", "-d", "300ms", "-A", &cpu, "--trace"])
            .args(["-t", "1", "-w", "PERIODIC", "1ms", "5ms", "--svg"])
            .arg(&svg)
            .args(["--svg-from", "100ms", "--svg-span", "50ms"]),
        Duration::from_secs(30),
    );
    assert!(ran.status.success(), "{}", ran.stderr);
    let text = &ran.stdout;
    for tag in [
        "hourglass:",
        "tsc:",
        "gap:",
        "thread 0:",
        "share:",
        "deadline:",
        "trace:",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(tag)),
            "no {tag} line:\n{text}"
        );
    }
    // trace: thread start end length gap (ms), cpu=, end=: lengths add up.
    for l in text.lines().filter(|l| l.starts_with("trace:")) {
        let w: Vec<f64> = l
            .split_whitespace()
            .skip(2)
            .take(3)
            .map(|x| x.parse().unwrap())
            .collect();
        assert!((w[1] - w[0] - w[2]).abs() < 1e-5, "{l}");
        assert!(l.contains(&format!("cpu={cpu}")), "{l}");
    }
    // Both threads ran on the one CPU: the kernel's figures for it over the run, where the
    // kernel lists its timer interrupts per CPU.
    if arum_camp::interrupt_per_cpu("LOC").is_ok() {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("cpu {cpu}: over the run, ")))
            .unwrap_or_else(|| panic!("no cpu {cpu} line:\n{text}"));
        assert!(
            line.contains(" timer interrupts a second; the host took "),
            "{line}"
        );
    } else {
        println!("/proc/interrupts lists no local timer line here: the cpu line is not checked");
    }
    let doc = std::fs::read_to_string(&svg).unwrap();
    assert!(doc.starts_with("<svg") && doc.trim_end().ends_with("</svg>"));
    // Intervals as bars, the periodic thread's deadlines as marks the legend names.
    assert!(
        doc.matches("<rect").count() > 5,
        "{}",
        &doc[..doc.len().min(2000)]
    );
    assert!(doc.contains("deadline met") || doc.contains("deadline missed"));
    assert!(Path::new(&helper("udp_flood")).exists());
}

/// What the output says about itself: a full trace buffer first and in the shares, GAP's origin
/// only as it was, the JSON's schema, files as arum writes them, and an SVG window past the end
/// refused before the run.
#[test]
fn the_output_says_what_it_is_and_where_it_is_cut() {
    use std::os::unix::fs::PermissionsExt;
    let _one = one_at_a_time();
    let cpu = test_cpu();
    let dir = temp_dir();
    // 300 ms of a CPU thread in a buffer of 4 records: full at the fourth gap (a tick, at any
    // HZ, comes every 10 ms at most while the CPU is busy).
    let out = dir.path().join("out.txt");
    let ran = bounded(
        arum()
            .args([
                "hourglass",
                "-n",
                "1",
                "-d",
                "300ms",
                "-e",
                "4",
                "-A",
                &cpu,
                "-o",
            ])
            .arg(&out),
        Duration::from_secs(30),
    );
    assert!(ran.status.success(), "{}", ran.stderr);
    let text = std::fs::read_to_string(&out).unwrap();
    let first_finding = text
        .lines()
        .position(|l| l.starts_with("share:"))
        .expect("a share line");
    let note = text
        .lines()
        .position(|l| l.starts_with("note: the trace buffer"))
        .unwrap_or_else(|| panic!("no note of the full buffer:\n{text}"));
    assert!(note < first_finding, "{text}");
    let share = text.lines().find(|l| l.starts_with("share:")).unwrap();
    assert!(share.contains("trace buffer filled"), "{share}");
    // As a file the user creates: 0666 less the umask (this test's, as arum's).
    let umask = nix::sys::stat::umask(nix::sys::stat::Mode::empty());
    nix::sys::stat::umask(umask);
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !umask.bits(), "mode {mode:o}");

    // A latency thread alone: nobody gave GAP and no loop was measured.
    let ran = bounded(
        arum().args([
            "hourglass",
            "-n",
            "1",
            "-d",
            "200ms",
            "-A",
            &cpu,
            "-w",
            "LAT",
            "1ms",
        ]),
        Duration::from_secs(30),
    );
    assert!(ran.status.success(), "{}", ran.stderr);
    let gap = ran.stdout.lines().find(|l| l.starts_with("gap:")).unwrap();
    assert!(!gap.contains("given"), "{gap}");
    assert!(hourglass(&["-n", "1", "-d", "100ms", "-A", &cpu], 1)["schema"] == "arum.hourglass/1");

    // An SVG window after the end of a 60 s run: refused at once (the watchdog allows 20 s),
    // nothing written.
    let svg = dir.path().join("late.svg");
    let ran = bounded(
        arum()
            .args([
                "hourglass",
                "-n",
                "1",
                "-d",
                "60s",
                "--svg-from",
                "61s",
                "--svg",
            ])
            .arg(&svg),
        Duration::from_secs(20),
    );
    assert_eq!(ran.status.code(), Some(125), "{}", ran.stderr);
    assert!(ran.stderr.contains("--svg-from"), "{}", ran.stderr);
    assert!(!svg.exists());
}

#[test]
fn the_switch_cost_method_gives_an_estimate_with_a_confidence_interval() {
    let _one = one_at_a_time();
    let cpu = test_cpu();
    let dir = temp_dir();
    let out = dir.path().join("cost.json");
    let ran = bounded(
        arum()
            .args([
                "hourglass",
                "--switch-cost",
                "64K",
                "--trials",
                "3",
                "-d",
                "300ms",
            ])
            .args(["--switch-cost-threads", "4", "--switch-cost-cpu", &cpu])
            .args(["--format", "json", "-o"])
            .arg(&out),
        Duration::from_secs(60),
    );
    assert!(ran.status.success(), "{}", ran.stderr);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let size = &v["sizes"][0];
    assert_eq!(size["bytes"], 65536);
    let trials = size["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 3);
    for t in trials {
        // Every run did work and received CPU, and the four threads were switched between.
        for side in ["one", "many"] {
            assert!(f(t, &format!("/{side}/work")) > 0.0, "{t}");
            assert!(f(t, &format!("/{side}/cpu_seconds")) > 0.0, "{t}");
        }
        assert!(f(t, "/many/between_threads") > 0.0, "{t}");
        assert_eq!(t["one"]["between_threads"], 0, "{t}");
    }
    // A trial in which the lone thread was switched out (to other tasks) more than the four
    // were gives no estimate; the mean needs two that do.
    let valid = trials
        .iter()
        .filter(|t| t["cost_ns"].as_f64().is_some())
        .count();
    let c = &size["cost_ns"];
    if valid >= 2 {
        println!(
            "64K working set, {valid} of 3 trials of 300 ms: {} ± {} per switch (95%)",
            us(f(c, "/mean")),
            us(f(c, "/half_width"))
        );
        assert!(f(c, "/half_width") >= 0.0 && f(c, "/n") == valid as f64);
    } else {
        println!("64K working set: only {valid} of 3 trials gave an estimate on this busy machine");
        assert!(c.is_null());
    }
}
