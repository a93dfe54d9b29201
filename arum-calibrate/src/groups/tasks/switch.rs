//! Context switches by the pipe ping-pong method: two tasks pass one byte back and forth over
//! two pipes, so that each round trip is two blocking reads, two writes and two switches; the
//! cost of a write and a read without a switch (one task writing to itself) is subtracted.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;

use crate::context::{skipped, Context, Entry, Sink, Taken};
use crate::sys::cpu::{pin_thread, Pinned};
use crate::sys::process::{fork_echo, wait_ok};

pub const PIPE: Entry = Entry::ns(
    "tasks.pipe",
    "pipe write + read, no switch",
    "write(2) of one byte into a pipe and read(2) of it back by the same thread: the part of a \
     ping-pong round trip that is not switching, subtracted twice from each.",
);
pub const PROCESS_SAME: Entry = Entry::ns(
    "tasks.switch.process.same_cpu",
    "context switch between processes, one CPU",
    "Pipe ping-pong between this process and a forked child, both pinned to one CPU; \
     (round trip - 2 x tasks.pipe) / 2.",
);
pub const PROCESS_CROSS: Entry = Entry::ns(
    "tasks.switch.process.cross_cpu",
    "context switch between processes, two CPUs",
    "The same ping-pong with the child pinned to a second CPU: each half is a wake-up of a \
     task on another CPU (an inter-processor interrupt, and leaving idle if that CPU slept).",
);
pub const THREAD_SAME: Entry = Entry::ns(
    "tasks.switch.thread.same_cpu",
    "context switch between threads, one CPU",
    "Pipe ping-pong between two threads of this process pinned to one CPU (no address-space \
     change); (round trip - 2 x tasks.pipe) / 2.",
);
pub const THREAD_CROSS: Entry = Entry::ns(
    "tasks.switch.thread.cross_cpu",
    "context switch between threads, two CPUs",
    "The thread ping-pong with the partner pinned to a second CPU.",
);

#[derive(Clone, Copy)]
enum Partner {
    Process,
    Thread,
}

const ROUND_TRIPS_PER_ROUND: usize = 50;

pub fn run(ctx: &mut Context, sink: &mut Sink) {
    let switches = [
        (&PROCESS_SAME, Partner::Process, false),
        (&PROCESS_CROSS, Partner::Process, true),
        (&THREAD_SAME, Partner::Thread, false),
        (&THREAD_CROSS, Partner::Thread, true),
    ];
    if !ctx.wants(&PIPE) && !switches.iter().any(|(e, _, _)| ctx.wants(e)) {
        return;
    }
    let home = ctx.cpus[0];
    let pipe_ns = if ctx.wants(&PIPE) {
        let m = {
            let _pin = Pinned::to(&[home]);
            measure_pipe(ctx)
        };
        let median = m.median();
        sink.measurements.push(m);
        ctx.finished(&PIPE);
        median
    } else {
        None
    };

    for (entry, partner, cross) in switches {
        if !ctx.wants(entry) {
            continue;
        }
        let m = match (pipe_ns, cross.then(|| ctx.cpus.get(1).copied())) {
            (None, _) => skipped(
                entry,
                None,
                "the pipe cost (tasks.pipe) could not be measured",
            ),
            (_, Some(None)) => skipped(
                entry,
                None,
                "only one CPU is available to this process (see its affinity mask)",
            ),
            (Some(pipe), other) => {
                let other = other.flatten().unwrap_or(home);
                match ping_pong(ctx, entry, partner, home, other) {
                    Ok(taken) => {
                        let rt = crate::stats::Summary::of(&taken.outcome.samples).median;
                        let mut taken = taken;
                        for x in &mut taken.outcome.samples {
                            *x = ((*x - 2.0 * pipe) / 2.0).max(0.0);
                        }
                        let mut m = ctx.record(entry, None, 1, taken);
                        m.details.insert("round_trip_ns".into(), rt);
                        m.details.insert("pipe_ns_subtracted".into(), pipe);
                        m.details.insert("cpu".into(), home as f64);
                        m.details.insert("partner_cpu".into(), other as f64);
                        m
                    }
                    Err(e) => skipped(entry, None, e),
                }
            }
        };
        sink.measurements.push(m);
        ctx.finished(entry);
    }
}

fn measure_pipe(ctx: &mut Context) -> crate::model::Measurement {
    let clock = ctx.clock.clone();
    let l = ctx.limits(1);
    let (r, w) = match nix::unistd::pipe() {
        Ok(p) => p,
        Err(e) => return skipped(&PIPE, None, format!("pipe: {e}")),
    };
    let (mut r, mut w) = (File::from(r), File::from(w));
    let mut b = [0u8; 1];
    ctx.measure(&PIPE, None, 1, &l, |s| {
        for _ in 0..ROUND_TRIPS_PER_ROUND {
            let (ns, res) = clock.single(|| {
                w.write_all(&[1])?;
                r.read_exact(&mut b)
            });
            res.map_err(|e| format!("pipe: {e}"))?;
            s.push(ns);
        }
        Ok::<_, String>(())
    })
}

/// Round-trip samples (ns) of a ping-pong with a partner on `other`, this thread on `home`.
fn ping_pong(
    ctx: &mut Context,
    entry: &Entry,
    partner: Partner,
    home: usize,
    other: usize,
) -> Result<Taken, String> {
    let err = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
    let (to_r, to_w) = nix::unistd::pipe().map_err(|e| err("pipe", &e))?;
    let (from_r, from_w) = nix::unistd::pipe().map_err(|e| err("pipe", &e))?;

    enum Running {
        Child(nix::unistd::Pid),
        Thread(std::thread::JoinHandle<()>),
    }
    let running = match partner {
        Partner::Process => {
            // The child inherits the placement of the thread that forks it.
            let pid = {
                let _pin = Pinned::to(&[other]).map_err(|e| err("sched_setaffinity", &e))?;
                fork_echo(
                    to_r.as_raw_fd(),
                    from_w.as_raw_fd(),
                    [to_w.as_raw_fd(), from_r.as_raw_fd()],
                )
                .map_err(|e| err("fork", &e))?
            };
            drop((to_r, from_w));
            Running::Child(pid)
        }
        Partner::Thread => {
            let (mut rx, mut tx) = (File::from(to_r), File::from(from_w));
            Running::Thread(std::thread::spawn(move || {
                let _ = pin_thread(other);
                let mut b = [0u8; 1];
                while rx.read_exact(&mut b).is_ok() && tx.write_all(&b).is_ok() {}
            }))
        }
    };

    let clock = ctx.clock.clone();
    let l = ctx.limits(1);
    let (mut tx, mut rx) = (File::from(to_w), File::from(from_r));
    let taken = {
        let _pin = Pinned::to(&[home]).map_err(|e| err("sched_setaffinity", &e))?;
        let mut b = [0u8; 1];
        ctx.take(entry.name, &l, |s| {
            for _ in 0..ROUND_TRIPS_PER_ROUND {
                let (ns, res) = clock.single(|| {
                    tx.write_all(&[1])?;
                    rx.read_exact(&mut b)
                });
                res.map_err(|e| err("ping-pong", &e))?;
                s.push(ns);
            }
            Ok::<_, String>(())
        })
    };
    // End of file on its pipe ends the partner's loop.
    drop((tx, rx));
    match running {
        Running::Child(pid) => wait_ok(pid).map_err(|e| err("the ping-pong child", &e))?,
        Running::Thread(t) => t
            .join()
            .map_err(|_| "the ping-pong thread panicked".to_string())?,
    }
    taken
}
