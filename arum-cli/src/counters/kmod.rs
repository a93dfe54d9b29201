//! Counting through the /dev/arum module: one request with every event and CPU, written just
//! before the program is released; one read after it ended returns per-CPU counts. The module
//! counts whole CPUs (everything that ran on them), as the original ARUM did.

use std::fs::File;
use std::io::{Read, Write};
use std::sync::Mutex;

use arum_events::plan::Plan;
use arum_events::resolve::{EventKind, PERF_TYPE_RAW, PERF_TYPE_SOFTWARE};
use arum_wire as wire;

use super::sys::Reading;
use super::{Armed, Backend, EventSetup, Request};
use crate::error::ArumError;

pub const DEVICE: &str = "/dev/arum";

pub struct KmodBackend {
    device: Mutex<File>,
    request: wire::Request,
    ncpus: usize,
    /// The CPUs as the caller listed them: the columns of every reading.
    cpus: Vec<u32>,
    timing: Mutex<Option<KmodTiming>>,
    results: Mutex<Option<Vec<Vec<Option<Reading>>>>>,
    /// The module accepted the request.
    counting: std::sync::atomic::AtomicBool,
    /// The module's timer readings: `(time, [event][cpu] cumulative)`.
    series: Mutex<Vec<(u64, Vec<Vec<u64>>)>>,
}

/// Why a write failed: the module's detailed answer, or an I/O error.
enum WriteError {
    Refused(wire::ResponseHeader),
    Io(String),
}
use WriteError::Refused;

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused(h) => write!(f, "{}", refusal(h)),
            WriteError::Io(e) => write!(f, "{e}"),
        }
    }
}

fn fail(what: String) -> ArumError {
    ArumError::Events(what)
}

impl KmodBackend {
    pub fn arm(plan: &Plan, req: &Request) -> Result<Armed, ArumError> {
        let device = std::fs::OpenOptions::new().read(true).write(true).open(DEVICE).map_err(|e| {
            fail(match e.raw_os_error() {
                Some(libc::EBUSY) => format!("{DEVICE} is in use by another measurement; wait for it, or use --backend perf"),
                Some(libc::EACCES) => format!("{DEVICE}: permission denied; ask the administrator for the module's group (see README), or use --backend perf"),
                _ => format!("cannot open {DEVICE}: {e}; load the arum module (see README), or use --backend perf"),
            })
        })?;
        if plan.events.len() > wire::MAX_COUNTERS {
            return Err(fail(format!(
                "the kmod back-end counts at most {} events at once",
                wire::MAX_COUNTERS
            )));
        }
        let perf = build_request(plan, req, false)?;
        let msr = build_request(plan, req, true);
        let mut events = EventSetup::from_plan(plan);
        let mut backend = KmodBackend {
            device: Mutex::new(device),
            request: perf,
            ncpus: req.cpus.len(),
            cpus: req.cpus.clone(),
            timing: Mutex::new(None),
            results: Mutex::new(None),
            counting: std::sync::atomic::AtomicBool::new(false),
            series: Mutex::new(Vec::new()),
        };
        // Counting starts with the write, a few microseconds before the program is released. A
        // module loaded with backend=1 programs registers itself and refuses perf-style requests
        // as the wrong source: then send the register-level request.
        let mut outcome = backend.write_request();
        if let (Err(Refused(h)), Ok(m)) = (&outcome, &msr) {
            if h.error_code == wire::ERR_SOURCE {
                backend.request = *m;
                outcome = backend.write_request();
            }
        }
        match outcome {
            Ok(()) => backend
                .counting
                .store(true, std::sync::atomic::Ordering::SeqCst),
            Err(e) => {
                let why = match (&e, &msr) {
                    (Refused(h), Err(m)) if h.error_code == wire::ERR_SOURCE => m.to_string(),
                    _ => e.to_string(),
                };
                for ev in &mut events {
                    ev.error = Some(why.clone());
                }
            }
        }
        Ok(Armed {
            backend: std::sync::Arc::new(backend),
            name: "kmod",
            events,
            user_only_reason: None,
            opened_as: format!("{DEVICE}: one counter per event on each CPU, counting everything on the CPU"),
            multiplexing_detection: "time running below time enabled means the kernel multiplexed the module's counters; values are scaled".into(),
        })
    }
}

