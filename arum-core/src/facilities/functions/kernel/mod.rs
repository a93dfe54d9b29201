//! The in-kernel engine of `-F` (arum-bpf): every call of the probed functions counted, timed
//! and paired in BPF maps. One uprobe_multi link per file: attaching or detaching a hundred
//! functions is one operation each. Nothing passes through a ring buffer, so no call is lost at
//! any rate; the counts are exact for as long as a function is probed.
//!
//! ```text
//!  start      each target's class (its first instruction); per class, arum's own function of
//!             that class timed bare, probed and counted: its costs; every target's corrections
//!             set in the program (durations lose their own probes' time in the kernel)
//!  live       the reader (`live`): judges functions too short or over the budget: counted only
//!             (one hit a call), then unprobed (none); calls per -I interval
//!  section    the report from the maps (`section`)
//! ```

pub mod live;
pub mod section;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use arum_bpf::functions::{Coldness, Corrections, FunctionCounter, Site};
use arum_bpf::{hist, Unavailable};

use super::calibrate::{self, own_site, thread_cpu_ns};
use super::classes::Class;
use super::targets::Target;

/// What a probe costs on a function of one class, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassCost {
    pub class: Class,
    /// A call timed (entry and return), over the same call without probes.
    pub pair_ns: f64,
    /// A call counted only (entry).
    pub entry_ns: f64,
    /// The part of a timed call's probes inside its own measured interval.
    pub inside_ns: f64,
    /// Half the range of the per-round pair costs.
    pub spread_ns: f64,
    /// How the inside part grows with the caches evicted.
    pub cold: Cold,
}

/// A class's inside part with the caches warm (the rounds) and evicted (between the calls of a
/// cold round, [`cold_round`]), against how long the program's entry run took in each: the program
/// moves every call's inside part by `slope` per nanosecond of its entry run's distance from
/// `run_warm_ns`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cold {
    /// Medians of the entry's run of the program.
    pub run_warm_ns: f64,
    pub run_cold_ns: f64,
    /// Median inside part with the caches evicted (warm: [`ClassCost::inside_ns`]).
    pub inside_cold_ns: f64,
    /// 0 where the two runs were too close to tell a slope.
    pub slope: f64,
}

/// Calls in a class's cold round, each after [`EVICTED`] bytes were written: with the buffer's
/// page faults about 5 ms of CPU time a run on a 2-core EPYC VM (docs/functions.md, "Cold
/// caches").
const COLD_CALLS: usize = 32;
const EVICTED: usize = 4 << 20;

/// The least distance between the warm and the cold entry runs that tells a slope: a few of
/// the histogram's buckets at these lengths.
const MIN_RUN_GAP_NS: f64 = 40.0;

/// The steepest slope believed: the part of a hit the program cannot time is a few times the
/// part it can, not more.
const MAX_SLOPE: f64 = 4.0;

/// How many warm-to-cold gaps past the warm run a call's entry run still moves its inside
/// part: beyond, the run was long for another reason (an interrupt during it) that did not slow
/// the rest of the hit.
const RUN_REACH: f64 = 4.0;

impl Cold {
    /// From the two medians of each; a slope only where the runs are far enough apart.
    fn from_medians(
        run_warm_ns: f64,
        run_cold_ns: f64,
        inside_warm_ns: f64,
        inside_cold_ns: f64,
    ) -> Cold {
        let gap = run_cold_ns - run_warm_ns;
        let slope = if gap >= MIN_RUN_GAP_NS {
            ((inside_cold_ns - inside_warm_ns) / gap).clamp(0.0, MAX_SLOPE)
        } else {
            0.0
        };
        Cold {
            run_warm_ns,
            run_cold_ns,
            inside_cold_ns,
            slope,
        }
    }

    fn coldness(&self) -> Coldness {
        let ns = |v: f64| v.max(0.0).round() as u32;
        let gap = (self.run_cold_ns - self.run_warm_ns).max(0.0);
        Coldness {
            run_base_ns: ns(self.run_warm_ns),
            run_max_ns: ns(self.run_warm_ns + RUN_REACH * gap),
            slope_1024: ns(self.slope * 1024.0),
        }
    }
}

