//! A grammar of /dev/arum requests with its own oracle. Each payload is a valid request (one of
//! the documented allowed events or counters) with at most one rule of the wire format broken,
//! picked here; so the answer the module must give — accepted, or refused with a given code and
//! counter — is known from the rule, not from the module's validator (`wire::validate`, which
//! the module compiles and `fuzz` shares, so a mistake in it would pass both).

use arum_wire as wire;

use super::{encode, with_cpus, Rng};

/// What the module under test programs.
#[derive(Clone, Copy)]
pub enum Target {
    /// The perf back-end (software events only count in the guest: it has no PMU).
    Perf,
    /// The register back-end with this layout (AMD or Intel style).
    Msr {
        style: u32,
        general: u32,
        fixed: u32,
    },
}

/// The answer a payload must get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Accepted,
    /// Refused with this `wire::ERR_*` code, naming this counter (`None`: none in particular).
    Refused(u32, Option<u32>),
}

pub struct Case {
    pub payload: Vec<u8>,
    pub expect: Expect,
    /// Which rule the payload breaks ("none" for a valid one).
    pub rule: &'static str,
}

/// The software events the perf back-end allows (docs/kmod.md): cpu-clock, task-clock, page
/// faults (all, minor, major), context switches, CPU migrations, alignment and emulation faults,
/// cgroup switches.
const SOFTWARE_ALLOWED: [u64; 10] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 11];
/// The kernel's generic hardware events: `config` below this.
const HARDWARE_EVENTS: u64 = 10;
/// Intel's and AMD's event-select interrupt enable, which a request may not set.
const EVTSEL_INT: u64 = 1 << 20;

/// One payload: a valid request for `target` on some of `online` CPUs, then, two times in
/// three, one rule broken.
pub fn case(rng: &mut Rng, target: Target, online: &[u32]) -> Case {
    let flags = [
        wire::FLAG_USER,
        wire::FLAG_KERNEL,
        wire::FLAG_USER | wire::FLAG_KERNEL,
    ][rng.below(3) as usize];
    let mut r = wire::Request::new(flags);
    let pick: Vec<u32> = online
        .iter()
        .copied()
        .filter(|_| rng.below(2) == 0)
        .collect();
    r = with_cpus(r, if pick.is_empty() { &online[..1] } else { &pick });
    let slots = match target {
        Target::Perf => 4,
        Target::Msr { general, fixed, .. } => (general + fixed).min(4),
    };
    let n = 1 + rng.below(u64::from(slots)) as usize;
    r.ncounters = n as u32;
    let mut indexes: Vec<u32> = match target {
        Target::Perf => Vec::new(),
        Target::Msr {
            general,
            fixed,
            style,
        } => (0..general)
            .chain(
                (0..if style == wire::STYLE_INTEL { fixed } else { 0 })
                    .map(|k| wire::FIXED_BASE + k),
            )
            .collect(),
    };
    for i in 0..n {
        r.counters[i] = match target {
            Target::Perf => wire::CounterRequest {
                source: wire::SOURCE_PERF,
                perf_type: wire::PERF_TYPE_SOFTWARE,
                config: SOFTWARE_ALLOWED[rng.below(10) as usize],
                ..Default::default()
            },
            Target::Msr { .. } => {
                let index = indexes.remove(rng.below(indexes.len() as u64) as usize);
                // Event select and unit mask: what every family allows.
                let config = if index >= wire::FIXED_BASE {
                    0
                } else {
                    rng.next() & 0xFFFF
                };
                wire::CounterRequest {
                    source: wire::SOURCE_MSR,
                    index,
                    config,
                    ..Default::default()
                }
            }
        };
    }
    if rng.below(4) == 0 {
        r.timer_period_ns = wire::MIN_PERIOD_NS + rng.below(100) * 1_000_000;
    }
    if rng.below(3) == 0 {
        return Case {
            payload: encode(&r),
            expect: Expect::Accepted,
            rule: "none",
        };
    }
    let k = rng.below(n as u64) as usize;
    let at = Some(k as u32);
    let refused = |code| Expect::Refused(code, None);
    let (rule, expect) = match rng.below(17) {
        0 => {
            let mut b = encode(&r);
            b.truncate(rng.below(b.len() as u64) as usize);
            let refusal = refused(wire::ERR_SIZE);
            return Case {
                payload: b,
                expect: refusal,
                rule: "short write",
            };
        }
        1 => {
            r.size = r.size.wrapping_add(1 + rng.below(64) as u32);
            ("size field", refused(wire::ERR_SIZE))
        }
        2 => {
            r.magic ^= 1 << rng.below(32);
            ("magic", refused(wire::ERR_MAGIC))
        }
        3 => {
            r.version = r.version.wrapping_add(1 + rng.below(1000) as u32);
            ("version", refused(wire::ERR_VERSION))
        }
        4 => {
            r.ncounters = wire::MAX_COUNTERS as u32 + 1 + rng.below(1000) as u32;
            ("too many counters", refused(wire::ERR_TOO_MANY_COUNTERS))
        }
        5 => {
            r.flags = 0;
            ("no mode", refused(wire::ERR_FLAGS))
        }
        6 => {
            r.flags |= 1 << (2 + rng.below(30));
            ("unknown flag", refused(wire::ERR_FLAGS))
        }
        7 => {
            r.reserved = 1 + rng.below(u64::from(u32::MAX - 1)) as u32;
            ("reserved header field", refused(wire::ERR_FLAGS))
        }
        8 => {
            r.timer_period_ns = 1 + rng.below(wire::MIN_PERIOD_NS - 1);
            ("period below the floor", refused(wire::ERR_PERIOD))
        }
        9 => {
            r.cpus = [0; wire::CPUMASK_WORDS];
            ("no CPUs", refused(wire::ERR_NO_CPUS))
        }
        10 => {
            let first_absent = online.iter().max().map_or(0, |m| m + 1);
            let cpu =
                first_absent + rng.below(wire::MAX_CPUS as u64 - u64::from(first_absent)) as u32;
            r.cpus[cpu as usize / 64] |= 1 << (cpu % 64);
            ("offline CPU", refused(wire::ERR_CPU_OFFLINE))
        }
        11 if n < wire::MAX_COUNTERS => {
            let slot = n + rng.below((wire::MAX_COUNTERS - n) as u64) as usize;
            r.counters[slot].config = 1 + rng.below(1000);
            (
                "unused counter slot",
                Expect::Refused(wire::ERR_RESERVED_BITS, Some(slot as u32)),
            )
        }
        rule => match target {
            Target::Perf => perf_rule(rng, &mut r.counters[k], rule, at),
            Target::Msr {
                style,
                general,
                fixed,
            } => msr_rule(rng, &mut r, k, rule, (style, general, fixed)),
        },
    };
    Case {
        payload: encode(&r),
        expect,
        rule,
    }
}