/// The request for `plan`: perf-style encodings, or (`msr`) the counters and registers the
/// module programs itself, from the scheduler's placements.
fn build_request(plan: &Plan, req: &Request, msr: bool) -> Result<wire::Request, ArumError> {
    let mut request = wire::Request::new(wire::FLAG_USER | wire::FLAG_KERNEL);
    for (i, p) in plan.events.iter().enumerate() {
        let (perf_type, config, config1) = match &p.event.kind {
            EventKind::Software { config } => (PERF_TYPE_SOFTWARE, *config, 0),
            EventKind::Hardware(h) => (PERF_TYPE_RAW, h.config, h.config1),
        };
        request.counters[i] = if msr {
            // The module programs the registers itself: it needs the counter each event was
            // placed on, and NetBurst's ESCR/CCCR pair.
            let (EventKind::Hardware(h), Some(place)) = (&p.event.kind, p.placement) else {
                return Err(fail(format!(
                        "the module's msr back-end counts hardware events placed on counters only; {} is not (load the module with backend=0 for perf-style events)",
                        p.event.name
                    )));
            };
            match &h.netburst {
                Some(nb) => wire::CounterRequest {
                    source: wire::SOURCE_MSR,
                    index: place.counter,
                    escr_msr: place.escr_msr.unwrap_or(0),
                    config: u64::from(nb.cccr),
                    escr: u64::from(nb.escr),
                    ..Default::default()
                },
                None => wire::CounterRequest {
                    source: wire::SOURCE_MSR,
                    index: place.counter,
                    config: h.config,
                    ..Default::default()
                },
            }
        } else {
            wire::CounterRequest {
                source: wire::SOURCE_PERF,
                perf_type,
                config,
                config1,
                ..Default::default()
            }
        };
    }
    if let Some(ms) = req.interval_ms {
        request.timer_period_ns = ms.max(1) * 1_000_000;
    }
    request.ncounters = plan.events.len() as u32;
    for &cpu in &req.cpus {
        if cpu as usize >= wire::MAX_CPUS {
            return Err(fail(format!(
                "CPU {cpu} is beyond the {} CPUs the module addresses",
                wire::MAX_CPUS
            )));
        }
        request.cpus[(cpu / 64) as usize] |= 1 << (cpu % 64);
    }
    Ok(request)
}

impl KmodBackend {
    /// Reads the module's response (this stops counting).
    fn collect(&self) -> Result<Vec<Vec<Option<Reading>>>, ArumError> {
        let mut bytes = Vec::new();
        self.device
            .lock()
            .expect("not poisoned")
            .read_to_end(&mut bytes)
            .map_err(|e| fail(format!("reading {DEVICE}: {e}")))?;
        let response = wire::Response::parse(&bytes)
            .map_err(|e| fail(format!("bad response from {DEVICE}: {e:?}")))?;
        let h = response.header;
        if h.status != 0 {
            return Err(refusal(&h));
        }
        let n = self.request.ncounters as usize;
        let mut out = vec![vec![None; self.ncpus]; n];
        // Records come in the order of the request's CPU mask, which is `req.cpus` sorted.
        let mut order: Vec<(u32, usize)> =
            self.cpus.iter().enumerate().map(|(k, &c)| (c, k)).collect();
        order.sort_unstable();
        let column = |cpu: u32| {
            order
                .binary_search_by_key(&cpu, |&(c, _)| c)
                .ok()
                .map(|i| order[i].1)
        };
        for c in response.cpus() {
            let Some(k) = column(c.cpu) else { continue };
            for (e, slot) in out.iter_mut().enumerate() {
                slot[k] = Some(Reading {
                    value: c.counts[e],
                    enabled_ns: c.time_enabled_ns[e],
                    running_ns: c.time_running_ns[e],
                });
            }
        }
        // The timer's samples: one per counting CPU for each recorded expiry.
        let mut series: Vec<(u64, Vec<Vec<u64>>)> = Vec::new();
        let mut current: Option<u32> = None;
        for s in response.samples() {
            let Some(k) = column(s.cpu) else { continue };
            if current != Some(s.expiry) {
                current = Some(s.expiry);
                series.push((0, vec![vec![0u64; self.ncpus]; n]));
            }
            let (t, counts) = series.last_mut().expect("pushed above");
            *t = (*t).max(s.time_ns);
            for (e, row) in counts.iter_mut().enumerate() {
                row[k] = s.counts[e];
            }
        }
        *self.series.lock().expect("not poisoned") = series;
        *self.timing.lock().expect("not poisoned") = Some(KmodTiming {
            start_spread_ns: h.start_spread_ns,
            stop_spread_ns: h.stop_spread_ns,
            flags: h.flags,
            cpu_flags: response
                .cpus()
                .map(|c| (c.cpu, c.flags))
                .filter(|c| c.1 != 0)
                .collect(),
        });
        Ok(out)
    }

