//! `syscall_mix N K`: exactly N writes of K bytes to /dev/null, N reads of K bytes from
//! /dev/zero, and N opens of a path that does not exist (ENOENT), by direct system calls; prints
//! nothing, so every write and read of the process is one of these.
use std::ffi::CString;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("N K"))
        .collect();
    let (n, k) = (args[0], args[1]);
    let buf = vec![7u8; k];
    let mut back = vec![0u8; k];
    let open = |path: &str, flags| {
        let p = CString::new(path).unwrap();
        // SAFETY: a NUL-terminated path; open has no other memory effects.
        unsafe { libc::open(p.as_ptr(), flags) }
    };
    let null = open("/dev/null", libc::O_WRONLY);
    let zero = open("/dev/zero", libc::O_RDONLY);
    assert!(null >= 0 && zero >= 0);
    for _ in 0..n {
        // SAFETY: `buf` and `back` are valid for `k` bytes.
        let w = unsafe { libc::write(null, buf.as_ptr().cast(), k) };
        let r = unsafe { libc::read(zero, back.as_mut_ptr().cast(), k) };
        assert_eq!((w as usize, r as usize), (k, k));
        assert!(open("/nonexistent/arum-syscall-mix", libc::O_RDONLY) < 0);
    }
}
