//! Page faults: a minor fault (the first write to a page of fresh anonymous memory) and a major
//! fault (the first read of a file page that is not in the page cache), each timed singly, with
//! the process's fault counters checked to be sure each touch was the fault it claims to be.

use nix::sys::mman::MmapAdvise;

use crate::context::{skipped, Context, Entry, Sink};
use crate::model::{Measurement, Unit};
use crate::scratch::{write_file, RemoveOnDrop};
use crate::sys::cpu::own_faults;
use crate::sys::fs::{drop_cached, fs_type};
use crate::sys::memory::{page_size, Mapping};

pub const MINOR: Entry = Entry::new(
    "memory.fault.minor",
    "minor page fault (anonymous, first touch)",
    "The first write to each page of a fresh private anonymous mapping (huge pages off), timed \
     singly: the kernel allocates and zeroes a page and maps it; 1024 pages per round.",
    Unit::Ns,
);
pub const MAJOR: Entry = Entry::new(
    "memory.fault.major",
    "major page fault (file-backed)",
    "The first read of pages of a file in --dir, in random order, after fdatasync and \
     posix_fadvise(DONTNEED) dropped them from the page cache and with read-ahead off \
     (MADV_RANDOM): each touch waits for the device; timed singly.",
    Unit::Ns,
);

const MINOR_PAGES: usize = 1024;
const MAJOR_TOUCHES_PER_ROUND: usize = 128;

pub fn run(ctx: &mut Context, sink: &mut Sink) {
    if ctx.wants(&MINOR) {
        let m = minor(ctx);
        sink.measurements.push(m);
        ctx.finished(&MINOR);
    }
    if ctx.wants(&MAJOR) {
        let m = major(ctx).unwrap_or_else(|reason| skipped(&MAJOR, None, reason));
        sink.measurements.push(m);
        ctx.finished(&MAJOR);
    }
}

fn minor(ctx: &mut Context) -> Measurement {
    let clock = ctx.clock.clone();
    let page = page_size();
    let l = ctx.limits(1);
    let (mut touches, mut faults) = (0u64, 0u64);
    let mut m = ctx.measure(&MINOR, None, 1, &l, |s| {
        let map = Mapping::anonymous(MINOR_PAGES * page).map_err(|e| format!("mmap: {e}"))?;
        // Huge pages would turn 512 first touches into one fault.
        let _ = map.advise(MmapAdvise::MADV_NOHUGEPAGE);
        let before = own_faults().0;
        for p in 0..MINOR_PAGES {
            let (ns, ()) = clock.single(|| map.touch_write(p * page));
            s.push(ns);
        }
        faults += own_faults().0 - before;
        touches += MINOR_PAGES as u64;
        Ok::<_, String>(())
    });
    m.details.insert(
        "faults_per_touch".into(),
        faults as f64 / touches.max(1) as f64,
    );
    m
}

fn major(ctx: &mut Context) -> Result<Measurement, String> {
    let page = page_size();
    let pages = if ctx.quick() { 4096 } else { 16384 };
    let dir = ctx.settings.dir.clone();
    let fs = fs_type(&dir);
    let path = dir.join(crate::leftovers::name("major-faults"));
    let file = write_file(&path, pages * page).map_err(|e| {
        format!(
            "cannot write {}: {e}; choose a writable --dir",
            path.display()
        )
    });
    let _cleanup = RemoveOnDrop(path.clone());
    let file = file?;

    // Check once that dropping works here: tmpfs and similar keep file data in memory.
    drop_cached(&file).map_err(|e| format!("posix_fadvise: {e}"))?;
    let probe = Mapping::file(&file, pages * page).map_err(|e| format!("mmap: {e}"))?;
    let resident = probe
        .resident_pages()
        .map_err(|e| format!("mincore: {e}"))?;
    drop(probe);
    if resident > pages / 10 {
        return Err(format!(
            "the file system of {} ({fs}) kept {resident} of {pages} pages in memory after \
             posix_fadvise(DONTNEED): nothing to fault in from a device; choose a disk-backed \
             --dir",
            dir.display()
        ));
    }

    let clock = ctx.clock.clone();
    let l = ctx.limits(1);
    let mut rng = fastrand::Rng::with_seed(0xfa017);
    let mut order: Vec<usize> = (0..pages).collect();
    let (mut touches, mut faults) = (0u64, 0u64);
    let mut m = ctx.measure(&MAJOR, None, 1, &l, |s| {
        drop_cached(&file).map_err(|e| format!("posix_fadvise: {e}"))?;
        let map = Mapping::file(&file, pages * page).map_err(|e| format!("mmap: {e}"))?;
        map.advise(MmapAdvise::MADV_RANDOM)
            .map_err(|e| format!("madvise: {e}"))?;
        // Distinct pages in random order: no touch finds a page an earlier one brought in.
        rng.shuffle(&mut order);
        let before = own_faults().1;
        for &p in &order[..MAJOR_TOUCHES_PER_ROUND] {
            let (ns, b) = clock.single(|| map.touch_read(p * page));
            std::hint::black_box(b);
            s.push(ns);
        }
        faults += own_faults().1 - before;
        touches += MAJOR_TOUCHES_PER_ROUND as u64;
        Ok::<_, String>(())
    });
    let share = faults as f64 / touches.max(1) as f64;
    m.details.insert("major_faults_per_touch".into(), share);
    m.details.insert("file_bytes".into(), (pages * page) as f64);
    m.notes.push(format!("file system: {fs}"));
    if share < 0.9 {
        m.notes.push(format!(
            "only {:.0}% of the touches were major faults (read-ahead or fault-around by the \
             file system brought some pages in early)",
            share * 100.0
        ));
    }
    Ok(m)
}
