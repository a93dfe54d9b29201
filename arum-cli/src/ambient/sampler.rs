//! The ambient sampler: one thread that, at each tick, re-reads a fixed set of kept-open /proc
//! files from offset 0 into a preallocated arena, and nothing else. Parsing happens after the
//! run (see `analyse`), so the sampler costs a few read(2) calls per tick and no allocation in
//! the steady state (the arena grows by whole chunks, the record lists by doubling).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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

pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Capture>>,
}

impl Sampler {
    /// Starts sampling now; `interval` zero means only at the start and at the end.
    pub fn start(interval: Duration, procs_file: Option<PathBuf>, root: i32) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("arum-ambient".into())
                .spawn(move || run(interval, procs_file, root, &stop))
                .ok()
        };
        Sampler { stop, thread }
    }

    /// Takes the last sample and returns everything captured.
    pub fn finish(mut self) -> Option<Capture> {
        self.stop.store(true, Ordering::SeqCst);
        let t = self.thread.take()?;
        t.thread().unpark();
        t.join().ok()
    }
}

fn thread_cpu_ns() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

fn run(interval: Duration, procs_file: Option<PathBuf>, root: i32, stop: &AtomicBool) -> Capture {
    let files: Vec<Option<File>> = SYSTEM_FILES.iter().map(|p| File::open(p).ok()).collect();
    let procs = procs_file.and_then(|p| File::open(p).ok());
    let mut arena = Arena::new();
    let mut system = Vec::with_capacity(1024);
    let mut tree = Vec::with_capacity(4096);
    // Per-process files, opened when a process first appears.
    let mut open: Vec<(i32, File, Option<File>)> = Vec::with_capacity(16);
    let mut pids: Vec<i32> = Vec::with_capacity(64);
    let started = Instant::now();
    let mut next = started;
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        let t_ns = started.elapsed().as_nanos() as u64;
        let mut spans = [(0, 0, 0); SYSTEM_FILES.len()];
        for (span, f) in spans.iter_mut().zip(&files) {
            if let Some(f) = f {
                *span = arena.read(f);
            }
        }
        system.push(SystemSample { t_ns, spans });
        if !stopping {
            tree_pids(procs.as_ref(), root, &mut arena, &mut pids);
            open.retain(|(pid, _, _)| pids.contains(pid));
            for &pid in &pids {
                if !open.iter().any(|(p, _, _)| *p == pid) {
                    if let Ok(stat) = File::open(format!("/proc/{pid}/stat")) {
                        open.push((pid, stat, File::open(format!("/proc/{pid}/io")).ok()));
                    }
                }
            }
            for (pid, stat, io) in &open {
                let stat = arena.read(stat);
                let io = io.as_ref().map_or((0, 0, 0), |f| arena.read(f));
                if stat.2 > 0 {
                    tree.push(ProcSample {
                        t_ns,
                        pid: *pid,
                        stat,
                        io,
                    });
                }
            }
        }
        if stopping {
            break;
        }
        if interval.is_zero() {
            std::thread::park();
        } else {
            next += interval;
            while !stop.load(Ordering::SeqCst) {
                let now = Instant::now();
                if now >= next {
                    break;
                }
                std::thread::park_timeout(next - now);
            }
        }
    }
    Capture {
        arena: arena.chunks,
        system,
        tree,
        sampler_cpu_ns: thread_cpu_ns(),
    }
}

/// The tree's pids from its cgroup (read through the arena, parsed in place), else the root.
fn tree_pids(procs: Option<&File>, root: i32, arena: &mut Arena, out: &mut Vec<i32>) {
    out.clear();
    if let Some(f) = procs {
        let span = arena.read(f);
        let (c, o, l) = span;
        let bytes = &arena.chunks[c as usize][o as usize..(o + l) as usize];
        let mut v: i32 = 0;
        let mut any = false;
        for &b in bytes {
            if b.is_ascii_digit() {
                v = v * 10 + i32::from(b - b'0');
                any = true;
            } else if any {
                out.push(v);
                v = 0;
                any = false;
            }
        }
        // The pid list was only needed for this parse: give its bytes back to the arena.
        if c as usize == arena.chunks.len() - 1 {
            arena.used = o as usize;
        }
        return;
    }
    out.push(root);
}
