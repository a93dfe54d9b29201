//! Read throughput and latency: the file-cache curve, sequential and random reads, cached,
//! from the device (cache dropped first), and with O_DIRECT.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::clock::unpreempted;
use crate::context::{skipped, Context, Entry, Sink};
use crate::model::{Measurement, Unit};
use crate::sys::fs::{advise_normal, advise_random, drop_cached, open_direct};
use crate::sys::memory::AlignedBuf;

use super::cache::{cache_finding, cache_sizes, not_droppable};
use crate::model::findings::FileFacts;

pub const CACHE: Entry = Entry::new(
    "files.cache",
    "file re-read throughput by file size",
    "A file of each size from 4 MiB to --file-max (64 MiB with --quick) read sequentially in \
     1 MiB reads, again and again, 8 MiB per sample: while the file fits in the page cache the \
     reads run at memory speed; past the cache's size they come from the device.",
    Unit::BytesPerS,
);
pub const SEQ_CACHED: Entry = Entry::new(
    "files.read.seq.cached",
    "sequential read, cached",
    "The test file read sequentially in 1 MiB reads while in the page cache, 8 MiB per sample; \
     bytes per second.",
    Unit::BytesPerS,
);
pub const SEQ_UNCACHED: Entry = Entry::new(
    "files.read.seq.uncached",
    "sequential read, from the device",
    "The same after fdatasync and posix_fadvise(DONTNEED) dropped the file from the cache \
     before each sample (the kernel's read-ahead on), 8 MiB per sample.",
    Unit::BytesPerS,
);
pub const SEQ_DIRECT: Entry = Entry::new(
    "files.read.seq.direct",
    "sequential read, O_DIRECT",
    "Sequential 1 MiB reads with O_DIRECT into an aligned buffer, bypassing the cache.",
    Unit::BytesPerS,
);
pub const RANDOM_CACHED: Entry = Entry::new(
    "files.read.random.cached",
    "random 4 KiB read, cached",
    "pread(2) of 4 KiB at random 4 KiB-aligned offsets of the cached test file, each timed.",
    Unit::Ns,
);
pub const RANDOM_UNCACHED: Entry = Entry::new(
    "files.read.random.uncached",
    "random 4 KiB read, from the device",
    "The same after the file was dropped from the cache, read-ahead off \
     (POSIX_FADV_RANDOM), distinct offsets, each timed.",
    Unit::Ns,
);
pub const RANDOM_DIRECT: Entry = Entry::new(
    "files.read.random.direct",
    "random 4 KiB read, O_DIRECT",
    "pread(2) of 4 KiB with O_DIRECT at random aligned offsets, each timed.",
    Unit::Ns,
);

const CHUNK: usize = 1 << 20;
const BLOCK: usize = 4096;
const RANDOM_PER_ROUND: usize = 64;

/// Reads `len` bytes of `file` from `start` in `buf`-sized reads; bytes read.
fn read_through(file: &File, buf: &mut [u8], start: u64, len: u64) -> std::io::Result<u64> {
    let mut done = 0u64;
    while done < len {
        let want = (len - done).min(buf.len() as u64) as usize;
        let n = file.read_at(&mut buf[..want], start + done)?;
        if n == 0 {
            break;
        }
        done += n as u64;
    }
    Ok(done)
}

/// Bytes a sequential sample reads: a part of a cyclic sweep through the file, short enough
/// to fall between other processes' turns (a preempted sample is taken again).
const PART: u64 = 8 << 20;

