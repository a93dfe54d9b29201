//! `procstate FILE`: writes to FILE what a launcher can change about a process: every signal's
//! disposition (default, ignored, caught), the blocked signal mask, which descriptors 0-63 are
//! open (and close-on-exec), the working directory and the environment. Comparing the file
//! written under arum with one written without it shows whether arum is transparent.
//!
//! `no_main`: Rust's usual start-up would itself ignore SIGPIPE and reopen closed descriptors
//! 0-2 before this helper could look.
#![no_main]
use std::io::Write;

#[no_mangle]
pub extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    let path = std::env::args().nth(1).expect("usage: procstate FILE");
    let mut out = String::new();
    for sig in 1..=64 {
        // SAFETY: struct sigaction is plain data (a handler address, a mask, flags); all-zero is
        // a valid value.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: with a null new action sigaction only writes the current one into `old`, a
        // valid local; numbers that name no signal fail with EINVAL.
        if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0 {
            continue;
        }
        let how = match old.sa_sigaction {
            libc::SIG_DFL => "default",
            libc::SIG_IGN => "ignored",
            _ => "caught",
        };
        out.push_str(&format!("signal {sig} {how}\n"));
    }
    // SAFETY: sigset_t is a plain bit array; all-zero is the empty set.
    let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: with a null new set sigprocmask changes nothing and only writes the current mask
    // into `mask`, a valid local.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask) };
    let blocked: Vec<i32> = (1..=64)
        // SAFETY: sigismember reads the set initialised above.
        .filter(|&s| unsafe { libc::sigismember(&mask, s) } == 1)
        .collect();
    out.push_str(&format!("blocked {blocked:?}\n"));
    // The file this helper writes is opened below, after the listing.
    for fd in 0..64 {
        // SAFETY: F_GETFD only inspects the descriptor table.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags >= 0 {
            let cloexec = flags & libc::FD_CLOEXEC != 0;
            out.push_str(&format!("fd {fd} open cloexec={cloexec}\n"));
        }
    }
    out.push_str(&format!("cwd {:?}\n", std::env::current_dir().ok()));
    let mut env: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
    env.sort();
    for e in env {
        out.push_str(&format!("env {e}\n"));
    }
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(out.as_bytes()))
        .expect("writable output file");
    0
}