    /// How the module's counting went: the spread of the CPUs' start and stop instants, and
    /// the response and per-CPU flags (`wire::RESPONSE_*`, `wire::CPU_*`). Known after `stop`.
    pub fn timing(&self) -> Option<KmodTiming> {
        self.timing.lock().expect("not poisoned").clone()
    }
}

/// See [`KmodBackend::timing`].
#[derive(Debug, Clone, Default)]
pub struct KmodTiming {
    pub start_spread_ns: u64,
    pub stop_spread_ns: u64,
    pub flags: u32,
    /// CPUs with any `wire::CPU_*` flag (went offline, counted by a sibling, ...).
    pub cpu_flags: Vec<(u32, u32)>,
}

fn refusal(h: &wire::ResponseHeader) -> ArumError {
    let mut s = format!(
        "{DEVICE} refused the request: {}",
        wire::error_text(h.error_code)
    );
    if h.error_cpu != wire::NO_CPU {
        s.push_str(&format!(" (CPU {})", h.error_cpu));
    }
    if h.error_counter != wire::NO_COUNTER {
        s.push_str(&format!(" (event {})", h.error_counter + 1));
    }
    s.push_str(&format!(
        ": {}",
        nix::errno::Errno::from_raw(-h.status).desc()
    ));
    fail(s)
}

impl Backend for KmodBackend {
    fn read_all(&self) -> Vec<Vec<Option<Reading>>> {
        match &*self.results.lock().expect("not poisoned") {
            Some(r) => r.clone(),
            None => vec![vec![None; self.ncpus]; self.request.ncounters as usize],
        }
    }

    fn reference(&self) -> Option<Vec<Reading>> {
        None
    }

    fn intervals(&self) -> Option<Vec<crate::report::model::Interval>> {
        let series = self.series.lock().expect("not poisoned");
        Some(super::intervals::deltas(
            series.iter().map(|(t, v)| (*t, v)),
        ))
    }

    fn start(&self) -> Result<(), ArumError> {
        Ok(())
    }

    fn stop(&self) {
        if !self.counting.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        match self.collect() {
            Ok(v) => *self.results.lock().expect("not poisoned") = Some(v),
            Err(e) => eprintln!("arum: warning: {e}"),
        }
    }
}

impl KmodBackend {
    /// Sends the request; on refusal, reads the module's detailed reason.
    fn write_request(&self) -> Result<(), WriteError> {
        let mut bytes = vec![0u8; wire::REQUEST_SIZE];
        self.request.encode(&mut bytes);
        let mut dev = self.device.lock().expect("not poisoned");
        if dev.write(&bytes).is_err() {
            // The module keeps the detailed reason for the next read.
            let mut resp = Vec::new();
            let _ = dev.read_to_end(&mut resp);
            return Err(match wire::ResponseHeader::decode(&resp) {
                Some(h) => Refused(h),
                None => WriteError::Io(format!("{DEVICE} refused the request")),
            });
        }
        Ok(())
    }
}
