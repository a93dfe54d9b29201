//! The inferences Hourglass draws from its trace (the paper's §4), one per module:
//! context-switch gaps (`switches`), gaps within a thread and the clock tick (`own_gaps`,
//! `tick`), deadlines of periodic threads (`deadlines`), dispatch latency (`latency`), the CPU
//! share each thread received (`share`). `switch_cost` (the paper's Figure 5 method) runs
//! experiments of its own and lives beside the engine.

pub mod deadlines;
pub mod latency;
pub mod own_gaps;
pub mod share;
pub mod stats;
pub mod switches;
pub mod tick;
pub mod timeline;

use arum_units::duration;
use serde::{Deserialize, Serialize};

use crate::experiment::{Experiment, Workload};
use crate::kernel::{HzSource, KernelFacts, TickMode};
use crate::threads::RunResult;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Analysis {
    pub shares: Vec<share::Share>,
    pub switches: Vec<switches::Switches>,
    pub own_gaps: Vec<own_gaps::OwnGaps>,
    pub ticks: Vec<TickVerdict>,
    pub deadlines: Vec<deadlines::Deadlines>,
    pub latency: Vec<latency::Latency>,
}

/// The inferred tick of one thread set against what the kernel says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickVerdict {
    pub thread: usize,
    /// The CPU the thread ran on most.
    pub cpu: usize,
    /// The source taken for the clock tick: the one matching the kernel's HZ, else the most
    /// populated.
    pub inferred_hz: Option<f64>,
    /// Every periodic source found, the most populated first.
    pub sources_hz: Vec<f64>,
    pub kernel_hz: Option<u32>,
    /// Whether the gaps agree with the kernel's tick behaviour on that CPU (`None`: the
    /// kernel did not say).
    pub agrees: Option<bool>,
    pub statement: String,
}

pub fn analyse(exp: &Experiment, run: &RunResult) -> Analysis {
    let t = timeline::Timeline::new(&run.records, exp.threads.len());
    let tb = &run.timebase;
    let windows: Vec<f64> = exp
        .threads
        .iter()
        .map(|s| {
            let (a, b) = s.window(exp.duration);
            (b - a).as_nanos() as f64
        })
        .collect();
    let own = own_gaps::analyse(&t, tb, &windows, run.kernel.hz);
    let ticks = own
        .iter()
        .map(|g| {
            let cpu = main_cpu(&t, g.thread);
            let hz: Vec<f64> = g.ticks.iter().map(|t| t.hz).collect();
            verdict(g.thread, cpu, &hz, g.at_kernel_hz.as_ref(), &run.kernel)
        })
        .collect();
    let of = |pred: fn(&Workload) -> bool| {
        exp.threads
            .iter()
            .enumerate()
            .filter(move |(_, s)| pred(&s.workload))
            .map(|(i, _)| i)
    };
    Analysis {
        shares: share::analyse(exp, &t, tb, &run.threads),
        switches: switches::analyse(&t, tb, exp.duration.as_secs_f64()),
        own_gaps: own,
        ticks,
        deadlines: of(|w| matches!(w, Workload::Periodic { .. } | Workload::CpuPeriodic { .. }))
            .map(|i| deadlines::analyse(&run.records, i, tb))
            .collect(),
        latency: of(|w| matches!(w, Workload::Lat { .. }))
            .map(|i| latency::analyse(&run.records, i))
            .collect(),
    }
}

fn main_cpu(t: &timeline::Timeline, thread: usize) -> usize {
    let mut per_cpu: std::collections::BTreeMap<u16, u64> = Default::default();
    for i in t.by_thread.get(thread).into_iter().flatten() {
        *per_cpu.entry(i.cpu).or_default() += i.end - i.start;
    }
    per_cpu
        .into_iter()
        .max_by_key(|&(_, ticks)| ticks)
        .map_or(0, |(c, _)| c as usize)
}

