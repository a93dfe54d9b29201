//! The report section of `--syscalls`: per call and per category, from the collector.

use std::collections::BTreeMap;

use nix::errno::Errno;

use crate::facilities::syscalls::model::{CallCount, ErrnoCount, SyscallStats, SyscallsReport};
use crate::perf::records::stats::Durations;

use super::collect::{CallStats, Collector};
use super::select;

fn stats(name: String, category: &str, c: &CallStats, bytes: bool) -> SyscallStats {
    let d = &c.durations;
    let mut errnos: Vec<ErrnoCount> = c
        .errors
        .iter()
        .map(|(&e, &count)| ErrnoCount {
            errno: errno_name(e),
            count,
        })
        .collect();
    errnos.sort_by(|a, b| b.count.cmp(&a.count).then(a.errno.cmp(&b.errno)));
    SyscallStats {
        name,
        category: category.into(),
        calls: d.count + c.untimed,
        errors: c.errors.values().sum(),
        errnos,
        total_ns: d.total_ns,
        mean_ns: d.mean_ns(),
        p50_ns: d.quantile_ns(0.5),
        p99_ns: d.quantile_ns(0.99),
        max_ns: d.max_ns,
        bytes: bytes.then_some(c.bytes),
    }
}

/// The kernel's own codes above the C library's errnos (include/linux/errno.h): a traced call
/// can return them where a signal interrupted it (the C library restarts it or turns them into
/// EINTR, so the program never sees them).
const KERNEL_ERRNOS: &[(i32, &str)] = &[
    (512, "ERESTARTSYS"),
    (513, "ERESTARTNOINTR"),
    (514, "ERESTARTNOHAND"),
    (515, "ENOIOCTLCMD"),
    (516, "ERESTART_RESTARTBLOCK"),
    (517, "EPROBE_DEFER"),
    (518, "EOPENSTALE"),
    (519, "ENOPARAM"),
];

/// `ENOENT` for 2, `ERESTARTSYS` for 512; the number where neither the C library nor the
/// kernel has a name for it.
pub fn errno_name(e: i32) -> String {
    match Errno::from_raw(e) {
        Errno::UnknownErrno => KERNEL_ERRNOS
            .iter()
            .find(|(n, _)| *n == e)
            .map_or_else(|| format!("errno {e}"), |(_, name)| (*name).to_string()),
        known => format!("{known:?}"),
    }
}

/// What either engine counted: per call number its figures, the calls cut by the end, and what
/// the records path read and lost.
pub struct Counts<'a> {
    pub stats: &'a BTreeMap<u64, CallStats>,
    pub unfinished: &'a BTreeMap<String, u64>,
    pub records: u64,
    pub lost: u64,
    pub orphans: u64,
}

impl<'a> Counts<'a> {
    pub fn of(c: &'a Collector) -> Counts<'a> {
        Counts {
            stats: &c.stats,
            unfinished: &c.unfinished,
            records: c.records,
            lost: c.lost,
            orphans: c.orphans,
        }
    }
}

/// Fills the per-call and per-category figures of `report` from `c`.
pub fn fill(report: &mut SyscallsReport, c: Counts<'_>) {
    let mut categories: BTreeMap<&'static str, CallStats> = BTreeMap::new();
    let mut bytes_in: BTreeMap<&'static str, bool> = BTreeMap::new();
    for (&nr, st) in c.stats {
        let name = select::name(nr);
        let category = select::category(&name);
        let bytes = select::counts_bytes(&name);
        report.calls.push(stats(name, category, st, bytes));
        let cat = categories.entry(category).or_default();
        merge(&mut cat.durations, &st.durations);
        for (&e, &n) in &st.errors {
            *cat.errors.entry(e).or_default() += n;
        }
        cat.bytes += st.bytes;
        cat.untimed += st.untimed;
        *bytes_in.entry(category).or_default() |= bytes;
    }
    report
        .calls
        .sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));
    report.categories = categories
        .iter()
        .map(|(cat, st)| stats((*cat).into(), cat, st, bytes_in[cat]))
        .collect();
    report.records = c.records;
    report.lost = c.lost;
    report.orphan_exits = c.orphans;
    report.unfinished = c
        .unfinished
        .iter()
        .map(|(name, &count)| CallCount {
            name: name.clone(),
            count,
        })
        .collect();
}

fn merge(into: &mut Durations, from: &Durations) {
    into.add(from);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_names() {
        assert_eq!(errno_name(2), "ENOENT");
        assert_eq!(errno_name(11), "EAGAIN");
        assert_eq!(errno_name(4000), "errno 4000");
        // The kernel's restart codes, seen when a signal interrupts a traced call.
        assert_eq!(errno_name(512), "ERESTARTSYS");
        assert_eq!(errno_name(516), "ERESTART_RESTARTBLOCK");
        assert_eq!(errno_name(520), "errno 520");
    }
}
