//! Which system calls `--syscalls` asks for: categories (process, network, file, memory, all) or
//! syscall names, resolved to this architecture's numbers once, before anything runs.

use std::collections::BTreeSet;

use syscalls::Sysno;

/// The categories a call is reported under; a call in none of them is `other`.
pub const CATEGORIES: [&str; 4] = ["process", "network", "file", "memory"];

const PROCESS: &[&str] = &[
    "clone",
    "clone3",
    "fork",
    "vfork",
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "wait4",
    "waitid",
    "kill",
    "tkill",
    "tgkill",
    "getpid",
    "getppid",
    "gettid",
    "setsid",
    "setpgid",
    "prctl",
    "arch_prctl",
    "sched_yield",
    "sched_setaffinity",
    "sched_getaffinity",
    "nanosleep",
    "clock_nanosleep",
    "futex",
    "set_tid_address",
    "set_robust_list",
    "rseq",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigsuspend",
    "rt_sigtimedwait",
    "sigaltstack",
    "getrlimit",
    "setrlimit",
    "prlimit64",
    "getrusage",
    "setuid",
    "setgid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "setgroups",
    "capget",
    "capset",
    "pidfd_open",
    "pidfd_send_signal",
];
const NETWORK: &[&str] = &[
    "socket",
    "socketpair",
    "bind",
    "listen",
    "accept",
    "accept4",
    "connect",
    "getsockname",
    "getpeername",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    "shutdown",
    "setsockopt",
    "getsockopt",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "sendfile",
];
const FILE: &[&str] = &[
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "open",
    "openat",
    "openat2",
    "creat",
    "close",
    "close_range",
    "lseek",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "statx",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "getdents64",
    "fcntl",
    "ioctl",
    "dup",
    "dup2",
    "dup3",
    "pipe",
    "pipe2",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "fsync",
    "fdatasync",
    "ftruncate",
    "truncate",
    "chdir",
    "fchdir",
    "getcwd",
    "chmod",
    "fchmod",
    "fchmodat",
    "chown",
    "fchown",
    "fchownat",
    "splice",
    "tee",
    "copy_file_range",
    "fadvise64",
    "fallocate",
    "statfs",
    "fstatfs",
    "inotify_init1",
    "inotify_add_watch",
    "eventfd2",
    "timerfd_create",
    "timerfd_settime",
    "signalfd4",
    "io_uring_enter",
];
const MEMORY: &[&str] = &[
    "mmap",
    "munmap",
    "mprotect",
    "mremap",
    "brk",
    "madvise",
    "mlock",
    "munlock",
    "mlockall",
    "munlockall",
    "msync",
    "mincore",
    "membarrier",
    "memfd_create",
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "process_vm_readv",
    "process_vm_writev",
    "pkey_mprotect",
];

/// Calls whose return value counts bytes moved (read/write/send/recv families).
const BYTES: &[&str] = &[
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendfile",
    "splice",
    "tee",
    "copy_file_range",
];

/// Calls that return a new descriptor (tasks they begin are keyed by it, see `views`).
const RETURNS_FD: &[&str] = &[
    "accept",
    "accept4",
    "socket",
    "open",
    "openat",
    "openat2",
    "creat",
    "dup",
    "dup2",
    "dup3",
    "epoll_create",
    "epoll_create1",
    "memfd_create",
    "eventfd2",
    "timerfd_create",
];

/// Calls that do not return to their caller: counted at entry, with no duration. `uretprobe` is
/// the kernel's own return-probe trampoline (function timing's return probes) on x86-64.
const NO_RETURN: &[&str] = &["exit", "exit_group", "rt_sigreturn", "uretprobe"];

/// Whether `name` never returns to its caller (its sys_exit never comes, or comes as another's).
pub fn no_return(name: &str) -> bool {
    NO_RETURN.contains(&name)
}