impl ClassCost {
    /// The program's corrections for a function of this class; `first_ns`: see
    /// [`Kernel::first_call`].
    fn corrections(&self, first_ns: f64) -> Corrections {
        let ns = |v: f64| v.max(0.0).round() as u32;
        Corrections {
            inside_ns: ns(self.inside_ns),
            outside_ns: ns(self.pair_ns - self.inside_ns),
            entry_ns: ns(self.entry_ns),
            first_ns: ns(first_ns),
            cold: self.cold.coldness(),
        }
    }
}

/// The loaded engine with its probes attached, following nothing yet.
pub struct Kernel {
    pub counter: FunctionCounter,
    /// Per target: its class's cost.
    pub costs: Vec<ClassCost>,
    /// The classes calibrated, in class order.
    pub classes: Vec<ClassCost>,
    /// What a process's first timed call holds beyond its probes' usual time: the kernel makes
    /// the page the process's return probes go through during that call's hits (the program
    /// takes it out of that call), and half the range of the fresh processes' figures. None
    /// where it could not be measured (nothing taken out).
    pub first_call: Option<Spread>,
}

/// A median and half the range of the figures it is the median of, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median_ns: f64,
    pub spread_ns: f64,
}

impl Kernel {
    /// Probes `targets` and calibrates the classes they are of.
    pub fn start(targets: &[Target]) -> Result<Kernel, Unavailable> {
        let class_of: Vec<Class> = targets
            .iter()
            .map(|t| Class::of_file(&t.file, t.offset))
            .collect();
        let mut wanted = class_of.clone();
        wanted.sort_unstable();
        wanted.dedup();
        let mut sites: Vec<Site> = targets
            .iter()
            .map(|t| Site {
                path: PathBuf::from(OsString::from_vec(t.path.as_bytes().to_vec())),
                offset: t.offset,
            })
            .collect();
        for class in &wanted {
            let (path, offset) = own_site(class.address()).ok_or_else(|| {
                Unavailable("cannot find arum's own code in /proc/self/maps".into())
            })?;
            sites.push(Site {
                path: PathBuf::from(OsString::from_vec(path.into_bytes())),
                offset,
            });
        }
        // Without probes first: once attached, every call of the targets traps.
        let bare: Vec<Vec<f64>> = wanted.iter().map(|&c| rounds(c)).collect();
        let mut counter = FunctionCounter::start(&sites)?;
        let (classes, first_call) = calibrate(&mut counter, targets.len(), &wanted, &bare)?;
        let cost_of: BTreeMap<Class, ClassCost> = classes.iter().map(|c| (c.class, *c)).collect();
        let costs: Vec<ClassCost> = class_of.iter().map(|c| cost_of[c]).collect();
        let first_ns = first_call.map_or(0.0, |f| f.median_ns);
        for (i, cost) in costs.iter().enumerate() {
            counter.correct(i as u32, cost.corrections(first_ns))?;
        }
        Ok(Kernel {
            counter,
            costs,
            classes,
            first_call,
        })
    }
}