/// Sets the periodic sources found in a thread's gaps (and the lattice at the kernel's period,
/// if it holds) against the kernel's HZ and tick mode.
pub fn verdict(
    thread: usize,
    cpu: usize,
    sources_hz: &[f64],
    at_kernel_hz: Option<&tick::Tick>,
    k: &KernelFacts,
) -> TickVerdict {
    let busy_ticks = k.ticks_while_busy(cpu);
    let near_khz = |hz: f64| k.hz.is_some_and(|khz| (hz / khz as f64 - 1.0).abs() < 0.02);
    let found = sources_hz.iter().copied().find(|&hz| near_khz(hz));
    // Not among the strongest sources, but the gaps hold to the kernel's period.
    let checked = at_kernel_hz.map(|t| t.hz).filter(|&hz| near_khz(hz));
    let matching = found.or(checked);
    let in_step = in_step_source(sources_hz, k.hz).filter(|_| matching.is_none() && busy_ticks);
    let seen = Seen {
        matching,
        in_step,
        busy_ticks,
        timer_hz: k.timer_hz(cpu),
        mode: tick_mode(k, busy_ticks),
        source: hz_source(k),
        how: match (found, at_kernel_hz) {
            (None, Some(t)) => format!(
                " ({} gaps on that lattice, {:.0}% of the ticks expected while the thread ran; \
                 not the most frequent period)",
                t.on_lattice,
                t.coverage * 100.0
            ),
            _ => String::new(),
        },
        also: other_sources(sources_hz, matching, in_step),
    };
    let (agrees, statement) = seen.statement(sources_hz.first().copied(), k.hz);
    TickVerdict {
        thread,
        cpu,
        inferred_hz: matching.or(sources_hz.first().copied()),
        sources_hz: sources_hz.to_vec(),
        kernel_hz: k.hz,
        agrees,
        statement,
    }
}

/// Where the kernel's HZ was read.
fn hz_source(k: &KernelFacts) -> String {
    match &k.hz_source {
        Some(HzSource::Config(path)) => format!("CONFIG_HZ from {path}"),
        Some(HzSource::Jiffies) => "jiffies counted over the run".into(),
        None => String::new(),
    }
}

/// The kernel's tick mode, as it applies to a CPU that does (`busy_ticks`) or does not tick
/// while busy.
fn tick_mode(k: &KernelFacts, busy_ticks: bool) -> &'static str {
    match k.tick_mode {
        Some(TickMode::Periodic) => "the tick never stops (HZ_PERIODIC)",
        Some(TickMode::NohzIdle) => "NO_HZ_IDLE stops the tick only on idle CPUs",
        Some(TickMode::NohzFull) if busy_ticks => {
            "NO_HZ_FULL, but this CPU is not nohz_full, so it ticks while busy"
        }
        Some(TickMode::NohzFull) => "this CPU is nohz_full: tickless while one task runs",
        None => "tick mode unknown",
    }
}

fn every(hz: f64) -> String {
    format!("every {} ({hz:.1} Hz)", duration::format_ns(1e9 / hz))
}

/// A faster source at a multiple of HZ, whose lattice the tick's own gaps fall on (a hypervisor
/// that delivers the guest's timer on its own tick does this): it takes the tick's gaps as its
/// members. An off-phase tick would have stood out once that source was set aside, so with
/// none at HZ the gaps cannot tell an in-step tick from no tick.
fn in_step_source(sources_hz: &[f64], kernel_hz: Option<u32>) -> Option<f64> {
    sources_hz.iter().copied().find(|&hz| {
        kernel_hz.is_some_and(|khz| {
            let m = (hz / khz as f64).round();
            m >= 2.0 && (hz / (m * khz as f64) - 1.0).abs() < 0.02
        })
    })
}