fn lists() -> [(&'static str, &'static [&'static str]); 4] {
    [
        ("process", PROCESS),
        ("network", NETWORK),
        ("file", FILE),
        ("memory", MEMORY),
    ]
}

/// The category of call `name` (`other` when none).
pub fn category(name: &str) -> &'static str {
    lists()
        .into_iter()
        .find(|(_, l)| l.contains(&name))
        .map_or("other", |(c, _)| c)
}

/// Whether the return value of `name` is a byte count.
pub fn counts_bytes(name: &str) -> bool {
    BYTES.contains(&name)
}

/// Whether `name` returns a new file descriptor.
pub fn returns_fd(name: &str) -> bool {
    RETURNS_FD.contains(&name)
}

/// The name of call number `nr` on this architecture.
pub fn name(nr: u64) -> String {
    u32::try_from(nr)
        .ok()
        .and_then(|n| Sysno::new(n as usize))
        .map_or_else(|| format!("syscall_{nr}"), |s| s.name().to_string())
}

/// What was asked: every call, or a set of call numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The words given (`all` when none).
    pub asked: Vec<String>,
    /// `None`: every call (no filter).
    pub numbers: Option<BTreeSet<u64>>,
}

impl Selection {
    /// Parses `process,network`, `all`, `read,write` or a mix. Errors name the bad word.
    pub fn parse(spec: &str) -> Result<Selection, String> {
        let words: Vec<String> = spec
            .split(',')
            .map(|w| w.trim().to_ascii_lowercase())
            .filter(|w| !w.is_empty())
            .collect();
        if words.is_empty() || words.iter().any(|w| w == "all") {
            return Ok(Selection {
                asked: vec!["all".into()],
                numbers: None,
            });
        }
        let mut numbers = BTreeSet::new();
        for w in &words {
            if let Some((_, list)) = lists().into_iter().find(|(c, _)| c == w) {
                // Names this architecture lacks (e.g. `fork` on aarch64) are left out.
                numbers.extend(
                    list.iter()
                        .filter_map(|n| n.parse::<Sysno>().ok())
                        .map(|s| s.id() as u64),
                );
            } else {
                let s = w.parse::<Sysno>().map_err(|_| {
                    format!(
                        "--syscalls: {w:?} is neither a category ({}, all) nor a system call of this architecture",
                        CATEGORIES.join(", ")
                    )
                })?;
                numbers.insert(s.id() as u64);
            }
        }
        Ok(Selection {
            asked: words,
            numbers: Some(numbers),
        })
    }

    /// The tracepoint filter that keeps only the selected calls (`None`: keep all).
    pub fn filter(&self) -> Option<String> {
        let n = self.numbers.as_ref()?;
        Some(
            n.iter()
                .map(|nr| format!("id == {nr}"))
                .collect::<Vec<_>>()
                .join(" || "),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_and_names_resolve_to_numbers_and_a_filter() {
        let all = Selection::parse("").unwrap();
        assert_eq!(all.numbers, None);
        assert_eq!(all.filter(), None);
        assert_eq!(Selection::parse("file,all").unwrap().numbers, None);
        let s = Selection::parse("write, openat").unwrap();
        let w = Sysno::write.id() as u64;
        let o = Sysno::openat.id() as u64;
        assert_eq!(s.numbers, Some([w, o].into_iter().collect()));
        let f = s.filter().unwrap();
        assert!(
            f.contains(&format!("id == {w}")) && f.contains(" || "),
            "{f}"
        );
        let net = Selection::parse("network").unwrap().numbers.unwrap();
        assert!(net.contains(&(Sysno::accept4.id() as u64)));
        assert!(!net.contains(&w));
        let e = Selection::parse("files").unwrap_err();
        assert!(e.contains("\"files\""), "{e}");
    }

    #[test]
    fn names_categories_and_byte_counting_calls() {
        assert_eq!(name(Sysno::write.id() as u64), "write");
        assert_eq!(name(100_000), "syscall_100000");
        assert_eq!(category("sendfile"), "network");
        assert_eq!(category("mmap"), "memory");
        assert_eq!(category("getrandom"), "other");
        assert!(counts_bytes("writev") && !counts_bytes("close"));
        assert!(returns_fd("accept4") && !returns_fd("close"));
    }
}
