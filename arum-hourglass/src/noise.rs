//! The noise probe: gap-detecting threads at SCHED_IDLE, one pinned to each chosen CPU, placed
//! beside a measured program by a normal `arum` run (`--noise-probe`).
//!
//! At SCHED_IDLE a probe runs only when nothing else on its CPU wants to, so it sees the CPU's
//! otherwise idle time and what interrupts it: each gap in which the probe's own context-switch
//! count did not change was taken by interrupts, softirqs, kernel work or the hypervisor; a gap
//! in which it changed was taken by a task (the measured program or another). What a probe
//! cannot see, and what it changes, is in the README (section "The noise probe").
//!
//! ```ignore
//! let probe = NoiseProbe::start(&[1])?;   // before the program starts
//! // ... the program runs ...
//! let report = probe.finish();            // after it ended: serde, and report.lines
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use arum_units::duration;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::analysis::{self, tick};
use crate::clock::{thread_cpu_ns, Timebase};
use crate::error::Error;
use crate::experiment::Priority;
use crate::gap::{Detector, Sink};
use crate::kernel::KernelFacts;
use crate::models;
use crate::priority;
use crate::trace::{End, Interval};

/// How many gap times a probe keeps for the tick inference (about 6 minutes at 250 Hz); the
/// counts and distributions cover every gap regardless.
const TIMES_KEPT: usize = 100_000;

/// GAP is this many loop iterations.
const GAP_FACTOR: f64 = 10.0;

/// A distribution of gaps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct GapStats {
    pub count: u64,
    /// Gaps per second of the probe's running time (it sees only the time it runs).
    pub per_second: f64,
    pub total_ns: f64,
    /// The median and 99th percentile from the histogram's buckets, kept within the shortest
    /// and the longest gap; 0 when there was no gap (count 0).
    pub median_ns: f64,
    pub p99_ns: f64,
    /// The longest gap, exactly.
    pub max_ns: f64,
}

/// What the probe on one CPU saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuNoise {
    pub cpu: usize,
    /// Wall time from the probe's start to its finish.
    pub seconds: f64,
    /// Time the probe had the CPU: when nothing else wanted it, plus the small share a
    /// SCHED_IDLE thread still gets beside busy tasks (its weight is 3 against nice 0's 1024).
    pub ran_seconds: f64,
    /// CPU time the kernel accounted to the probe thread.
    pub probe_cpu_seconds: f64,
    /// Gaps with no context switch: interrupts, softirqs, kernel work, the hypervisor.
    pub interrupts: GapStats,
    /// Gaps in which a task ran (the program or any other).
    pub tasks: GapStats,
    /// A recurring gap period, and how it compares with the kernel's tick.
    pub tick: Option<analysis::TickVerdict>,
}

/// The probe's findings, for the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseReport {
    pub gap_ns: f64,
    pub tsc_hz: f64,
    pub kernel_hz: Option<u32>,
    pub cpus: Vec<CpuNoise>,
    /// CPUs whose probe failed, and why.
    pub failed: Vec<String>,
    /// The findings in words, one line per CPU (for the text report).
    pub lines: Vec<String>,
}

/// Running probes.
pub struct NoiseProbe {
    stop: Arc<AtomicBool>,
    threads: Vec<(usize, JoinHandle<Result<Probe, String>>)>,
    timebase: Timebase,
    gap_ticks: u64,
    kernel: KernelFacts,
    /// CLOCK_MONOTONIC when the probes were all running.
    started_ns: u64,
    /// The probe threads' IDs, to lift them out of SCHED_IDLE at the finish.
    tids: Vec<libc::pid_t>,
}