/// Throughput samples of sequential reads sweeping the first `len` bytes of `file` part by
/// part; `prepare` runs untimed before each part.
#[allow(clippy::too_many_arguments)]
fn sequential(
    ctx: &mut Context,
    entry: &Entry,
    suffix: Option<&str>,
    parts: usize,
    file: &File,
    buf: &mut [u8],
    len: u64,
    mut prepare: impl FnMut() -> std::io::Result<()>,
) -> Measurement {
    let clock = ctx.clock.clone();
    let l = ctx.limits(parts);
    let part = PART.min(len).max(buf.len() as u64);
    let count = (len / part).max(1);
    let (mut k, mut retaken) = (0u64, 0);
    let mut m = ctx.measure(entry, suffix, 1, &l, |s| {
        prepare().map_err(|e| e.to_string())?;
        let (r, p) = unpreempted(3, || {
            k += 1;
            let off = (k % count) * part;
            let t0 = arum_tsc::begin();
            let n = read_through(file, buf, off, part)?;
            let t1 = arum_tsc::end();
            Ok::<f64, std::io::Error>(n as f64 / clock.elapsed_ns(t0, t1) * 1e9)
        });
        retaken += p;
        s.push(r.map_err(|e| e.to_string())?);
        Ok::<_, String>(())
    });
    m.details.insert("bytes_per_sample".into(), part as f64);
    m.details.insert("swept_bytes".into(), len as f64);
    m.details
        .insert("preempted_samples_retaken".into(), retaken as f64);
    m
}

/// Single-read latency samples of 4 KiB preads at distinct random offsets below `len`.
fn random(
    ctx: &mut Context,
    entry: &Entry,
    file: &File,
    buf: &mut [u8],
    len: u64,
    mut prepare: impl FnMut() -> std::io::Result<()>,
) -> Measurement {
    let clock = ctx.clock.clone();
    let l = ctx.limits(1);
    let blocks = (len as usize / BLOCK).max(1);
    let mut rng = fastrand::Rng::with_seed(0xf11e);
    let mut order: Vec<usize> = (0..blocks).collect();
    ctx.measure(entry, None, 1, &l, |s| {
        prepare().map_err(|e| e.to_string())?;
        rng.shuffle(&mut order);
        for &b in order.iter().take(RANDOM_PER_ROUND) {
            let (ns, r) = clock.single(|| file.read_at(&mut buf[..BLOCK], (b * BLOCK) as u64));
            r.map_err(|e| e.to_string())?;
            s.push(ns);
        }
        Ok::<_, String>(())
    })
}

pub fn run(
    ctx: &mut Context,
    sink: &mut Sink,
    file: &File,
    path: &Path,
    max: u64,
    facts: &mut FileFacts,
) {
    let mut buf = vec![0u8; CHUNK];
    let droppable = facts.cache_droppable;
    let test_len = max.min(if ctx.quick() { 64 << 20 } else { 256 << 20 });
    let dir = path.parent().unwrap_or(Path::new("."));
    let no_drop = not_droppable(&facts.fs_type, dir);
    let mut uncached_speed = None;

    // The device's sequential speed first: the cache curve is read against it.
    if ctx.wants(&SEQ_UNCACHED) {
        let m = if droppable {
            sequential(
                ctx,
                &SEQ_UNCACHED,
                None,
                1,
                file,
                &mut buf,
                test_len,
                || drop_cached(file),
            )
        } else {
            skipped(&SEQ_UNCACHED, None, no_drop.clone())
        };
        uncached_speed = m.median();
        sink.measurements.push(m);
        ctx.finished(&SEQ_UNCACHED);
    }

    if ctx.wants(&CACHE) {
        let not_dropped = (!droppable).then_some(no_drop.as_str());
        cache_curve(ctx, sink, file, &mut buf, max, uncached_speed, not_dropped);
    }

    cached_reads(ctx, sink, file, &mut buf, test_len);
    if ctx.wants(&RANDOM_UNCACHED) {
        let m = if droppable {
            let _ = advise_random(file);
            let m = random(ctx, &RANDOM_UNCACHED, file, &mut buf, test_len, || {
                drop_cached(file)
            });
            let _ = advise_normal(file);
            m
        } else {
            skipped(&RANDOM_UNCACHED, None, no_drop.clone())
        };
        sink.measurements.push(m);
        ctx.finished(&RANDOM_UNCACHED);
    }

    direct_reads(ctx, sink, path, test_len, facts);
}

