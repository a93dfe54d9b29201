//! What a probe hit costs on this machine, measured at start-up on a function of arum itself
//! whose first instruction is of the targets' class (`classes`): the same loop of calls timed
//! without probes, with entry and return probes recording as in the run, and with the entry
//! probe alone. The differences per call are the costs; the recorded durations
//! of the (nearly empty) function are the part of a hit that falls inside a measured call.
//!
//! Where the machine has a hardware cycle counter, the entry-probe rounds are also counted in
//! user-mode cycles: what a hit adds to the program's own (user-mode) time (the out-of-line step
//! of the probed instruction, the pipeline and caches disturbed). Sampling windows measure the
//! program's own time in those cycles (see `live`), where the kernel's microseconds do not count.
//!
//! Runs in `prepare`, before fork: arum is single-threaded and reads its own buffer directly.

use std::ffi::CString;
use std::os::fd::{AsFd, OwnedFd};

use crate::perf::records::pairing::{Costs, Paired, Pairing};
use crate::perf::records::parse::{parse, Record, SP_REGISTER};
use crate::perf::records::ring::Ring;
use crate::perf::sys;

use super::classes::Class;
use super::uprobe::{self, Probe, Site, Target, UprobePmu};

/// Calls per timed round, and rounds per configuration.
pub(super) const CALLS: usize = 100;
pub(super) const ROUNDS: usize = 7;

/// The calibrated costs, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeCost {
    /// The class of first instruction calibrated.
    pub class: Class,
    /// A call with entry and return probes, over the same call without.
    pub pair_ns: f64,
    /// A call with only the entry probe.
    pub entry_ns: f64,
    /// The measured duration of the nearly empty function: probe time inside an interval.
    pub inside_ns: f64,
    /// Half the range of the per-round pair costs: how much the cost itself varies.
    pub spread_ns: f64,
    /// The original ALMT probe-cost test: probed calls back to back, the time between
    /// consecutive entry records (one probed call each), their mean and standard deviation.
    pub back_to_back: BackToBack,
    /// With a hardware cycle counter: the user-mode cycles an entry-probe hit adds to a call.
    pub entry_user_cycles: Option<HitCycles>,
    pub calls: usize,
    pub rounds: usize,
}

/// What an entry-probe hit adds to a call in user-mode cycles, and half the range over rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HitCycles {
    pub per_hit: f64,
    pub spread: f64,
}

/// Intervals between consecutive probe records of back-to-back probed calls.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BackToBack {
    pub intervals: usize,
    pub mean_ns: f64,
    pub sd_ns: f64,
    /// Intervals are wall time: one in which arum lost its CPU is long; the median is not moved
    /// by a few of those.
    pub median_ns: f64,
}

impl BackToBack {
    fn of(intervals: &[f64]) -> BackToBack {
        let n = intervals.len();
        if n < 2 {
            return BackToBack::default();
        }
        let mean = intervals.iter().sum::<f64>() / n as f64;
        let var = intervals.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        BackToBack {
            intervals: n,
            mean_ns: mean,
            sd_ns: var.sqrt(),
            median_ns: arum_stats::median(intervals).unwrap_or(0.0),
        }
    }
}

impl ProbeCost {
    pub fn pairing_costs(&self) -> Costs {
        Costs {
            inside: self.inside_ns.max(0.0) as u64,
            pair: self.pair_ns.max(0.0) as u64,
        }
    }
}