/// The costs of each class in `wanted` (calibration functions at `first..`), from the rounds'
/// CPU time per call without probes (`bare`), timed, and counted only; the inside part is the
/// median of what the program measured of the nearly empty calls. With them, what a process's
/// first timed call holds more (see [`first_calls`]).
fn calibrate(
    counter: &mut FunctionCounter,
    first: usize,
    wanted: &[Class],
    bare: &[Vec<f64>],
) -> Result<(Vec<ClassCost>, Option<Spread>), Unavailable> {
    let me = std::process::id();
    for k in 0..wanted.len() {
        counter.record_runs((first + k) as u32)?;
    }
    counter.follow_running(me)?;
    let (timed, counted) = timed_and_counted(counter, first, wanted)?;
    let first_calls = first_calls(counter, first as u32, wanted[0]);
    // Each class's cold round calls its own function only: one reading before them all and
    // one after give every class's warm calls and cold ones.
    let warm = counter.histograms_now()?;
    let mut evicted = vec![0u8; EVICTED];
    for &class in wanted {
        cold_round(class, &mut evicted);
    }
    let after = counter.histograms_now()?;
    counter.unfollow(me)?;
    let median =
        |h: &[(u32, u64)]| arum_stats::quantile_of_buckets(hist::values(h), 0.5).unwrap_or(0.0);
    let mut out = Vec::new();
    for (k, &class) in wanted.iter().enumerate() {
        let index = (first + k) as u32;
        let inside = median(warm.inclusive(index));
        let cold = Cold::from_medians(
            median(warm.entry_runs(index)),
            median(&less(after.entry_runs(index), warm.entry_runs(index))),
            inside,
            median(&less(after.inclusive(index), warm.inclusive(index))),
        );
        counter.ignore(index)?;
        let base = arum_stats::median(&bare[k]).unwrap_or(0.0);
        let pair: Vec<f64> = timed[k].iter().map(|t| t - base).collect();
        let (lo, hi) = pair
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let pair_ns = arum_stats::median(&pair).unwrap_or(0.0).max(0.0);
        out.push(ClassCost {
            class,
            pair_ns,
            entry_ns: (arum_stats::median(&counted[k]).unwrap_or(0.0) - base).max(0.0),
            inside_ns: inside.min(pair_ns),
            spread_ns: ((hi - lo) / 2.0).max(0.0),
            cold,
        });
    }
    // The first calls were measured with nothing taken out: beyond their class's inside part
    // and the call's own time, the rest is the first call's.
    let first_call = arum_stats::median(&first_calls).map(|m| {
        let base = arum_stats::median(&bare[0]).unwrap_or(0.0);
        let (lo, hi) = first_calls
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        Spread {
            median_ns: (m - out[0].inside_ns - base).max(0.0),
            spread_ns: (hi - lo) / 2.0,
        }
    });
    Ok((out, first_call))
}

/// Histogram `after` less `before` (taken earlier of the same function): the calls between.
fn less(after: &[(u32, u64)], before: &[(u32, u64)]) -> Vec<(u32, u64)> {
    let earlier: BTreeMap<u32, u64> = before.iter().copied().collect();
    after
        .iter()
        .map(|&(b, n)| (b, n.saturating_sub(earlier.get(&b).copied().unwrap_or(0))))
        .filter(|&(_, n)| n > 0)
        .collect()
}

/// [`COLD_CALLS`] calls of `class`'s function, each after `evicted` was written through, which
/// evicts the kernel's probe paths from the caches as a program working through megabytes does.
/// The function's own code is read back first: its misses are the function's, not the probes'.
fn cold_round(class: Class, evicted: &mut [u8]) {
    for _ in 0..COLD_CALLS {
        for line in evicted.chunks_mut(64) {
            line[0] = line[0].wrapping_add(1);
        }
        std::hint::black_box(&mut *evicted);
        class.touch_code();
        std::hint::black_box(class.call(std::hint::black_box(1)));
    }
}

/// How many fresh processes make one first call each for [`first_calls`].
const FIRST_CALLS: usize = 5;

/// Set in the environment of a process started from arum's own executable: it makes one call of
/// arum's function of the class named, then exits ([`first_call_if_asked`]). Only the processes
/// [`first_calls`] starts have it; the launched program's environment is the user's.
const FIRST_CALL_VAR: &str = "ARUM_PROBE_FIRST_CALL";

/// At the start of arum's `main`: in a process [`first_calls`] started, the one call, then the
/// process's end. Anywhere else nothing.
pub fn first_call_if_asked() {
    let Some(name) = std::env::var_os(FIRST_CALL_VAR) else {
        return;
    };
    let class = Class::ALL.into_iter().find(|c| name == c.name());
    if let Some(class) = class {
        std::hint::black_box(class.call(std::hint::black_box(1)));
    }
    std::process::exit(if class.is_some() { 0 } else { 1 });
}

