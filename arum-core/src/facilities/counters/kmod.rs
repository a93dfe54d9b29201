//! Counting through the /dev/arum module: one request with every event and CPU, written when
//! counting starts (just before the program is released); one read after it ended returns
//! per-CPU counts and the module's own timer readings. The module counts whole CPUs (everything
//! that ran on them), as the original ARUM did.

use std::fs::File;
use std::io::{Read, Write};
use std::sync::Mutex;

use arum_events::plan::Plan;
use arum_events::resolve::EventKind;
use arum_wire as wire;
use arum_wire::DEVICE_PATH;

use super::backend::{Backend, BackendFacts, EventSetup, Opened, Snapshot};
use super::opening::{Grouping, Multiplexing, Opening};
use super::settings::Request;
use crate::error::ArumError;
use crate::perf::sys::Reading;

/// The module's shortest timer period (its `ERR_PERIOD` floor).
pub const MODULE_SHORTEST_PERIOD_MS: u64 = 10;

pub struct KmodBackend {
    device: Mutex<File>,
    /// Counters through the kernel's perf API (the module's default back-end).
    perf_request: wire::Request,
    /// Registers programmed by the module itself (a module loaded with backend=1), or why the
    /// plan cannot be expressed that way.
    msr_request: Result<wire::Request, String>,
    cpus: Vec<u32>,
    ncounters: usize,
    /// The module accepted a request: there is something to collect at `stop`.
    counting: Mutex<bool>,
    results: Mutex<Option<Decoded>>,
}

/// What one read of the module's response holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// `[event][cpu]`.
    pub counts: Vec<Vec<Option<Reading>>>,
    /// The timer's cumulative readings, one snapshot per expiry.
    pub series: Vec<Snapshot>,
    pub facts: BackendFacts,
}

/// Why a write failed: the module's detailed answer, or an I/O error.
enum WriteError {
    Refused(wire::ResponseHeader),
    Io(String),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Refused(h) => write!(f, "{}", refusal(h)),
            WriteError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// /dev/arum exists and this user may open it (the open is closed again at once).
pub fn usable() -> bool {
    open_device().is_ok()
}

fn open_device() -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(DEVICE_PATH)
}

impl KmodBackend {
    pub fn open(plan: &Plan, req: &Request) -> Result<Opened, ArumError> {
        let device = open_device().map_err(|e| {
            ArumError::Kmod(match e.raw_os_error() {
                Some(libc::EBUSY) => format!("{DEVICE_PATH} is in use by another measurement; wait for it, or use --backend perf"),
                Some(libc::EACCES) => format!("{DEVICE_PATH}: permission denied; ask the administrator for the module's group (see README), or use --backend perf"),
                _ => format!("cannot open {DEVICE_PATH}: {e}; load the arum module (see README), or use --backend perf"),
            })
        })?;
        if plan.events.len() > wire::MAX_COUNTERS {
            return Err(ArumError::Kmod(format!(
                "the kmod back-end counts at most {} events at once",
                wire::MAX_COUNTERS
            )));
        }
        let perf_request = build_request(plan, req, false).map_err(ArumError::Kmod)?;
        let msr_request = build_request(plan, req, true);
        Ok(Opened {
            backend: std::sync::Arc::new(KmodBackend {
                device: Mutex::new(device),
                perf_request,
                msr_request,
                cpus: req.cpus.clone(),
                ncounters: plan.events.len(),
                counting: Mutex::new(false),
                results: Mutex::new(None),
            }),
            events: EventSetup::from_plan(plan),
            user_only_reason: None,
            opening: Opening {
                grouping: Grouping::Module,
                multiplexing: Multiplexing::ModuleEnabledVsRunning,
                scope: req.scope,
                per_cpu: true,
            },
        })
    }

