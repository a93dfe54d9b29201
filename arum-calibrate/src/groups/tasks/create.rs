//! Creating processes and threads, each way timed from the creating call to the reaping of the
//! child, one creation per sample.

use crate::context::{Context, Entry, Sink};
use crate::scratch::RemoveOnDrop;
use crate::sys::cpu::{own_cpu_ns, Pinned};
use crate::sys::process::{self, Exec, Stack};
use crate::tiny_elf;

pub const FORK: Entry = Entry::ns(
    "tasks.fork",
    "process creation: fork + exit + wait",
    "fork(2) of this process, the child calling _exit at once, reaped by waitpid(2): a new \
     process with a copy-on-write copy of this one's address space. Every creation is timed on \
     one CPU, where the new task runs while its creator waits; a sample that waited for the CPU \
     (wall time over twice the CPU time used) is taken again.",
);
pub const FORK_EXEC: Entry = Entry::ns(
    "tasks.fork_exec",
    "process creation: fork + exec + wait",
    "fork(2), then execve(2) of a 132-byte static program that exits at once, reaped by \
     waitpid(2).",
);
pub const VFORK_EXEC: Entry = Entry::ns(
    "tasks.vfork_exec",
    "process creation: vfork + exec + wait",
    "clone(2) with CLONE_VM|CLONE_VFORK on a stack of its own (vfork semantics: no copy of the \
     address space), then execve(2) of the same static program, reaped by waitpid(2).",
);
pub const POSIX_SPAWN: Entry = Entry::ns(
    "tasks.posix_spawn",
    "process creation: posix_spawn + wait",
    "posix_spawn(3) of the same static program (the C library's own vfork-style path), reaped \
     by waitpid(2).",
);
pub const PTHREAD: Entry = Entry::ns(
    "tasks.thread.pthread",
    "thread creation: pthread_create + join",
    "pthread_create(3) of a thread that returns at once, then pthread_join(3).",
);
pub const CLONE: Entry = Entry::ns(
    "tasks.thread.clone",
    "thread creation: raw clone + wait",
    "clone(2) with CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_IO on a preallocated stack, \
     a task that returns at once, reaped by waitpid(2): a thread without a thread library's \
     bookkeeping.",
);

pub fn run(ctx: &mut Context, sink: &mut Sink) {
    creation(ctx, sink, &FORK, &mut process::fork_exit_wait);

    let wanted_exec = [&FORK_EXEC, &VFORK_EXEC, &POSIX_SPAWN];
    if wanted_exec.iter().any(|e| ctx.wants(e)) {
        let dir = ctx.settings.dir.clone();
        let written = tiny_elf::write_into(&dir);
        let _cleanup = written.as_ref().ok().map(|p| RemoveOnDrop(p.clone()));
        match written.and_then(|p| Exec::new(&p)) {
            // A first run tells a directory mounted noexec apart from a working set-up.
            Ok(exec) => match process::fork_exec_wait(&exec) {
                Ok(()) => {
                    let mut stack = Stack::new();
                    creation(ctx, sink, &FORK_EXEC, &mut || {
                        process::fork_exec_wait(&exec)
                    });
                    creation(ctx, sink, &VFORK_EXEC, &mut || {
                        process::vfork_exec_wait(&exec, &mut stack)
                    });
                    creation(ctx, sink, &POSIX_SPAWN, &mut || {
                        process::posix_spawn_wait(&exec)
                    });
                }
                Err(e) => ctx.skip(
                    sink,
                    &wanted_exec,
                    &format!(
                        "cannot execute a program written to {} ({e}); the directory may be \
                         mounted noexec: choose another with --dir",
                        dir.display()
                    ),
                ),
            },
            Err(e) => ctx.skip(
                sink,
                &wanted_exec,
                &format!(
                    "cannot write the test program into {}: {e}; choose a writable --dir",
                    dir.display()
                ),
            ),
        }
    }

    creation(ctx, sink, &PTHREAD, &mut process::pthread_create_join);
    let mut stack = Stack::new();
    creation(ctx, sink, &CLONE, &mut || {
        process::clone_thread_wait(&mut stack)
    });
}

/// Times `op` (one creation and reaping) per sample, on one CPU: the new task inherits the
/// placement and runs there while its creator waits. A sample whose wall time is more than
/// twice the CPU time this process and its children used in it waited for the CPU (another
/// process had it) and is taken again, up to three times.
fn creation(
    ctx: &mut Context,
    sink: &mut Sink,
    entry: &Entry,
    op: &mut dyn FnMut() -> std::io::Result<()>,
) {
    if !ctx.wants(entry) {
        return;
    }
    let clock = ctx.clock.clone();
    let l = ctx.limits(1);
    let _pin = Pinned::to(&ctx.cpus[..1]);
    let mut waited = 0;
    let mut m = ctx.measure(entry, None, 1, &l, |s| {
        for attempt in 0..3 {
            let cpu0 = own_cpu_ns();
            let (ns, r) = clock.single(&mut *op);
            let cpu = own_cpu_ns().saturating_sub(cpu0) as f64;
            r.map_err(|e| e.to_string())?;
            if ns <= 2.0 * cpu || attempt == 2 {
                s.push(ns);
                break;
            }
            waited += 1;
        }
        Ok::<_, String>(())
    });
    m.details
        .insert("waiting_samples_retaken".into(), waited as f64);
    if let Some(rss) = rss_bytes() {
        // fork's cost grows with the address space it copies: say how large it was.
        m.details.insert("parent_rss_bytes".into(), rss as f64);
    }
    sink.measurements.push(m);
    ctx.finished(entry);
}

/// This process's resident set size (what fork copies the page tables of).
fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb * 1024)
}
