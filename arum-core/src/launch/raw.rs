//! execve without libc, for a child that shares arum's address space (see `child`). Such a
//! child also shares the thread-local `errno` of the arum thread that launched it: libc's
//! wrappers write it when a call fails, and exec fails routinely while PATH is searched, which
//! could change the errno arum reads after a failed call of its own at the same moment. The raw
//! system call returns the error in a register instead. The child's other calls cannot fail (see
//! `child`) or go through rustix, which makes its system calls the same way.

use nix::errno::Errno;

/// Whether this architecture has a raw execve here; elsewhere arum launches with fork.
pub(super) const HAS_RAW_EXECVE: bool = cfg!(target_arch = "x86_64");

/// Whether arum runs on Valgrind's simulated CPU, which cannot follow a clone that shares memory
/// without being a thread (it ends the whole process instead of failing the call): arum launches
/// with fork there. Asked with Valgrind's client request: a sequence of rotations of rdi by 128
/// bits in all and an `xchg rbx, rbx`, which changes nothing on a real CPU (rdx keeps the
/// default, 0) and which Valgrind recognises, answering in rdx (the RUNNING_ON_VALGRIND request,
/// 0x1001, in valgrind.h).
#[cfg(target_arch = "x86_64")]
pub(super) fn on_valgrind() -> bool {
    const RUNNING_ON_VALGRIND: u64 = 0x1001;
    let request: [u64; 6] = [RUNNING_ON_VALGRIND, 0, 0, 0, 0, 0];
    let answer: u64;
    // SAFETY: on a real CPU the instructions only rotate rdi back to its value and exchange rbx
    // with itself; rdx is set to 0 first. Valgrind reads the six words at rax and writes rdx.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") 0u64 => answer,
            in("rax") request.as_ptr(),
            inout("rdi") 0u64 => _,
            options(nostack, readonly),
        );
    }
    answer != 0
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn on_valgrind() -> bool {
    false
}

/// execve(2) as the kernel implements it; returns only on failure, with its error.
///
/// # Safety
/// `path` is a NUL-terminated string, `argv` and `envp` NULL-terminated arrays of them, all
/// valid until the call returns (on success the kernel has copied them).
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn execve(
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
) -> Errno {
    let ret: isize;
    // SAFETY: the x86-64 system call convention: number in rax, arguments in rdi, rsi, rdx,
    // result in rax; the `syscall` instruction clobbers rcx and r11 and nothing else. The
    // pointers are valid by the caller's contract.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") libc::SYS_execve as isize => ret,
            in("rdi") path,
            in("rsi") argv,
            in("rdx") envp,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack, preserves_flags),
        );
    }
    Errno::from_raw(i32::try_from(-ret).unwrap_or(libc::EINVAL))
}

/// Elsewhere the child is a forked copy with its own errno, and libc's execve will do.
///
/// # Safety
/// As above.
#[cfg(not(target_arch = "x86_64"))]
pub(super) unsafe fn execve(
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
) -> Errno {
    // SAFETY: the caller's contract; a forked child owns its errno.
    unsafe { libc::execve(path, argv, envp) };
    Errno::last()
}
