//! Files: the size of the file cache (read throughput against file size), sequential and random
//! reads with and without the cache (and with O_DIRECT), and contention between concurrent
//! readers. Everything happens in files of ours under --dir, removed afterwards.

mod cache;
mod contention;
mod reads;

use crate::context::{Context, Entry, Group, Sink};
use crate::model::findings::FileFacts;
use crate::scratch::{write_file, RemoveOnDrop};
use crate::sys::fs::{free_bytes, fs_type};

use cache::{cache_droppable, cache_sizes};

pub const GROUP: Group = Group {
    name: "files",
    title: "File system",
    entries: &[
        reads::CACHE,
        reads::SEQ_CACHED,
        reads::SEQ_UNCACHED,
        reads::SEQ_DIRECT,
        reads::RANDOM_CACHED,
        reads::RANDOM_UNCACHED,
        reads::RANDOM_DIRECT,
        contention::CONTENTION,
    ],
    run,
};

fn run(ctx: &mut Context, sink: &mut Sink) {
    let wanted: Vec<&Entry> = GROUP.entries.iter().filter(|e| ctx.wants(e)).collect();
    if wanted.is_empty() {
        return;
    }
    let dir = ctx.settings.dir.clone();
    let fs = fs_type(&dir);
    let (contention_files, contention_bytes) = contention::plan(ctx.quick(), ctx.cpus.len());
    let reserve = contention_files as u64 * contention_bytes;
    let free = free_bytes(&dir);
    let mut max = ctx.settings.file_max;
    if free < (max + reserve) * 2 {
        let fit = (free / 2).saturating_sub(reserve);
        max = cache_sizes(fit).last().copied().unwrap_or(0);
        sink.notes.push(format!(
            "files: only {} free under {}: file sizes limited to {}",
            arum_units::size::format(free as f64),
            dir.display(),
            arum_units::size::format(max as f64)
        ));
    }
    if max < 4 << 20 {
        ctx.skip(
            sink,
            &wanted,
            &format!("not enough free space under {}", dir.display()),
        );
        return;
    }
    let path = dir.join(crate::leftovers::name("reads"));
    let _cleanup = RemoveOnDrop(path.clone());
    let file = match write_file(&path, max as usize) {
        Ok(f) => f,
        Err(e) => {
            ctx.skip(
                sink,
                &wanted,
                &format!(
                    "cannot write {}: {e}; choose a writable --dir",
                    path.display()
                ),
            );
            return;
        }
    };
    let droppable = cache_droppable(&file, max as usize);
    let mut facts = FileFacts {
        dir: dir.display().to_string(),
        fs_type: fs.clone(),
        cache_droppable: droppable,
        direct_unsupported: None,
    };
    reads::run(ctx, sink, &file, &path, max, &mut facts);
    contention::run(ctx, sink, &dir, droppable, &fs);
    sink.findings.files = Some(facts);
}