impl NoiseProbe {
    /// Starts one SCHED_IDLE probe thread pinned to each of `cpus` (every CPU this process may
    /// use when empty). Returns when all run, or the first CPU's failure.
    pub fn start(cpus: &[usize]) -> Result<NoiseProbe, Error> {
        let cpus = if cpus.is_empty() {
            priority::allowed_cpus()
        } else {
            let allowed = priority::allowed_cpus();
            if let Some(bad) = cpus.iter().find(|c| !allowed.contains(c)) {
                return Err(Error::Options(format!(
                    "--noise-probe: CPU {bad} is not available to this process (allowed: {allowed:?}); \
                     name CPUs from that list"
                )));
            }
            cpus.to_vec()
        };
        if !arum_tsc::has_rdtscp() {
            return Err(Error::Machine(
                "--noise-probe: this processor has no RDTSCP, which gap detection needs".into(),
            ));
        }
        let hz = arum_tsc::Calibration::measure(Duration::from_millis(10), 3).hz;
        let timebase = Timebase::anchor(hz);
        let iteration = models::measure_loop(&timebase, None, 2.0).median_ns;
        let gap_ticks = timebase.ticks(GAP_FACTOR * iteration).max(1);
        let kernel = KernelFacts::read();
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel();
        let mut threads = Vec::new();
        for &cpu in &cpus {
            let flag = stop.clone();
            let ready = ready_tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("noise-probe-{cpu}"))
                .stack_size(128 << 10)
                .spawn(move || probe_main(cpu, gap_ticks, timebase, &flag, ready));
            match spawned {
                Ok(h) => threads.push((cpu, h)),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(Error::Machine(format!(
                        "--noise-probe: cannot create a thread for CPU {cpu}: {e}"
                    )));
                }
            }
        }
        drop(ready_tx);
        let probe = NoiseProbe {
            stop,
            threads,
            timebase,
            gap_ticks,
            kernel,
            started_ns: 0,
            tids: Vec::new(),
        };
        let mut probe = probe;
        for _ in 0..cpus.len() {
            match ready_rx.recv() {
                Ok(Ok(tid)) => probe.tids.push(tid),
                Ok(Err(why)) => {
                    probe.stop.store(true, Ordering::Relaxed);
                    return Err(Error::Machine(format!("--noise-probe: {why}")));
                }
                Err(_) => break,
            }
        }
        probe.started_ns = arum_tsc::monotonic_ns();
        Ok(probe)
    }

    /// Stops the probes and summarises what they saw.
    pub fn finish(mut self) -> NoiseReport {
        let seconds = (arum_tsc::monotonic_ns() - self.started_ns) as f64 / 1e9;
        self.stop.store(true, Ordering::Relaxed);
        // A SCHED_IDLE thread on a CPU other tasks keep busy may wait seconds for its turn to
        // see the stop: lift each to SCHED_OTHER first (allowed to root or CAP_SYS_NICE; else
        // the join waits for that turn).
        for &tid in &self.tids {
            let param = libc::sched_param { sched_priority: 0 };
            // SAFETY: `tid` is a live thread of this process (joined below, not before);
            // `param` is valid for the call; a failure leaves the thread as it was.
            unsafe { libc::sched_setscheduler(tid, libc::SCHED_OTHER, &param) };
        }
        let mut cpus = Vec::new();
        let mut failed = Vec::new();
        for (cpu, h) in std::mem::take(&mut self.threads) {
            match h.join() {
                Ok(Ok(p)) => cpus.push(p.summary(cpu, seconds, &self.timebase, &self.kernel)),
                Ok(Err(why)) => failed.push(format!("CPU {cpu}: {why}")),
                Err(_) => failed.push(format!("CPU {cpu}: the probe thread panicked")),
            }
        }
        let gap_ns = self.timebase.ns(self.gap_ticks);
        let lines = cpus
            .iter()
            .map(|c| line(c, gap_ns))
            .chain(failed.iter().map(|f| format!("noise probe failed on {f}")))
            .collect();
        NoiseReport {
            gap_ns,
            tsc_hz: self.timebase.hz,
            kernel_hz: self.kernel.hz,
            cpus,
            failed,
            lines,
        }
    }
}

impl Drop for NoiseProbe {
    /// A probe dropped without `finish` (an error path) still stops its threads.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn line(c: &CpuNoise, gap_ns: f64) -> String {
    let ran = c.ran_seconds / c.seconds.max(1e-9) * 100.0;
    let i = &c.interrupts;
    let mut s = format!(
        "noise probe on CPU {} ({}, GAP {}): it ran {} ({ran:.1}%); \
         {} interrupt gaps ({:.1}/s of its running time), median {}, p99 {}, max {}, {} in all",
        c.cpu,
        seconds(c.seconds),
        duration::format_ns(gap_ns),
        seconds(c.ran_seconds),
        i.count,
        i.per_second,
        duration::format_ns(i.median_ns),
        duration::format_ns(i.p99_ns),
        duration::format_ns(i.max_ns),
        duration::format_ns(i.total_ns),
    );
    s += &format!(
        "; tasks ran in {} gaps ({} in all)",
        c.tasks.count,
        duration::format_ns(c.tasks.total_ns)
    );
    if let Some(t) = &c.tick {
        s += &format!("; {}", t.statement);
    }
    s += &format!("; probe CPU time {}", seconds(c.probe_cpu_seconds));
    s
}

fn seconds(s: f64) -> String {
    duration::format_ns(s * 1e9)
}

/// What one probe thread collected.
struct Probe {
    sink: ProbeSink,
    cpu_ns: u64,
}