/// The cache curve: sequential reads of each size of `cache_sizes(max)`, read against the
/// device's speed (`uncached_speed`); `not_dropped`: why the file cannot leave the cache, when
/// it cannot (then every size is in memory).
fn cache_curve(
    ctx: &mut Context,
    sink: &mut Sink,
    file: &File,
    buf: &mut [u8],
    max: u64,
    uncached_speed: Option<f64>,
    not_dropped: Option<&str>,
) {
    let sizes = cache_sizes(max);
    let mut curve = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        let label = format!("{}MiB", size >> 20);
        // One untimed read of the whole size first brings it into the cache if it fits;
        // the samples then sweep it again, from the cache or, past its size, the device.
        if let Err(e) = read_through(file, buf, 0, size) {
            sink.measurements.push(skipped(
                &CACHE,
                Some(&label),
                format!("reading the test file: {e}"),
            ));
            continue;
        }
        let m = sequential(
            ctx,
            &CACHE,
            Some(&label),
            sizes.len() - i,
            file,
            buf,
            size,
            || Ok(()),
        );
        if let Some(v) = m.median() {
            curve.push((size, v));
        }
        sink.measurements.push(m);
    }
    let avail = arum_camp::memory().map(|m| m.available_bytes).unwrap_or(0);
    let mut finding = cache_finding(&curve, uncached_speed, max, avail);
    if let Some(no_drop) = not_dropped {
        // Every size is in memory: there is no cache edge to find, whatever the curve does.
        finding.cached_up_to_bytes = None;
        finding.conclusion = format!("no cache limit to find: {no_drop}");
    }
    sink.findings.file_cache = Some(finding);
    ctx.finished(&CACHE);
}

/// Sequential and random reads of the first `test_len` bytes of `file`, cached.
fn cached_reads(ctx: &mut Context, sink: &mut Sink, file: &File, buf: &mut [u8], test_len: u64) {
    if ctx.wants(&SEQ_CACHED) {
        // One untimed read first so that the whole test length is cached.
        let _ = read_through(file, buf, 0, test_len);
        let m = sequential(ctx, &SEQ_CACHED, None, 1, file, buf, test_len, || Ok(()));
        sink.measurements.push(m);
        ctx.finished(&SEQ_CACHED);
    }
    if ctx.wants(&RANDOM_CACHED) {
        let _ = read_through(file, buf, 0, test_len);
        let m = random(ctx, &RANDOM_CACHED, file, buf, test_len, || Ok(()));
        sink.measurements.push(m);
        ctx.finished(&RANDOM_CACHED);
    }
}

/// Sequential and random reads with O_DIRECT, or why the file system refuses them (in `facts`).
fn direct_reads(
    ctx: &mut Context,
    sink: &mut Sink,
    path: &Path,
    test_len: u64,
    facts: &mut FileFacts,
) {
    let dir = path.parent().unwrap_or(Path::new("."));
    let direct = [&SEQ_DIRECT, &RANDOM_DIRECT];
    if direct.iter().any(|e| ctx.wants(e)) {
        let mut aligned = AlignedBuf::new(CHUNK, 4096);
        let opened = open_direct(path).and_then(|f| {
            // Some file systems accept the flag at open and refuse the first read.
            f.read_at(&mut aligned.as_mut_slice()[..BLOCK], 0)
                .map(|_| f)
        });
        match opened {
            Ok(dfile) => {
                if ctx.wants(&SEQ_DIRECT) {
                    let m = sequential(
                        ctx,
                        &SEQ_DIRECT,
                        None,
                        1,
                        &dfile,
                        aligned.as_mut_slice(),
                        test_len,
                        || Ok(()),
                    );
                    sink.measurements.push(m);
                    ctx.finished(&SEQ_DIRECT);
                }
                if ctx.wants(&RANDOM_DIRECT) {
                    let m = random(
                        ctx,
                        &RANDOM_DIRECT,
                        &dfile,
                        aligned.as_mut_slice(),
                        test_len,
                        || Ok(()),
                    );
                    sink.measurements.push(m);
                    ctx.finished(&RANDOM_DIRECT);
                }
            }
            Err(e) => {
                let why = format!(
                    "the file system of {} ({}) does not support O_DIRECT: {e}",
                    dir.display(),
                    facts.fs_type
                );
                facts.direct_unsupported = Some(why.clone());
                ctx.skip(sink, &direct, &why);
            }
        }
    }
}
