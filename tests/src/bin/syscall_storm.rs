//! `syscall_storm THREADS ROUNDS`: THREADS threads, each doing ROUNDS times a getppid, an open
//! of a path that does not exist (openat, ENOENT), a one-byte write into its own pipe and the
//! read of it back: 4 × THREADS × ROUNDS calls as fast as the machine makes them, from every
//! CPU at once. Prints nothing.
use std::os::fd::AsFd;

use nix::fcntl::{open, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::{getppid, pipe, read, write};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("THREADS ROUNDS"))
        .collect();
    let (threads, rounds) = (args[0], args[1]);
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            std::thread::spawn(move || {
                let (r, w) = pipe().expect("a pipe");
                let mut byte = [0u8; 1];
                for _ in 0..rounds {
                    std::hint::black_box(getppid());
                    let missing = open(
                        "/nonexistent/arum-syscall-storm",
                        OFlag::O_RDONLY,
                        Mode::empty(),
                    );
                    assert!(missing.is_err());
                    assert_eq!(write(w.as_fd(), b"x").expect("write to the pipe"), 1);
                    assert_eq!(read(&r, &mut byte).expect("read from the pipe"), 1);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a worker");
    }
}
