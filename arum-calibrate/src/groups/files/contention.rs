//! Contention: N readers at once, each reading its own file from the device, against one.

use std::fs::File;
use std::path::Path;
use std::sync::Barrier;

use crate::clock::Clock;
use crate::context::{skipped, Context, Entry, Sink};
use crate::model::Unit;
use crate::scratch::{write_file, RemoveOnDrop};
use crate::sys::fs::drop_cached;

pub const CONTENTION: Entry = Entry::new(
    "files.contention",
    "N concurrent readers, time until all finish",
    "N threads (1, 2, 4, ... up to twice the CPUs, at most 8) each read a file of their own \
     sequentially in 1 MiB reads, all dropped from the cache first and started together; the \
     time until the last finishes (the aggregate throughput is in the details).",
    Unit::Ns,
);

/// How many readers at most, and each one's file size.
pub fn plan(quick: bool, cpus: usize) -> (usize, u64) {
    if quick {
        (4, 8 << 20)
    } else {
        ((2 * cpus).clamp(2, 8), 32 << 20)
    }
}

fn counts(max: usize) -> Vec<usize> {
    let mut v = vec![1];
    while v.last().unwrap() * 2 <= max {
        v.push(v.last().unwrap() * 2);
    }
    if *v.last().unwrap() != max {
        v.push(max);
    }
    v
}

pub fn run(ctx: &mut Context, sink: &mut Sink, dir: &Path, droppable: bool, fs: &str) {
    if !ctx.wants(&CONTENTION) {
        return;
    }
    if !droppable {
        sink.measurements.push(skipped(
            &CONTENTION,
            None,
            super::cache::not_droppable(fs, dir),
        ));
        ctx.finished(&CONTENTION);
        return;
    }
    let (readers, bytes) = plan(ctx.quick(), ctx.cpus.len());
    let mut cleanup = Vec::new();
    let files = match write_files(dir, readers, bytes, &mut cleanup) {
        Ok(files) => files,
        Err(why) => {
            sink.measurements.push(skipped(&CONTENTION, None, why));
            ctx.finished(&CONTENTION);
            return;
        }
    };
    let clock = ctx.clock.clone();
    let ns = counts(readers);
    for (k, &n) in ns.iter().enumerate() {
        let l = ctx.limits(ns.len() - k);
        let group = &files[..n];
        let mut m = ctx.measure(&CONTENTION, Some(&format!("{n}readers")), 1, &l, |s| {
            for f in group {
                drop_cached(f).map_err(|e| e.to_string())?;
            }
            let t = read_together(group, bytes, &clock);
            if t.1 < bytes * n as u64 {
                return Err(format!(
                    "the readers read {} of {} bytes",
                    t.1,
                    bytes * n as u64
                ));
            }
            s.push(t.0);
            Ok::<_, String>(())
        });
        m.details.insert("readers".into(), n as f64);
        m.details.insert("bytes_per_reader".into(), bytes as f64);
        if let Some(med) = m.median() {
            m.details.insert(
                "aggregate_bytes_per_s".into(),
                (bytes * n as u64) as f64 / med * 1e9,
            );
        }
        sink.measurements.push(m);
    }
    ctx.finished(&CONTENTION);
}

/// Writes a file of `bytes` per reader in `dir`, each removed when `cleanup` is dropped; the
/// first that cannot be written says why.
fn write_files(
    dir: &Path,
    readers: usize,
    bytes: u64,
    cleanup: &mut Vec<RemoveOnDrop>,
) -> Result<Vec<File>, String> {
    let mut files: Vec<File> = Vec::new();
    for i in 0..readers {
        let path = dir.join(crate::leftovers::name(&format!("reader-{i}")));
        cleanup.push(RemoveOnDrop(path.clone()));
        match write_file(&path, bytes as usize) {
            Ok(f) => files.push(f),
            Err(e) => return Err(format!("cannot write {}: {e}", path.display())),
        }
    }
    Ok(files)
}

/// A thread per file reads its first `bytes`, all started at once: the time until the last
/// finished, and the bytes read in all.
fn read_together(group: &[File], bytes: u64, clock: &Clock) -> (f64, u64) {
    let n = group.len();
    let start = Barrier::new(n + 1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = group
            .iter()
            .map(|f| {
                let start = &start;
                scope.spawn(move || {
                    use std::os::unix::fs::FileExt;
                    let mut buf = vec![0u8; 1 << 20];
                    start.wait();
                    let mut off = 0u64;
                    while off < bytes {
                        match f.read_at(&mut buf, off) {
                            Ok(0) | Err(_) => break,
                            Ok(r) => off += r as u64,
                        }
                    }
                    off
                })
            })
            .collect();
        let t0 = arum_tsc::begin();
        start.wait();
        let read: u64 = handles.into_iter().map(|h| h.join().unwrap_or(0)).sum();
        let t1 = arum_tsc::end();
        (clock.elapsed_ns(t0, t1), read)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reader_counts_double_up_to_the_maximum() {
        assert_eq!(super::counts(8), vec![1, 2, 4, 8]);
        assert_eq!(super::counts(6), vec![1, 2, 4, 6]);
        assert_eq!(super::counts(1), vec![1]);
    }
}
