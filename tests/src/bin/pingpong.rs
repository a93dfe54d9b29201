//! `pingpong K`: a parent and a forked child pass one byte back and forth K times over two
//! pipes; each round trip blocks both processes, so it costs at least two context switches.
use std::io::{Read, Write};

use nix::sys::wait::waitpid;
use nix::unistd::Pid;

fn pipe() -> (std::fs::File, std::fs::File) {
    let (read, write) = nix::unistd::pipe().expect("pipe");
    (read.into(), write.into())
}

fn main() {
    let k: u32 = arum_tests::arg(1, 1000);
    let (mut a_r, mut a_w) = pipe();
    let (mut b_r, mut b_w) = pipe();
    let mut byte = [0u8; 1];
    // SAFETY: single-threaded program; the child only uses the pipes and exits.
    match unsafe { libc::fork() } {
        0 => {
            for _ in 0..k {
                a_r.read_exact(&mut byte).unwrap();
                b_w.write_all(&byte).unwrap();
            }
            // SAFETY: leaves the child without running the parent's exit handlers.
            unsafe { libc::_exit(0) };
        }
        pid => {
            for _ in 0..k {
                a_w.write_all(&byte).unwrap();
                b_r.read_exact(&mut byte).unwrap();
            }
            let _ = waitpid(Pid::from_raw(pid), None);
        }
    }
}