/// The periodic sources other than the tick and the one in step with it, as a clause to add.
fn other_sources(sources_hz: &[f64], matching: Option<f64>, in_step: Option<f64>) -> String {
    let others: Vec<String> = sources_hz
        .iter()
        .copied()
        .filter(|&hz| Some(hz) != matching && Some(hz) != in_step)
        .map(every)
        .collect();
    if others.is_empty() {
        return String::new();
    }
    format!(
        "; gaps also recur {}: other periodic sources (the hypervisor's tick, a timer of \
         another task, another Hourglass thread's period)",
        others.join(" and ")
    )
}

/// What a thread's gaps showed of the tick, in the words of the verdict.
struct Seen {
    /// The source at the kernel's HZ.
    matching: Option<f64>,
    /// A source at a multiple of HZ that the tick's gaps may be in step with.
    in_step: Option<f64>,
    /// The thread's CPU ticks while busy.
    busy_ticks: bool,
    /// The local timer interrupts a second the thread's CPU took over the run, where known.
    timer_hz: Option<f64>,
    mode: &'static str,
    source: String,
    /// How the source at HZ was found, when it was not among the strongest.
    how: String,
    also: String,
}

impl Seen {
    /// Whether the gaps agree with the kernel's HZ and tick mode (`None`: they cannot tell),
    /// and the statement; `first` is the strongest source, `kernel_hz` the kernel's HZ.
    fn statement(&self, first: Option<f64>, kernel_hz: Option<u32>) -> (Option<bool>, String) {
        let Seen {
            mode,
            source,
            how,
            also,
            ..
        } = self;
        let busy_ticks = self.busy_ticks;
        // A CPU that should tick took fewer timer interrupts than HZ: the host delivered the
        // tick late and the kernel skipped the periods it missed, so no steady period is left
        // for the gaps to show.
        let late = self
            .timer_hz
            .zip(kernel_hz)
            .filter(|&(rate, khz)| busy_ticks && rate < 0.9 * f64::from(khz));
        if let (None, Some((rate, khz))) = (self.matching, late) {
            return (
                None,
                format!(
                    "no gaps recur at HZ={khz}: this CPU took {rate:.0} timer interrupts a \
                     second, fewer than HZ, so the host delivered the tick late and the kernel \
                     skipped the periods it missed; the tick's period cannot be judged here \
                     ({source}; {mode}){also}"
                ),
            );
        }
        match (self.matching, first, kernel_hz) {
            (Some(hz), _, Some(khz)) if !busy_ticks => (
                Some(false),
                format!(
                    "gaps recur {} at HZ={khz} although {mode}: another task shared the CPU, or \
                     the kernel kept the tick{also}",
                    every(hz)
                ),
            ),
            (Some(hz), _, Some(khz)) => (
                Some(true),
                format!(
                    "gaps recur {}{how}: the clock tick, matching HZ={khz} ({source}); {mode}{also}",
                    every(hz)
                ),
            ),
            (None, Some(_), Some(khz)) if !busy_ticks => (
                Some(true),
                format!("no gaps at HZ={khz}: tickless, as expected ({mode}){also}"),
            ),
            (None, Some(_), Some(khz)) => match self.in_step {
                Some(hz) => (
                    None,
                    format!(
                        "no gaps recur at HZ={khz} apart from those {}, a multiple of it: the \
                         tick's gaps may fall in step with that source, and the timing of gaps \
                         cannot tell them apart ({source}; {mode}){also}",
                        every(hz)
                    ),
                ),
                None => (
                    Some(false),
                    format!("no gaps recur at HZ={khz} ({source}; {mode}){also}"),
                ),
            },
            (None, Some(hz), None) => (
                None,
                format!(
                    "gaps recur {}: a clock tick at about {hz:.0} Hz (the kernel's HZ is not \
                     readable here){also}",
                    every(hz)
                ),
            ),
            (None, None, _) if !busy_ticks => (
                Some(true),
                format!("no periodic gaps: tickless, as expected ({mode})"),
            ),
            (None, None, Some(khz)) => (
                Some(false),
                format!(
                    "no periodic gaps, although the kernel ticks at HZ={khz} ({mode}): the tick's \
                     gaps were shorter than GAP, or the thread ran too little (run longer)"
                ),
            ),
            (None, None, None) => (
                None,
                "no periodic gaps (and the kernel's HZ is not readable here)".into(),
            ),
            (Some(_), _, None) => unreachable!("a match needs the kernel's HZ"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(hz: Option<u32>, mode: TickMode, nohz_full: Vec<usize>) -> KernelFacts {
        KernelFacts {
            release: "x".into(),
            hz,
            hz_source: hz.map(|_| HzSource::Config("/proc/config.gz".into())),
            tick_mode: Some(mode),
            nohz_full,
            preempt: None,
            local_timer_hz: vec![],
            stolen_ms: vec![],
        }
    }

    #[test]
    fn verdicts() {
        let k = kernel(Some(250), TickMode::NohzIdle, vec![]);
        let v = verdict(0, 1, &[1000.2, 250.4], None, &k);
        assert_eq!(v.agrees, Some(true));
        assert_eq!(v.inferred_hz, Some(250.4));
        assert!(v.statement.contains("HZ=250"), "{}", v.statement);
        assert!(
            v.statement.contains("every 999.8 µs (1000.2 Hz)"),
            "{}",
            v.statement
        );
        // Only a source at four times HZ: the tick may ride on it, the gaps cannot say.
        let v = verdict(0, 1, &[1000.0], None, &k);
        assert_eq!(v.agrees, None);
        assert!(v.statement.contains("in step"), "{}", v.statement);
        assert_eq!(verdict(0, 1, &[2000.0, 700.0], None, &k).agrees, None);
        // Sources that are not multiples of HZ leave the tick missing.
        assert_eq!(verdict(0, 1, &[300.0], None, &k).agrees, Some(false));
        // ... unless the CPU took fewer timer interrupts than HZ: then the gaps cannot say.
        let mut late = k.clone();
        late.timer_rates(&[(0, 0), (1, 0)], &[(0, 500), (1, 340)], 2.0);
        let v = verdict(0, 1, &[285.8, 100.0], None, &late);
        assert_eq!(v.agrees, None);
        assert!(
            v.statement.contains("170 timer interrupts"),
            "{}",
            v.statement
        );
        // A CPU that took its HZ is judged as before.
        assert_eq!(verdict(0, 0, &[300.0], None, &late).agrees, Some(false));
        assert_eq!(verdict(0, 1, &[250.1], None, &late).agrees, Some(true));
        assert_eq!(verdict(0, 1, &[1100.0], None, &k).agrees, Some(false));
        assert_eq!(verdict(0, 1, &[], None, &k).agrees, Some(false));
        let full = kernel(Some(1000), TickMode::NohzFull, vec![1]);
        assert_eq!(verdict(0, 1, &[], None, &full).agrees, Some(true));
        assert_eq!(verdict(0, 1, &[1000.0], None, &full).agrees, Some(false));
        assert_eq!(verdict(0, 1, &[250.0], None, &full).agrees, Some(true));
        assert_eq!(verdict(0, 0, &[], None, &full).agrees, Some(false));
        let unknown = kernel(None, TickMode::NohzIdle, vec![]);
        assert_eq!(verdict(0, 0, &[99.0], None, &unknown).agrees, None);
        // Not the strongest source, but the lattice at the kernel's period holds.
        let at = tick::Tick {
            period_ns: 4e6,
            hz: 250.0,
            on_lattice: 300,
            gaps: 2000,
            coverage: 0.6,
        };
        let v = verdict(0, 1, &[1000.0], Some(&at), &k);
        assert_eq!(v.agrees, Some(true));
        assert!(v.statement.contains("60%"), "{}", v.statement);
    }
}