/// The measured intervals (no probe time taken out yet) of the first timed calls of fresh
/// processes, as a probed program's first call happens: each one arum's own executable,
/// started anew and followed from its start as arum's children are, calling arum's function
/// of `class` (index `index`) once.
fn first_calls(counter: &FunctionCounter, index: u32, class: Class) -> Vec<f64> {
    let mut out = Vec::with_capacity(FIRST_CALLS);
    let Ok(exe) = std::env::current_exe() else {
        return out;
    };
    for _ in 0..FIRST_CALLS {
        let Ok(before) = counter.progress(index) else {
            break;
        };
        let Ok(mut child) = std::process::Command::new(&exe)
            .env(FIRST_CALL_VAR, class.name())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
        else {
            break;
        };
        let ended = child.wait();
        // Its pid may be reused by a process that is none of the tree's.
        let _ = counter.unfollow(child.id());
        let Ok(after) = counter.progress(index) else {
            break;
        };
        if ended.is_ok_and(|s| s.success()) && after.timed == before.timed + 1 {
            out.push(after.inclusive_ns.saturating_sub(before.inclusive_ns) as f64);
        }
    }
    out
}

/// Per round, the CPU time per call of `class`'s own function (see [`calibrate::rounds`]).
fn rounds(class: Class) -> Vec<f64> {
    warm_up(class);
    calibrate::rounds(class, thread_cpu_ns)
}

/// A round of `class`'s function, untimed: a thread's first hits set up what the kernel keeps
/// for it (its uprobe task, the page its instructions are stepped in), which no later hit pays.
fn warm_up(class: Class) {
    calibrate::round(class, || 0);
}

/// Per class, per round, the CPU time per call.
type PerClass = Vec<Vec<f64>>;

/// Per class in `wanted` (functions at `first..`), the rounds timed (entry and return probes)
/// and the rounds only counted (entry probe). The two alternate round by round: a virtual
/// machine's speed changes while they run, and a change between two blocks of rounds would put
/// the entry hit above the pair it is part of. The functions are left timed.
fn timed_and_counted(
    counter: &mut FunctionCounter,
    first: usize,
    wanted: &[Class],
) -> Result<(PerClass, PerClass), Unavailable> {
    let mut timed = vec![Vec::with_capacity(calibrate::ROUNDS); wanted.len()];
    let mut counted = timed.clone();
    wanted.iter().copied().for_each(warm_up);
    for _ in 0..calibrate::ROUNDS {
        for (k, &class) in wanted.iter().enumerate() {
            let index = (first + k) as u32;
            timed[k].push(calibrate::round(class, thread_cpu_ns));
            counter.count_only(index, true)?;
            counted[k].push(calibrate::round(class, thread_cpu_ns));
            counter.count_only(index, false)?;
        }
    }
    Ok((timed, counted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slope_is_the_inside_growth_per_ns_of_entry_run_within_bounds() {
        // Any warm run, gap and growth: a slope only past the least gap, never over the cap.
        for warm in [0.0, 150.0, 301.0, 2_000.0] {
            for gap in [-200.0, 0.0, 39.0, 40.0, 300.0, 900.0] {
                for growth in [-100.0, 0.0, 250.0, 600.0, 10_000.0] {
                    let c = Cold::from_medians(warm, warm + gap, 800.0, 800.0 + growth);
                    let want = if gap < MIN_RUN_GAP_NS {
                        0.0
                    } else {
                        (growth / gap).clamp(0.0, MAX_SLOPE)
                    };
                    assert_eq!(c.slope, want, "warm {warm} gap {gap} growth {growth}");
                    let k = c.coldness();
                    assert_eq!(k.run_base_ns, warm.round() as u32);
                    assert!(k.run_max_ns >= k.run_base_ns, "{k:?}");
                    assert_eq!(k.slope_1024, (want * 1024.0).round() as u32);
                }
            }
        }
    }

    #[test]
    fn a_cold_round_is_the_histogram_after_less_the_one_before() {
        let before = [(10, 5), (12, 1), (20, 7)];
        let after = [(8, 2), (10, 5), (12, 4), (20, 9), (30, 1)];
        assert_eq!(less(&after, &before), [(8, 2), (12, 3), (20, 2), (30, 1)]);
        assert_eq!(less(&after, &[]), after);
        assert!(less(&before, &before).is_empty());
    }
}
