//! `pingpong K`: a parent and a forked child pass one byte back and forth K times over two
//! pipes; each round trip blocks both processes, so it costs at least two context switches.
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};

fn pipe() -> (std::fs::File, std::fs::File) {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints for pipe(2) to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just created and are owned here.
    unsafe {
        (
            OwnedFd::from_raw_fd(fds[0]).into(),
            OwnedFd::from_raw_fd(fds[1]).into(),
        )
    }
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
            let mut status = 0;
            // SAFETY: waits for the child forked above.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        }
    }
}