    /// Sends `request`; on refusal, reads the module's detailed reason.
    fn write_request(&self, request: &wire::Request) -> Result<(), WriteError> {
        let mut bytes = vec![0u8; wire::REQUEST_SIZE];
        request.encode(&mut bytes);
        let mut dev = self.device.lock().expect("not poisoned");
        if dev.write(&bytes).is_err() {
            // The module keeps the detailed reason for the next read.
            let mut resp = Vec::new();
            let _ = dev.read_to_end(&mut resp);
            return Err(match wire::ResponseHeader::decode(&resp) {
                Some(h) => WriteError::Refused(h),
                None => WriteError::Io(format!("{DEVICE_PATH} refused the request")),
            });
        }
        Ok(())
    }
}

/// The request for `plan`: perf-style encodings, or (`msr`) the counters and registers the
/// module programs itself, from the scheduler's placements.
fn build_request(plan: &Plan, req: &Request, msr: bool) -> Result<wire::Request, String> {
    let mut request = wire::Request::new(wire::FLAG_USER | wire::FLAG_KERNEL);
    for (i, p) in plan.events.iter().enumerate() {
        // The module programs one encoding for every CPU: a hybrid part's per-core-type
        // encodings cannot be expressed.
        let [target] = p.event.targets.as_slice() else {
            return Err(format!(
                "{} has a different encoding on each core type of this hybrid CPU; the kmod back-end programs one for all CPUs: use --backend perf",
                p.event.name
            ));
        };
        let (perf_type, config, config1) = (target.perf_type, target.config, target.config1);
        request.counters[i] = if msr {
            // The module programs the registers itself: it needs the counter each event was
            // placed on, and NetBurst's ESCR/CCCR pair.
            let (EventKind::Hardware(h), Some(place)) = (&p.event.kind, p.placement) else {
                return Err(format!(
                        "the module's msr back-end counts hardware events placed on counters only; {} is not (load the module with backend=0 for perf-style events)",
                        p.event.name
                    ));
            };
            if !h.raw {
                return Err(format!(
                    "{} is a generic event only the kernel can map to this CPU's; the module's msr back-end needs a table, architectural or legacy encoding (load the module with backend=0, or use --backend perf)",
                    p.event.name
                ));
            }
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
        // The module's timer runs no faster than every 10 ms (it is a work item on every CPU).
        request.timer_period_ns = ms.max(MODULE_SHORTEST_PERIOD_MS) * 1_000_000;
    }
    request.ncounters = plan.events.len() as u32;
    for &cpu in &req.cpus {
        if cpu as usize >= wire::MAX_CPUS {
            return Err(format!(
                "CPU {cpu} is beyond the {} CPUs the module addresses",
                wire::MAX_CPUS
            ));
        }
        request.cpus[(cpu / 64) as usize] |= 1 << (cpu % 64);
    }
    Ok(request)
}

/// Decodes the module's response to a request of `ncounters` events on `cpus` (the report's CPU
/// order; the module answers in CPU-number order, and only for CPUs it counted).
pub fn decode(bytes: &[u8], ncounters: usize, cpus: &[u32]) -> Result<Decoded, String> {
    let response = wire::Response::parse(bytes).map_err(|e| match e {
        wire::ParseError::Version(v) => format!(
            "{DEVICE_PATH} speaks wire format {v}, this arum {}: load the module built from the same source as arum",
            wire::VERSION
        ),
        wire::ParseError::Truncated => format!("short or truncated response from {DEVICE_PATH}"),
        other => format!("bad response from {DEVICE_PATH}: {other:?}"),
    })?;
    let h = response.header;
    if h.status != 0 {
        return Err(refusal(&h));
    }
    let column = |cpu: u32| cpus.iter().position(|&c| c == cpu);
    let mut counts = vec![vec![None; cpus.len()]; ncounters];
    for c in response.cpus() {
        let Some(k) = column(c.cpu) else { continue };
        for (e, slot) in counts.iter_mut().enumerate() {
            // An event this CPU's core type lacks (hybrid parts): no reading, as for a CPU
            // that was not counted.
            if c.flags & wire::CPU_COUNTER_ABSENT != 0 && c.time_enabled_ns[e] == 0 {
                continue;
            }
            slot[k] = Some(Reading {
                value: c.counts[e],
                enabled_ns: c.time_enabled_ns[e],
                running_ns: c.time_running_ns[e],
            });
        }
    }
    // The timer's samples: one per counting CPU for each recorded expiry (a CPU that was offline
    // has none for it).
    let mut series: Vec<Snapshot> = Vec::new();
    let mut current = None;
    for s in response.samples() {
        let Some(k) = column(s.cpu) else { continue };
        if current != Some(s.expiry) {
            current = Some(s.expiry);
            series.push(Snapshot {
                t_ns: 0,
                values: vec![vec![0u64; cpus.len()]; ncounters],
            });
        }
        let snap = series.last_mut().expect("pushed above");
        snap.t_ns = snap.t_ns.max(s.time_ns);
        for (e, row) in snap.values.iter_mut().enumerate() {
            row[k] = s.counts[e];
        }
    }
    Ok(Decoded {
        counts,
        series,
        facts: facts(&response),
    })
}

/// What the module says about how its counting went.
fn facts(r: &wire::Response<'_>) -> BackendFacts {
    let h = r.header;
    let mut notes = Vec::new();
    for (flag, what) in [
        (wire::RESPONSE_ANY_THREAD_CLEARED, "the module cleared the AnyThread bit of an event (it would count the sibling thread's events too)".to_string()),
        (wire::RESPONSE_SERIES_THINNED, format!("the module's time series outgrew its buffer: one sample per {} timer expiries", h.sample_stride.max(1))),
        (wire::RESPONSE_SUSPENDED, "the machine suspended during the run: the counters were stopped and re-armed around it".to_string()),
    ] {
        if h.flags & flag != 0 {
            notes.push(what);
        }
    }
    for c in r.cpus().filter(|c| c.flags != 0) {
        let cpu = c.cpu;
        for (flag, what) in [
            (
                wire::CPU_WENT_OFFLINE,
                "went offline during the run: its counts miss that time",
            ),
            (
                wire::CPU_OFFLINE_AT_END,
                "was offline when counting stopped",
            ),
            (
                wire::CPU_REARM_FAILED,
                "came back but could not be re-armed: its counts stop where it went away",
            ),
            (
                wire::CPU_COUNTED_BY_SIBLING,
                "is counted in its core sibling's record (NetBurst threads share counters)",
            ),
            (
                wire::CPU_INCLUDES_SIBLING,
                "counts both threads of its core (NetBurst threads share counters)",
            ),
            (
                wire::CPU_LATE_READ,
                "was read later than its counters can wrap: its counts may be short by whole wraps",
            ),
            (
                wire::CPU_COUNTER_ABSENT,
                "lacks some requested events (its core type's PMU has none of them): they have no count there",
            ),
        ] {
            if c.flags & flag != 0 {
                notes.push(format!("CPU {cpu} {what}"));
            }
        }
    }
    BackendFacts {
        start_spread_ns: Some(h.start_spread_ns),
        stop_spread_ns: Some(h.stop_spread_ns),
        notes,
    }
}

fn refusal(h: &wire::ResponseHeader) -> String {
    let mut s = format!(
        "{DEVICE_PATH} refused the request: {}",
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
    s
}

impl Backend for KmodBackend {
    /// Counting starts with the write, a few microseconds before the program is released. A
    /// module loaded with backend=1 programs registers itself and refuses perf-style requests as
    /// the wrong source: then the register-level request is sent.
    fn start(&self) -> Result<Vec<(usize, String)>, ArumError> {
        let mut outcome = self.write_request(&self.perf_request);
        if let (Err(WriteError::Refused(h)), Ok(m)) = (&outcome, &self.msr_request) {
            if h.error_code == wire::ERR_SOURCE {
                outcome = self.write_request(m);
            }
        }
        match outcome {
            Ok(()) => {
                *self.counting.lock().expect("not poisoned") = true;
                Ok(Vec::new())
            }
            Err(e) => {
                let why = match (&e, &self.msr_request) {
                    (WriteError::Refused(h), Err(m)) if h.error_code == wire::ERR_SOURCE => {
                        m.clone()
                    }
                    _ => e.to_string(),
                };
                Ok((0..self.ncounters).map(|i| (i, why.clone())).collect())
            }
        }
    }

    fn read(&self) -> Vec<Vec<Option<Reading>>> {
        match &*self.results.lock().expect("not poisoned") {
            Some(r) => r.counts.clone(),
            None => vec![vec![None; self.cpus.len()]; self.ncounters],
        }
    }

    /// Reading the response stops the module's counting.
    fn stop(&self) -> Result<(), String> {
        if !*self.counting.lock().expect("not poisoned") {
            return Ok(());
        }
        let mut bytes = Vec::new();
        self.device
            .lock()
            .expect("not poisoned")
            .read_to_end(&mut bytes)
            .map_err(|e| format!("reading {DEVICE_PATH}: {e}"))?;
        let decoded = decode(&bytes, self.ncounters, &self.cpus)?;
        *self.results.lock().expect("not poisoned") = Some(decoded);
        Ok(())
    }

    fn reference(&self) -> Option<Vec<Reading>> {
        None
    }

    fn takes_own_readings(&self) -> bool {
        true
    }

    fn facts(&self) -> BackendFacts {
        self.results
            .lock()
            .expect("not poisoned")
            .as_ref()
            .map(|r| r.facts.clone())
            .unwrap_or_default()
    }

    fn own_readings(&self) -> Vec<Snapshot> {
        self.results
            .lock()
            .expect("not poisoned")
            .as_ref()
            .map(|r| r.series.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A response as the module writes it: header, per-CPU counts, then samples.
    fn response(
        cpus: &[wire::CpuCounts],
        samples: &[wire::Sample],
        status: i32,
        flags: u32,
    ) -> Vec<u8> {
        let size = wire::HEADER_SIZE
            + cpus.len() * wire::CPU_COUNTS_SIZE
            + samples.len() * wire::SAMPLE_SIZE;
        let mut out = vec![0u8; size];
        wire::ResponseHeader {
            magic: wire::MAGIC,
            version: wire::VERSION,
            size: size as u32,
            status,
            error_code: if status == 0 { 0 } else { wire::ERR_SOURCE },
            error_cpu: wire::NO_CPU,
            error_counter: if status == 0 { wire::NO_COUNTER } else { 1 },
            ncpus: cpus.len() as u32,
            ncounters: 2,
            nsamples: samples.len() as u32,
            flags,
            start_spread_ns: 4_000,
            stop_spread_ns: 6_000,
            sample_stride: 1,
            ..Default::default()
        }
        .encode(&mut out);
        let mut at = wire::HEADER_SIZE;
        for c in cpus {
            c.encode(&mut out[at..]);
            at += wire::CPU_COUNTS_SIZE;
        }
        for s in samples {
            s.encode(&mut out[at..]);
            at += wire::SAMPLE_SIZE;
        }
        out
    }

    fn counts(cpu: u32, a: u64, b: u64) -> wire::CpuCounts {
        let mut c = wire::CpuCounts {
            cpu,
            ..Default::default()
        };
        c.counts[0] = a;
        c.counts[1] = b;
        c.time_enabled_ns[0] = 1000 + u64::from(cpu);
        c.time_enabled_ns[1] = 2000;
        c.time_running_ns[0] = 900;
        c.time_running_ns[1] = 2000;
        c
    }

    fn sample(cpu: u32, expiry: u32, t: u64, a: u64) -> wire::Sample {
        let mut s = wire::Sample {
            cpu,
            expiry,
            time_ns: t,
            ..Default::default()
        };
        s.counts[0] = a;
        s
    }

    #[test]
    fn an_event_a_cpus_core_type_lacks_has_no_reading_there() {
        // CPU 3 (an E-core, say) has no counter 0; counter 1 counts everywhere.
        let mut atom = counts(3, 0, 50);
        atom.flags = wire::CPU_COUNTER_ABSENT;
        atom.time_enabled_ns[0] = 0;
        atom.time_running_ns[0] = 0;
        let bytes = response(&[counts(2, 30, 40), atom], &[], 0, 0);
        let d = decode(&bytes, 2, &[2, 3]).unwrap();
        assert_eq!(d.counts[0][0].unwrap().value, 30);
        assert!(d.counts[0][1].is_none(), "{:?}", d.counts[0][1]);
        assert_eq!(d.counts[1][1].unwrap().value, 50);
        assert!(
            d.facts.notes.iter().any(|n| n.starts_with("CPU 3 lacks")),
            "{:?}",
            d.facts.notes
        );
    }

    #[test]
    fn counts_times_and_the_series_are_decoded_into_the_reports_cpu_order() {
        // The module answers in CPU-number order; the report lists CPUs 5 then 2.
        let bytes = response(
            &[counts(2, 30, 40), counts(5, 10, 20)],
            &[
                sample(2, 0, 100, 4),
                sample(5, 0, 105, 6),
                sample(2, 1, 200, 9),
                sample(5, 1, 190, 12),
                // CPU 5 was offline at expiry 2: no sample from it.
                sample(2, 2, 300, 11),
            ],
            0,
            0,
        );
        let d = decode(&bytes, 2, &[5, 2]).unwrap();
        assert_eq!(d.counts[0][0].unwrap().value, 10);
        assert_eq!(d.counts[0][1].unwrap().value, 30);
        // Each counter's own enabled and running times.
        assert_eq!(d.counts[0][0].unwrap().enabled_ns, 1005);
        assert_eq!(d.counts[0][0].unwrap().running_ns, 900);
        assert_eq!(d.counts[1][1].unwrap().enabled_ns, 2000);
        assert_eq!(d.series.len(), 3);
        // A tick's time is its latest CPU's; values are [event][cpu].
        assert_eq!(d.series[0].t_ns, 105);
        assert_eq!(d.series[1].values[0], [12, 9]);
        assert_eq!(d.series[2].values[0], [0, 11]);
        assert_eq!(d.facts.start_spread_ns, Some(4_000));
        assert!(d.facts.notes.is_empty());
    }

    #[test]
    fn the_modules_flags_become_notes() {
        let mut offline = counts(1, 1, 2);
        offline.flags = wire::CPU_WENT_OFFLINE | wire::CPU_LATE_READ;
        let bytes = response(
            &[counts(0, 1, 2), offline],
            &[],
            0,
            wire::RESPONSE_ANY_THREAD_CLEARED,
        );
        let d = decode(&bytes, 2, &[0, 1]).unwrap();
        let notes = d.facts.notes.join("\n");
        assert!(notes.contains("AnyThread"), "{notes}");
        assert!(notes.contains("CPU 1 went offline"), "{notes}");
        assert!(notes.contains("CPU 1 was read later"), "{notes}");
        assert_eq!(d.facts.notes.len(), 3);
    }

    #[test]
    fn a_refusal_names_the_check_the_event_and_the_errno() {
        let bytes = response(&[], &[], -libc::EINVAL, 0);
        let why = decode(&bytes, 2, &[0, 1]).unwrap_err();
        assert!(why.starts_with("/dev/arum refused the request: "), "{why}");
        assert!(why.contains("(event 2)"), "{why}");
        assert!(why.ends_with(": Invalid argument"), "{why}");
    }

    #[test]
    fn short_and_foreign_responses_are_errors_not_panics() {
        let full = response(&[counts(0, 1, 2)], &[sample(0, 0, 5, 1)], 0, 0);
        assert!(decode(&full[..10], 2, &[0])
            .unwrap_err()
            .contains("short or truncated"));
        assert!(decode(&full[..full.len() - 4], 2, &[0]).is_err());
        let mut other = full.clone();
        other[4..8].copy_from_slice(&(wire::VERSION + 1).to_le_bytes());
        assert!(decode(&other, 2, &[0])
            .unwrap_err()
            .contains("built from the same source"));
    }
}