/// Measures the costs; the reason when probes cannot be opened here. Also returns the
/// calibration's events, still open (disabled or never hit again): see the end of the function.
pub fn calibrate(pmu: &UprobePmu, class: Class) -> Result<(ProbeCost, Vec<OwnedFd>), String> {
    let (path, offset) =
        own_site(class.address()).ok_or("cannot find arum's own code in /proc/self/maps")?;
    let site = Site {
        path: &path,
        offset,
    };
    let target = Target::Task(0);
    let bare = rounds(class, thread_cpu_ns);
    let cycles = user_cycles_counter();
    let cycles_now = |fd: &OwnedFd| sys::read(fd.as_fd()).map_or(0, |r| r.value);
    let bare_cycles = cycles.as_ref().map(|fd| rounds(class, || cycles_now(fd)));

    let probe = |ret| Probe::Pmu { pmu, site, ret };
    let entry = uprobe::open_sampling(probe(false), target, -1)
        .map_err(|e| format!("cannot open a uprobe: {}", e.desc()))?;
    let ret = uprobe::open_sampling(probe(true), target, -1)
        .map_err(|e| format!("cannot open a uretprobe: {}", e.desc()))?;
    // As in the run: a counting probe on the same entry shares its hits.
    let counter = uprobe::open_counting(probe(false), target).ok();
    let mut ring = Ring::map(entry.as_fd(), 16)
        .map_err(|e| format!("cannot map a ring buffer: {}", e.desc()))?;
    sys::set_output(ret.as_fd(), entry.as_fd())
        .map_err(|e| format!("cannot share a ring buffer: {}", e.desc()))?;
    let mut recorded = Recorded::default();
    let mut buf = Vec::new();
    // The rounds with both probes and with the entry probe alone alternate: a virtual machine's
    // speed changes while they run, and a change between two blocks of rounds would put the
    // entry hit above the pair it is part of. The entry probe records in both, as it does in a
    // run whose function is throttled to counting; the entry-only rounds' records are dropped.
    // The return probe is only disabled in between: closing a probe's last event waits for the
    // kernel's grace periods (tens of milliseconds each), and this runs before the program
    // starts. The events are handed back, to be closed together once the program runs.
    let (mut both, mut entry_only) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
    for _ in 0..ROUNDS {
        both.push(round(class, thread_cpu_ns));
        recorded.drain_round(&mut ring, &mut buf, &entry, &ret);
        let _ = sys::disable(ret.as_fd());
        entry_only.push(round(class, thread_cpu_ns));
        buf.clear();
        ring.drain(&mut buf);
        let _ = sys::enable(ret.as_fd());
    }
    drop(ring);
    let _ = sys::disable(ret.as_fd());
    let entry_cycles = cycles.as_ref().map(|fd| rounds(class, || cycles_now(fd)));
    let events: Vec<OwnedFd> = [Some(entry), Some(ret), counter]
        .into_iter()
        .flatten()
        .collect();

    let cost = probe_cost(
        class,
        &bare,
        &both,
        &entry_only,
        &recorded,
        bare_cycles,
        entry_cycles,
    );
    Ok((cost, events))
}

/// What the probes recorded over the rounds with both probes: the durations they measured of
/// the calls, and the intervals between consecutive entries.
#[derive(Default)]
struct Recorded {
    inside: Vec<f64>,
    intervals: Vec<f64>,
}

impl Recorded {
    /// Drains one round's records from `ring` (through `buf`) and pairs them.
    fn drain_round(&mut self, ring: &mut Ring, buf: &mut Vec<u8>, entry: &OwnedFd, ret: &OwnedFd) {
        buf.clear();
        ring.drain(buf);
        let mut pairing = Pairing::new(Costs::default(), SP_REGISTER.map_or(0, |r| r.1));
        let (entry_id, ret_id) = (
            sys::id(entry.as_fd()).unwrap_or(0),
            sys::id(ret.as_fd()).unwrap_or(1),
        );
        // Within a round the calls are back to back; the gap before a round's first call is
        // the untimed draining, so intervals start at its second.
        let mut last_entry: Option<u64> = None;
        parse(buf, SP_REGISTER.is_some(), |r| {
            if let Record::Sample(s) = r {
                if s.id == entry_id {
                    if let Some(t) = last_entry {
                        self.intervals.push(s.time.saturating_sub(t) as f64);
                    }
                    last_entry = Some(s.time);
                    pairing.enter(s.tid, (), s.time, s.sp);
                } else if s.id == ret_id {
                    pairing.leave(s.tid, (), s.time, s.sp, &mut |p| {
                        if let Paired::Call { inclusive, .. } = p {
                            self.inside.push(inclusive as f64);
                        }
                    });
                }
            }
        });
    }
}

/// The costs from the rounds' times per call: without probes (`bare`), with both probes
/// (`both`) and with the entry probe alone; the user-mode cycles likewise, where counted.
fn probe_cost(
    class: Class,
    bare: &[f64],
    both: &[f64],
    entry_only: &[f64],
    recorded: &Recorded,
    bare_cycles: Option<Vec<f64>>,
    entry_cycles: Option<Vec<f64>>,
) -> ProbeCost {
    let base = arum_stats::median(bare).unwrap_or(0.0);
    let pair: Vec<f64> = both.iter().map(|t| t - base).collect();
    let spread = (pair.iter().cloned().fold(f64::MIN, f64::max)
        - pair.iter().cloned().fold(f64::MAX, f64::min))
        / 2.0;
    ProbeCost {
        class,
        pair_ns: arum_stats::median(&pair).unwrap_or(0.0).max(0.0),
        entry_ns: (arum_stats::median(entry_only).unwrap_or(0.0) - base).max(0.0),
        inside_ns: if recorded.inside.is_empty() {
            0.0
        } else {
            arum_stats::median(&recorded.inside).unwrap_or(0.0)
        },
        spread_ns: spread.max(0.0),
        back_to_back: BackToBack::of(&recorded.intervals),
        entry_user_cycles: bare_cycles
            .zip(entry_cycles)
            .and_then(|(bare, entry)| hit_cycles(&bare, &entry)),
        calls: CALLS,
        rounds: ROUNDS,
    }
}

