//! Timing itself: what reading the clock costs, and the overheads the other measurements
//! subtract (the fenced timer pair, the batch loop).

use std::hint::black_box;

use arum_tsc::{begin, end, read, read_ordered};

use crate::clock::empty_loop;
use crate::context::{Context, Entry, Group, Sink};
use crate::model::Unit;
use crate::sys;

pub const GROUP: Group = Group {
    name: "timing",
    title: "Timing itself",
    entries: &[RDTSC, RDTSCP, TIMER, CLOCK_GETTIME, LOOP],
    run,
};

const RDTSC: Entry = Entry {
    name: "timing.rdtsc",
    title: "RDTSC",
    method: "Differences of back-to-back RDTSC reads without fences, 1000 per round: the cost of \
             reading the counter when nothing waits for it.",
    unit: Unit::Ns,
};
const RDTSCP: Entry = Entry {
    name: "timing.rdtscp",
    title: "RDTSCP",
    method: "Differences of back-to-back RDTSCP reads (each waits for earlier instructions), \
             1000 per round.",
    unit: Unit::Ns,
};
const TIMER: Entry = Entry {
    name: "timing.timer",
    title: "fenced timer pair",
    method: "An empty region between the fenced reads every other measurement uses \
             (LFENCE, RDTSC, LFENCE ... LFENCE, RDTSC); its median is subtracted from \
             single-operation samples.",
    unit: Unit::Ns,
};
const CLOCK_GETTIME: Entry = Entry {
    name: "timing.clock_gettime",
    title: "clock_gettime(CLOCK_MONOTONIC)",
    method: "clock_gettime(CLOCK_MONOTONIC) through the C library and the vDSO, as programs \
             call it, in batches of 32.",
    unit: Unit::Ns,
};
const LOOP: Entry = Entry {
    name: "timing.loop",
    title: "batch loop iteration",
    method: "One iteration of the empty batch loop (its counter kept live), in batches of \
             1000; subtracted per operation from batched samples.",
    unit: Unit::Ns,
};

fn run(ctx: &mut Context, sink: &mut Sink) {
    let clock = ctx.clock.clone();
    let ns = |ticks: u64| clock.ticks_to_ns(ticks as f64);
    if ctx.wants(&RDTSC) {
        let l = ctx.limits(1);
        sink.measurements
            .push(ctx.measure(&RDTSC, None, 1, &l, |s| {
                for _ in 0..1000 {
                    let a = read();
                    let b = read();
                    s.push(ns(b.wrapping_sub(a)));
                }
                Ok::<_, String>(())
            }));
        ctx.finished(&RDTSC);
    }
    if ctx.wants(&RDTSCP) {
        let l = ctx.limits(1);
        sink.measurements
            .push(ctx.measure(&RDTSCP, None, 1, &l, |s| {
                for _ in 0..1000 {
                    let (a, _) = read_ordered();
                    let (b, _) = read_ordered();
                    s.push(ns(b.wrapping_sub(a)));
                }
                Ok::<_, String>(())
            }));
        ctx.finished(&RDTSCP);
    }
    if ctx.wants(&TIMER) {
        let l = ctx.limits(1);
        let mut m = ctx.measure(&TIMER, None, 1, &l, |s| {
            for _ in 0..1000 {
                let a = begin();
                let b = end();
                s.push(ns(b.wrapping_sub(a)));
            }
            Ok::<_, String>(())
        });
        m.details
            .insert("subtracted_ticks".into(), clock.timer_overhead);
        sink.measurements.push(m);
        ctx.finished(&TIMER);
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    ctx.measure_batches(sink, &CLOCK_GETTIME, 32, || {
        sys::cpu::clock_gettime_vdso(black_box(&mut ts));
    });
    if ctx.wants(&LOOP) {
        let l = ctx.limits(1);
        let mut m = ctx.measure(&LOOP, None, 1000, &l, |s| {
            let t0 = begin();
            empty_loop(1000);
            let t1 = end();
            let ticks = ((t1 - t0) as f64 - clock.timer_overhead).max(0.0) / 1000.0;
            s.push(clock.ticks_to_ns(ticks));
            Ok::<_, String>(())
        });
        m.details
            .insert("subtracted_ticks".into(), clock.loop_overhead);
        sink.measurements.push(m);
        ctx.finished(&LOOP);
    }
    if !clock.calibration.invariant {
        sink.notes.push(
            "the TSC is not invariant (CPUID 0x8000_0007 EDX bit 8 clear): its rate follows the \
             core clock, so nanosecond figures assume the frequency stayed as calibrated"
                .into(),
        );
    }
}