impl Probe {
    fn summary(&self, cpu: usize, seconds: f64, tb: &Timebase, k: &KernelFacts) -> CpuNoise {
        let s = &self.sink;
        let ran_ns = tb.ns(s.running);
        let found = tick::infer(&s.times, ran_ns, k.hz.map(|hz| 1e9 / hz as f64));
        let sources: Vec<f64> = found.found.iter().map(|t| t.hz).collect();
        let at_kernel = found.at_hint;
        CpuNoise {
            cpu,
            seconds,
            ran_seconds: ran_ns / 1e9,
            probe_cpu_seconds: self.cpu_ns as f64 / 1e9,
            interrupts: s.interrupts.stats(ran_ns),
            tasks: s.tasks.stats(ran_ns),
            tick: Some(analysis::verdict(0, cpu, &sources, at_kernel.as_ref(), k)),
        }
    }
}

/// The gaps of one kind, streamed: a histogram of their lengths (ns, 3 significant digits, up to
/// an hour), their sum, and the exact extremes, which keep the percentiles read from the
/// histogram's buckets inside what was recorded (a bucket's value can exceed the longest gap).
struct Gaps {
    histogram: Histogram<u64>,
    total_ns: f64,
    min_ns: u64,
    max_ns: u64,
}

impl Gaps {
    fn new() -> Result<Gaps, String> {
        Ok(Gaps {
            histogram: Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
                .map_err(|e| format!("cannot make a histogram: {e}"))?,
            total_ns: 0.0,
            min_ns: u64::MAX,
            max_ns: 0,
        })
    }

    fn record(&mut self, ns: f64) {
        let whole = ns as u64;
        self.histogram.saturating_record(whole);
        self.total_ns += ns;
        self.min_ns = self.min_ns.min(whole);
        self.max_ns = self.max_ns.max(whole);
    }

    /// The distribution, over `ran_ns` of the probe's running time.
    fn stats(&self, ran_ns: f64) -> GapStats {
        let h = &self.histogram;
        let q =
            |p: f64| arum_stats::histogram_quantile(h, p, self.min_ns, self.max_ns).unwrap_or(0.0);
        GapStats {
            count: h.len(),
            per_second: h.len() as f64 / (ran_ns / 1e9).max(1e-9),
            total_ns: self.total_ns,
            median_ns: q(0.5),
            p99_ns: q(0.99),
            max_ns: self.max_ns as f64,
        }
    }
}

/// Streams intervals into distributions without allocating.
struct ProbeSink {
    hz: f64,
    t0: u64,
    interrupts: Gaps,
    tasks: Gaps,
    running: u64,
    times: Vec<tick::Gap>,
    previous: Option<Interval>,
}

impl Sink for ProbeSink {
    fn interval(&mut self, i: Interval) {
        self.running += i.end - i.start;
        if let Some(p) = self.previous.replace(i) {
            let ns = (i.start - p.end) as f64 * 1e9 / self.hz;
            match p.ended {
                End::Gap { switched: false } => self.interrupts.record(ns),
                _ => self.tasks.record(ns),
            }
            if self.times.len() < self.times.capacity() {
                self.times.push(tick::Gap {
                    at_ns: (p.end - self.t0) as f64 * 1e9 / self.hz,
                    len_ns: ns,
                });
            }
        }
    }
}

