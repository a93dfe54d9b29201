//! The ambient sampler: one thread that, at each tick, re-reads a fixed set of kept-open /proc
//! files from offset 0 into a preallocated arena, and nothing else. Parsing happens after the
//! run (see `analyse`), so the sampler costs a few read(2) calls per tick and no allocation in
//! the steady state (the arena grows by whole chunks, the record lists by doubling).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Duration;

use crate::periodic::{Cadence, FirstTick, Sampler, Tick};
use crate::tree::PidReader;

/// The system files, in a fixed order (`SYSTEM_FILES[i]` is span `i` of every sample).
pub const SYSTEM_FILES: [&str; 11] = [
    "/proc/stat",
    "/proc/meminfo",
    "/proc/vmstat",
    "/proc/loadavg",
    "/proc/diskstats",
    "/proc/net/dev",
    "/proc/interrupts",
    "/proc/softirqs",
    "/proc/pressure/cpu",
    "/proc/pressure/memory",
    "/proc/pressure/io",
];

const CHUNK: usize = 1 << 20;

/// A slice of the arena: (chunk, offset, length). Length 0 = file absent.
pub type Span = (u32, u32, u32);

pub struct SystemSample {
    pub t_ns: u64,
    pub spans: [Span; SYSTEM_FILES.len()],
}

pub struct ProcSample {
    pub t_ns: u64,
    pub pid: i32,
    pub stat: Span,
    pub io: Span,
}

/// Everything captured, still as bytes.
pub struct Capture {
    pub arena: Vec<Vec<u8>>,
    pub system: Vec<SystemSample>,
    pub tree: Vec<ProcSample>,
    /// CPU time the sampler thread itself used.
    pub sampler_cpu_ns: u64,
}

impl Capture {
    pub fn bytes(&self, (chunk, off, len): Span) -> &[u8] {
        &self.arena[chunk as usize][off as usize..(off + len) as usize]
    }
}

struct Arena {
    /// Chunks are allocated full-length (zeroed once); `used` is the cursor in the last one.
    chunks: Vec<Vec<u8>>,
    used: usize,
}

impl Arena {
    fn new() -> Arena {
        Arena {
            chunks: vec![vec![0; CHUNK]],
            used: 0,
        }
    }

    /// Reads the whole of `file` (from offset 0) into the arena.
    fn read(&mut self, file: &File) -> Span {
        for attempt in 0..2 {
            let idx = self.chunks.len() - 1;
            let chunk = &mut self.chunks[idx];
            let start = self.used;
            let mut got = 0;
            let full = loop {
                match file.read_at(&mut chunk[start + got..], got as u64) {
                    Ok(0) | Err(_) => break false,
                    Ok(n) => {
                        got += n;
                        if start + got == chunk.len() {
                            break true;
                        }
                    }
                }
            };
            if !full {
                self.used = start + got;
                return (idx as u32, start as u32, got as u32);
            }
            // Did not fit: start a new chunk (the only allocation, once per CHUNK bytes).
            if attempt == 0 {
                self.chunks.push(vec![0; CHUNK]);
                self.used = 0;
            }
        }
        (0, 0, 0)
    }
}

/// The system files, opened before fork and handed to the sampler thread.
pub struct Files(Vec<Option<File>>);

impl Files {
    pub fn open() -> Files {
        Files(SYSTEM_FILES.iter().map(|p| File::open(p).ok()).collect())
    }
}

/// The sampler thread's state between ticks.
struct State {
    files: Files,
    pids_of: PidReader,
    arena: Arena,
    system: Vec<SystemSample>,
    tree: Vec<ProcSample>,
    /// Per-process files, opened when a process first appears.
    open: Vec<(i32, File, Option<File>)>,
    pids: Vec<i32>,
}

/// Starts sampling: at once (before returning), every `interval` (zero: never in between), and
/// at the stop.
pub fn start(interval: Duration, files: Files, pids_of: PidReader) -> Option<Sampler<Capture>> {
    let cadence = if interval.is_zero() {
        Cadence::AtStartOnly
    } else {
        Cadence::Fixed {
            period: interval,
            at_start: true,
        }
    };
    let state = State {
        files,
        pids_of,
        arena: Arena::new(),
        system: Vec::with_capacity(1024),
        tree: Vec::with_capacity(4096),
        open: Vec::with_capacity(16),
        pids: Vec::with_capacity(64),
    };
    // The first sample is taken here, before the program is released.
    let timing = (cadence, FirstTick::Caller, true);
    Sampler::spawn("arum-ambient", timing, state, tick, |s| Capture {
        arena: s.arena.chunks,
        system: s.system,
        tree: s.tree,
        sampler_cpu_ns: crate::periodic::thread_cpu_ns(),
    })
}

/// One sample of the system files and, except at the stop (the tree is gone), of the tree.
fn tick(s: &mut State, tick: Tick) -> Duration {
    sample(s, tick);
    Duration::ZERO
}

fn sample(s: &mut State, tick: Tick) {
    let t_ns = tick.elapsed.as_nanos() as u64;
    let mut spans = [(0, 0, 0); SYSTEM_FILES.len()];
    for (span, f) in spans.iter_mut().zip(&s.files.0) {
        if let Some(f) = f {
            *span = s.arena.read(f);
        }
    }
    s.system.push(SystemSample { t_ns, spans });
    if tick.last {
        return;
    }
    s.pids_of.read(&mut s.pids);
    let pids = &s.pids;
    s.open.retain(|(pid, _, _)| pids.contains(pid));
    for &pid in pids {
        if !s.open.iter().any(|(p, _, _)| *p == pid) {
            if let Ok(stat) = File::open(format!("/proc/{pid}/stat")) {
                s.open
                    .push((pid, stat, File::open(format!("/proc/{pid}/io")).ok()));
            }
        }
    }
    for (pid, stat, io) in &s.open {
        let stat = s.arena.read(stat);
        let io = io.as_ref().map_or((0, 0, 0), |f| s.arena.read(f));
        if stat.2 > 0 {
            s.tree.push(ProcSample {
                t_ns,
                pid: *pid,
                stat,
                io,
            });
        }
    }
}