/// Probes are timed by this thread's CPU time: probe hits are handled on the thread that hits
/// them, and unlike wall time it does not count the moments another task had the CPU (the
/// machine may be busy).
pub(super) use crate::periodic::thread_cpu_ns;

/// This thread's user-mode cycles, counted by the hardware; None without a PMU (our VMs: ENOENT).
fn user_cycles_counter() -> Option<OwnedFd> {
    sys::open(
        &sys::Attr {
            type_: 0,  // PERF_TYPE_HARDWARE
            config: 0, // PERF_COUNT_HW_CPU_CYCLES
            exclude_kernel: true,
            ..sys::Attr::default()
        },
        0,
        -1,
        None,
    )
    .ok()
}

/// The user-mode cycles an entry hit adds, from per-call cycles without and with the probe;
/// None when the counter counted nothing (a PMU that does not count user mode).
fn hit_cycles(bare: &[f64], entry: &[f64]) -> Option<HitCycles> {
    let base = arum_stats::median(bare).unwrap_or(0.0);
    if base <= 0.0 {
        return None;
    }
    let added: Vec<f64> = entry.iter().map(|c| c - base).collect();
    let spread = (added.iter().cloned().fold(f64::MIN, f64::max)
        - added.iter().cloned().fold(f64::MAX, f64::min))
        / 2.0;
    Some(HitCycles {
        per_hit: arum_stats::median(&added).unwrap_or(0.0).max(0.0),
        spread: spread.max(0.0),
    })
}

/// Per call of `class`'s function, what `clock` advanced in each of ROUNDS rounds.
pub(super) fn rounds(class: Class, clock: impl Fn() -> u64) -> Vec<f64> {
    (0..ROUNDS).map(|_| round(class, &clock)).collect()
}

/// One round: the `clock` time per call of `class`'s function over CALLS calls.
pub(super) fn round(class: Class, clock: impl Fn() -> u64) -> f64 {
    let t = clock();
    let mut x = 0u64;
    for _ in 0..CALLS {
        x = class.call(std::hint::black_box(x));
    }
    std::hint::black_box(x);
    clock().saturating_sub(t) as f64 / CALLS as f64
}

/// The file and offset of the code at `address` in this process, from /proc/self/maps. The path
/// given to the kernel is /proc/self/exe when the code is arum's own, which names the file even if
/// it was replaced on disk since arum started.
pub(super) fn own_site(address: usize) -> Option<(CString, u64)> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let exe = std::fs::read_link("/proc/self/exe").ok();
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let range = f.next()?;
        let _perms = f.next()?;
        let offset = u64::from_str_radix(f.next()?, 16).ok()?;
        let (_dev, _inode) = (f.next()?, f.next()?);
        let path = f.collect::<Vec<_>>().join(" ");
        let (start, end) = range.split_once('-')?;
        let (start, end) = (
            usize::from_str_radix(start, 16).ok()?,
            usize::from_str_radix(end, 16).ok()?,
        );
        if (start..end).contains(&address) {
            let own = exe
                .as_ref()
                .is_some_and(|e| path.trim_end_matches(" (deleted)") == e.to_string_lossy());
            let name = if own {
                "/proc/self/exe".to_string()
            } else {
                path
            };
            return Some((CString::new(name).ok()?, (address - start) as u64 + offset));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_code_is_found_at_the_offset_holding_its_bytes() {
        let address = Class::Stepped.address();
        let (path, offset) = own_site(address).unwrap();
        assert_eq!(path.to_str().unwrap(), "/proc/self/exe");
        let file = std::fs::read("/proc/self/exe").unwrap();
        let at = offset as usize;
        // SAFETY: the function's code is mapped readable and at least 4 bytes long.
        let mem = unsafe { std::slice::from_raw_parts(address as *const u8, 4) };
        assert_eq!(&file[at..at + 4], mem);
    }

    #[test]
    fn back_to_back_mean_and_sample_standard_deviation() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
        let b = BackToBack::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(b.intervals, 8);
        assert_eq!(b.mean_ns, 5.0);
        assert!((b.sd_ns - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(b.median_ns, 4.5);
        assert_eq!(BackToBack::of(&[3.0]), BackToBack::default());
    }

    #[test]
    fn a_hit_in_cycles_is_the_median_added_with_its_spread() {
        let h = hit_cycles(&[10.0, 11.0, 10.0], &[40.0, 44.0, 42.0]).unwrap();
        assert_eq!(h.per_hit, 32.0);
        assert_eq!(h.spread, 2.0);
        // A counter that never counted: no figure rather than a hit of 0 cycles.
        assert_eq!(hit_cycles(&[0.0, 0.0], &[0.0, 0.0]), None);
    }
}