fn probe_main(
    cpu: usize,
    gap_ticks: u64,
    tb: Timebase,
    stop: &AtomicBool,
    ready: mpsc::Sender<Result<libc::pid_t, String>>,
) -> Result<Probe, String> {
    let setup = || -> Result<ProbeSink, String> {
        priority::pin(&[cpu]).map_err(|e| format!("cannot run on CPU {cpu}: {e}"))?;
        priority::apply(Priority::Idle).map_err(|e| priority::explain(Priority::Idle, &e))?;
        Ok(ProbeSink {
            hz: tb.hz,
            t0: 0,
            interrupts: Gaps::new()?,
            tasks: Gaps::new()?,
            running: 0,
            times: Vec::with_capacity(TIMES_KEPT),
            previous: None,
        })
    };
    let mut sink = match setup() {
        Ok(s) => s,
        Err(why) => {
            let _ = ready.send(Err(why.clone()));
            return Err(why);
        }
    };
    let cpu0 = thread_cpu_ns();
    let started = arum_tsc::read();
    sink.t0 = started;
    let mut det = Detector::new(sink, 0, gap_ticks);
    // Ready only once the detector holds its first reading: from here any time the CPU is taken
    // is a gap. Told earlier, a task started right after `start` could keep this SCHED_IDLE
    // thread from its first reading, and that time would be seen by no one.
    let _ = ready.send(Ok(nix::unistd::gettid().as_raw()));
    drop(ready);
    while !stop.load(Ordering::Relaxed) {
        det.poll();
    }
    det.stop(End::Finish);
    Ok(Probe {
        cpu_ns: thread_cpu_ns() - cpu0,
        sink: det.sink,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::thread_cpu_ns;

    #[test]
    fn a_busy_neighbour_runs_in_the_probes_gaps_and_interrupts_are_seen() {
        let _one = crate::exclusive();
        let cpu = *priority::allowed_cpus().last().unwrap();
        let probe = NoiseProbe::start(&[cpu]).unwrap();
        // A SCHED_OTHER thread on the probe's CPU burns 200 ms of CPU time: at SCHED_IDLE
        // the probe must step aside, so that time shows as gaps in which a task ran.
        std::thread::spawn(move || {
            priority::pin(&[cpu]).unwrap();
            let t0 = thread_cpu_ns();
            while thread_cpu_ns() - t0 < 200_000_000 {
                std::hint::spin_loop();
            }
        })
        .join()
        .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let r = probe.finish();
        println!("{}", r.lines.join("\n"));
        assert!(r.failed.is_empty(), "{:?}", r.failed);
        let c = &r.cpus[0];
        assert_eq!(c.cpu, cpu);
        assert!(c.seconds >= 0.5, "{c:?}");
        assert!(c.ran_seconds < c.seconds, "{c:?}");
        // The probe's own account, on any machine: it ran no longer than it existed, and was
        // given no less CPU than it saw itself run (gaps are charged to it too when no task ran).
        assert!(c.probe_cpu_seconds <= c.seconds * 1.01, "{c:?}");
        assert!(c.ran_seconds <= c.probe_cpu_seconds * 1.01, "{c:?}");
        assert!(c.interrupts.median_ns <= c.interrupts.p99_ns, "{c:?}");
        // A SCHED_IDLE probe sees a gap only between two of its own readings: where other load
        // kept it off its CPU for most of the time the neighbour left free, the neighbour's
        // gaps may never close, and the test cannot judge them.
        let free = c.seconds - 0.2;
        if c.probe_cpu_seconds < free / 2.0 {
            println!(
                "the probe ran {:.1} ms of the {:.0} ms its neighbour left free: other load kept \
                 it off CPU {cpu}, so the neighbour's gaps and the ticks cannot be judged here",
                c.probe_cpu_seconds * 1e3,
                free * 1e3
            );
        } else {
            // Other load on the machine can only add to the task time.
            assert!(c.tasks.total_ns >= 190e6, "{c:?}");
            // At least the clock ticks while the probe keeps the CPU busy.
            assert!(c.interrupts.count > 0, "{c:?}");
        }
        assert!(c.interrupts.p99_ns <= c.interrupts.max_ns, "{c:?}");
        assert!(r.lines[0].contains(&format!("CPU {cpu}")), "{}", r.lines[0]);
        // The lead's report stores it as JSON.
        let back: NoiseReport = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back.lines, r.lines);
        assert_eq!(back.cpus[0].interrupts.count, c.interrupts.count);
    }

    #[test]
    fn gap_percentiles_stay_within_the_gaps_seen() {
        let mut g = Gaps::new().unwrap();
        let none = g.stats(1e9);
        assert_eq!(
            (none.count, none.median_ns, none.p99_ns, none.max_ns),
            (0, 0.0, 0.0, 0.0)
        );
        // Ten gaps of 99,970 ns fall in the bucket 99,968..=100,031 (3 significant digits),
        // whose top the histogram alone gives as the 99th percentile.
        for i in 1..=90 {
            g.record(i as f64 * 1000.0);
        }
        for _ in 0..10 {
            g.record(99_970.4);
        }
        assert_eq!(g.histogram.value_at_quantile(0.99), 100_031);
        let s = g.stats(1e9);
        assert_eq!((s.count, s.p99_ns, s.max_ns), (100, 99_970.0, 99_970.0));
        // Halfway from the 50th gap (50 µs) to the 51st, within the buckets' resolution.
        assert!((s.median_ns - 50_500.0).abs() <= 16.0, "{s:?}");
        assert!(
            (s.total_ns - (4_095_000.0 + 999_704.0)).abs() < 1e-6,
            "{s:?}"
        );
    }

    #[test]
    fn a_cpu_outside_the_process_is_refused_with_the_allowed_list() {
        let _one = crate::exclusive();
        let e = NoiseProbe::start(&[100_000]).err().unwrap().to_string();
        assert!(e.contains("CPU 100000") && e.contains("allowed"), "{e}");
    }
}
