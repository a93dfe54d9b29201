//! CPU: procedure calls with 0-7 integer arguments, and system calls.

use std::fs::File;
use std::hint::black_box;
use std::io::Read;

use crate::clock::Clock;
use crate::context::{Context, Entry, Group, Sink};
use crate::model::Unit;
use crate::sys;

pub const GROUP: Group = Group {
    name: "cpu",
    title: "CPU and operating-system services",
    entries: &[
        CALL[0],
        CALL[1],
        CALL[2],
        CALL[3],
        CALL[4],
        CALL[5],
        CALL[6],
        CALL[7],
        GETPPID,
        CLOCK_GETTIME,
        READ,
    ],
    run,
};

const CALL_METHOD: &str = "A call through a function pointer the optimiser cannot see through \
    to an extern \"C\" function that is never inlined, with N integer arguments (the 7th on the \
    stack), in batches of 1000, the loop's cost subtracted.";

const fn call(name: &'static str, title: &'static str) -> Entry {
    Entry {
        name,
        title,
        method: CALL_METHOD,
        unit: Unit::Ns,
    }
}

const CALL: [Entry; 8] = [
    call("cpu.call.0", "procedure call, 0 arguments"),
    call("cpu.call.1", "procedure call, 1 argument"),
    call("cpu.call.2", "procedure call, 2 arguments"),
    call("cpu.call.3", "procedure call, 3 arguments"),
    call("cpu.call.4", "procedure call, 4 arguments"),
    call("cpu.call.5", "procedure call, 5 arguments"),
    call("cpu.call.6", "procedure call, 6 arguments"),
    call("cpu.call.7", "procedure call, 7 arguments"),
];
const GETPPID: Entry = Entry {
    name: "cpu.syscall.getppid",
    title: "minimal system call (getppid)",
    method: "getppid(2) through syscall(2), so that no C-library cache can answer, in batches \
             of 10: one entry into the kernel and back.",
    unit: Unit::Ns,
};
const CLOCK_GETTIME: Entry = Entry {
    name: "cpu.syscall.clock_gettime",
    title: "clock_gettime as a real system call",
    method: "clock_gettime(CLOCK_MONOTONIC) through syscall(2), the kernel path the vDSO \
             avoids, in batches of 10.",
    unit: Unit::Ns,
};
const READ: Entry = Entry {
    name: "cpu.syscall.read",
    title: "non-trivial system call (read 64 B from /dev/zero)",
    method: "read(2) of 64 bytes from /dev/zero: a file-descriptor lookup, a driver call and a \
             copy to user space, in batches of 10.",
    unit: Unit::Ns,
};

// The callees: distinct functions so each arity is its own call site; each uses its first and
// last argument so that every argument must be passed.
#[inline(never)]
extern "C" fn args0() -> u64 {
    0
}
#[inline(never)]
extern "C" fn args1(a: u64) -> u64 {
    a
}
#[inline(never)]
extern "C" fn args2(a: u64, b: u64) -> u64 {
    a.wrapping_add(b)
}
#[inline(never)]
extern "C" fn args3(a: u64, _: u64, c: u64) -> u64 {
    a.wrapping_add(c)
}
#[inline(never)]
extern "C" fn args4(a: u64, _: u64, _: u64, d: u64) -> u64 {
    a.wrapping_add(d)
}
#[inline(never)]
extern "C" fn args5(a: u64, _: u64, _: u64, _: u64, e: u64) -> u64 {
    a.wrapping_add(e)
}
#[inline(never)]
extern "C" fn args6(a: u64, _: u64, _: u64, _: u64, _: u64, f: u64) -> u64 {
    a.wrapping_add(f)
}
#[inline(never)]
extern "C" fn args7(a: u64, _: u64, _: u64, _: u64, _: u64, _: u64, g: u64) -> u64 {
    a.wrapping_add(g)
}

/// One batch of 1000 calls with `n` arguments; ns per call.
fn call_batch(c: &Clock, n: usize) -> f64 {
    let x = || black_box(1u64);
    match n {
        0 => {
            let f = black_box(args0 as extern "C" fn() -> u64);
            c.batch(1000, || {
                black_box(f());
            })
        }
        1 => {
            let f = black_box(args1 as extern "C" fn(u64) -> u64);
            c.batch(1000, || {
                black_box(f(x()));
            })
        }
        2 => {
            let f = black_box(args2 as extern "C" fn(u64, u64) -> u64);
            c.batch(1000, || {
                black_box(f(x(), x()));
            })
        }
        3 => {
            let f = black_box(args3 as extern "C" fn(u64, u64, u64) -> u64);
            c.batch(1000, || {
                black_box(f(x(), x(), x()));
            })
        }
        4 => {
            let f = black_box(args4 as extern "C" fn(u64, u64, u64, u64) -> u64);
            c.batch(1000, || {
                black_box(f(x(), x(), x(), x()));
            })
        }
        5 => {
            let f = black_box(args5 as extern "C" fn(u64, u64, u64, u64, u64) -> u64);
            c.batch(1000, || {
                black_box(f(x(), x(), x(), x(), x()));
            })
        }
        6 => {
            let f = black_box(args6 as extern "C" fn(u64, u64, u64, u64, u64, u64) -> u64);
            c.batch(1000, || {
                black_box(f(x(), x(), x(), x(), x(), x()));
            })
        }
        _ => {
            let f = black_box(args7 as extern "C" fn(u64, u64, u64, u64, u64, u64, u64) -> u64);
            c.batch(1000, || {
                black_box(f(x(), x(), x(), x(), x(), x(), x()));
            })
        }
    }
}

fn run(ctx: &mut Context, sink: &mut Sink) {
    let clock = ctx.clock.clone();
    for (n, entry) in CALL.iter().enumerate() {
        if ctx.wants(entry) {
            let l = ctx.limits(1);
            let mut m = ctx.measure(entry, None, 1000, &l, |s| {
                s.push(call_batch(&clock, n));
                Ok::<_, String>(())
            });
            m.details.insert("arguments".into(), n as f64);
            sink.measurements.push(m);
            ctx.finished(entry);
        }
    }
    ctx.measure_batches(sink, &GETPPID, 10, || {
        black_box(sys::cpu::getppid_syscall());
    });
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    ctx.measure_batches(sink, &CLOCK_GETTIME, 10, || {
        black_box(sys::cpu::clock_gettime_syscall(black_box(&mut ts)));
    });
    if ctx.wants(&READ) {
        let l = ctx.limits(1);
        let m = match File::open("/dev/zero") {
            Ok(mut zero) => {
                let mut buf = [0u8; 64];
                ctx.measure(&READ, None, 10, &l, |s| {
                    let mut err = None;
                    s.push(clock.batch(10, || {
                        if let Err(e) = zero.read_exact(black_box(&mut buf)) {
                            err = Some(e);
                        }
                    }));
                    err.map_or(Ok(()), |e| Err(format!("reading /dev/zero: {e}")))
                })
            }
            Err(e) => crate::context::skipped(&READ, None, format!("cannot open /dev/zero: {e}")),
        };
        sink.measurements.push(m);
        ctx.finished(&READ);
    }
}