/// One rule of the perf back-end's counters broken in `c` (the request's counter `at`).
fn perf_rule(
    rng: &mut Rng,
    c: &mut wire::CounterRequest,
    rule: u64,
    at: Option<u32>,
) -> (&'static str, Expect) {
    let not_allowed = Expect::Refused(wire::ERR_EVENT_NOT_ALLOWED, at);
    match rule % 6 {
        0 => {
            // Tracepoints (2), breakpoints (5) and every dynamic PMU (6 and up).
            c.perf_type = [2, 5, 6 + rng.below(100) as u32][rng.below(3) as usize];
            ("perf type not allowed", not_allowed)
        }
        1 => {
            c.config = [9, 10, 12 + rng.below(100)][rng.below(3) as usize];
            ("software event not allowed", not_allowed)
        }
        2 => {
            c.perf_type = wire::PERF_TYPE_HARDWARE;
            c.config = HARDWARE_EVENTS + rng.below(1 << 40);
            ("hardware event out of range", not_allowed)
        }
        3 => {
            c.config1 = 1 + rng.below(1000);
            (
                "config1 of a non-raw event",
                Expect::Refused(wire::ERR_RESERVED_BITS, at),
            )
        }
        4 => {
            c.index = 1 + rng.below(40) as u32;
            (
                "register index on a perf counter",
                Expect::Refused(wire::ERR_RESERVED_BITS, at),
            )
        }
        _ => {
            c.source = wire::SOURCE_MSR;
            (
                "register source in a perf module",
                Expect::Refused(wire::ERR_SOURCE, at),
            )
        }
    }
}

/// One rule of the register back-end's counters broken in counter `k` of `r`.
fn msr_rule(
    rng: &mut Rng,
    r: &mut wire::Request,
    k: usize,
    rule: u64,
    (style, general, fixed): (u32, u32, u32),
) -> (&'static str, Expect) {
    let at = Some(k as u32);
    let c = &mut r.counters[k];
    match rule % 5 {
        0 => {
            let fixed_here = if style == wire::STYLE_INTEL { fixed } else { 0 };
            c.index = if rng.below(2) == 0 {
                general + rng.below(u64::from(wire::FIXED_BASE - general)) as u32
            } else {
                wire::FIXED_BASE + fixed_here + rng.below(64) as u32
            };
            c.config = 0;
            (
                "counter index out of range",
                Expect::Refused(wire::ERR_COUNTER_INDEX, at),
            )
        }
        1 => {
            c.config |= EVTSEL_INT;
            (
                "interrupt enable",
                Expect::Refused(wire::ERR_INTERRUPT_BIT, at),
            )
        }
        2 => {
            c.config |= 1 << 63;
            (
                "reserved event-select bit",
                Expect::Refused(wire::ERR_RESERVED_BITS, at),
            )
        }
        3 if k > 0 => {
            let earlier = r.counters[rng.below(k as u64) as usize].index;
            r.counters[k].index = earlier;
            r.counters[k].config = 0;
            (
                "counter named twice",
                Expect::Refused(wire::ERR_DUPLICATE_COUNTER, at),
            )
        }
        _ => {
            *c = wire::CounterRequest {
                source: wire::SOURCE_PERF,
                perf_type: wire::PERF_TYPE_SOFTWARE,
                config: 0,
                ..Default::default()
            };
            (
                "perf source in a register module",
                Expect::Refused(wire::ERR_SOURCE, at),
            )
        }
    }
}
