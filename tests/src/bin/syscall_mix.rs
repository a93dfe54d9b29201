//! `syscall_mix N K`: exactly N writes of K bytes to /dev/null, N reads of K bytes from
//! /dev/zero, and N opens of a path that does not exist (ENOENT), by direct system calls; prints
//! nothing, so every write and read of the process is one of these.
use nix::fcntl::{open, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::{read, write};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("N K"))
        .collect();
    let (n, k) = (args[0], args[1]);
    let buf = vec![7u8; k];
    let mut back = vec![0u8; k];
    let open = |path: &str, flags| open(path, flags, Mode::empty());
    let null = open("/dev/null", OFlag::O_WRONLY).expect("/dev/null");
    let zero = open("/dev/zero", OFlag::O_RDONLY).expect("/dev/zero");
    for _ in 0..n {
        let w = write(&null, &buf).expect("write to /dev/null");
        let r = read(&zero, &mut back).expect("read from /dev/zero");
        assert_eq!((w, r), (k, k));
        assert!(open("/nonexistent/arum-syscall-mix", OFlag::O_RDONLY).is_err());
    }
    // Both stay open until the process ends, without a close of their own: what the tests
    // expect of this program.
    std::mem::forget((null, zero));
}
