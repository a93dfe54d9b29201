//! Creating processes and threads in every way the task measurements compare, each reduced to
//! its system calls: fork, fork+exec, vfork-style clone+exec, posix_spawn, raw clone of a thread
//! of execution sharing memory, pthread_create. Everything a child needs is prepared before the
//! child exists, so the child side never allocates.

use std::ffi::{c_char, c_int, c_void, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, ForkResult, Pid};

use super::errno;

/// A program and its argument and environment vectors, ready for execve.
pub struct Exec {
    path: CString,
    argv: [*const c_char; 2],
    envp: [*const c_char; 1],
}

impl Exec {
    pub fn new(path: &Path) -> io::Result<Box<Exec>> {
        let path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::other("a path with a NUL byte"))?;
        // Boxed so that argv's pointer into `path` stays valid when the Exec moves.
        let mut e = Box::new(Exec {
            path,
            argv: [std::ptr::null(); 2],
            envp: [std::ptr::null()],
        });
        e.argv[0] = e.path.as_ptr();
        Ok(e)
    }
}

/// A stack for children created by clone, reused between creations.
pub struct Stack(Vec<u8>);

impl Stack {
    pub fn new() -> Stack {
        Stack(vec![0; 256 * 1024])
    }

    /// The highest 16-byte-aligned address of the stack (x86-64 stacks grow down).
    fn top(&mut self) -> *mut c_void {
        let end = self.0.as_mut_ptr() as usize + self.0.len();
        (end & !15) as *mut c_void
    }
}

impl Default for Stack {
    fn default() -> Self {
        Self::new()
    }
}

/// Waits for `pid` and checks it exited with status 0.
pub fn wait_ok(pid: Pid) -> io::Result<()> {
    match waitpid(pid, Some(WaitPidFlag::__WALL)).map_err(errno)? {
        WaitStatus::Exited(_, 0) => Ok(()),
        WaitStatus::Exited(_, 127) => Err(io::Error::other(
            "the child could not execute the program (exit status 127)",
        )),
        other => Err(io::Error::other(format!("the child ended with {other:?}"))),
    }
}

/// fork(); the child exits at once; the parent waits for it.
pub fn fork_exit_wait() -> io::Result<()> {
    // SAFETY: the child calls only _exit, which is async-signal-safe.
    match unsafe { fork() }.map_err(errno)? {
        // SAFETY: _exit is async-signal-safe and ends the child without running arum's
        // destructors or atexit handlers, which belong to the parent.
        ForkResult::Child => unsafe { libc::_exit(0) },
        ForkResult::Parent { child } => wait_ok(child),
    }
}

/// fork(); the child executes `exec`; the parent waits for it.
pub fn fork_exec_wait(exec: &Exec) -> io::Result<()> {
    // SAFETY: the child calls only execve and _exit (async-signal-safe) on data prepared
    // before the fork.
    match unsafe { fork() }.map_err(errno)? {
        // SAFETY: `exec`'s NUL-terminated strings and pointer arrays were built before the
        // fork and are the child's own copy; execve replaces the child, _exit ends it if not.
        ForkResult::Child => unsafe {
            libc::execve(exec.path.as_ptr(), exec.argv.as_ptr(), exec.envp.as_ptr());
            libc::_exit(127)
        },
        ForkResult::Parent { child } => wait_ok(child),
    }
}

extern "C" fn exec_child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `&Exec` passed to clone by `vfork_exec_wait`, alive until the
    // parent resumes (CLONE_VFORK suspends it until this child execs or exits).
    unsafe {
        let exec = &*(arg as *const Exec);
        libc::execve(exec.path.as_ptr(), exec.argv.as_ptr(), exec.envp.as_ptr());
        libc::_exit(127)
    }
}

/// vfork semantics (shared memory, parent suspended until the child execs), through clone with
/// CLONE_VM | CLONE_VFORK on a separate stack: the C vfork() returns twice on one stack, which
/// Rust code cannot do safely.
pub fn vfork_exec_wait(exec: &Exec, stack: &mut Stack) -> io::Result<()> {
    // SAFETY: the child runs `exec_child` on its own stack and only calls execve/_exit; the
    // parent is suspended until then (CLONE_VFORK), so `exec` and `stack` outlive the child's
    // use of them.
    let pid = unsafe {
        libc::clone(
            exec_child,
            stack.top(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            exec as *const Exec as *mut c_void,
        )
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    wait_ok(Pid::from_raw(pid))
}

/// posix_spawn(3) of `exec` (the C library's own vfork-style path), then wait.
pub fn posix_spawn_wait(exec: &Exec) -> io::Result<()> {
    let mut pid: libc::pid_t = 0;
    // SAFETY: path, argv and envp are NUL-terminated and live for the call; null file
    // actions and attributes mean defaults.
    let r = unsafe {
        libc::posix_spawn(
            &mut pid,
            exec.path.as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            exec.argv.as_ptr() as *const *mut c_char,
            exec.envp.as_ptr() as *const *mut c_char,
        )
    };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    wait_ok(Pid::from_raw(pid))
}

extern "C" fn return_at_once(_: *mut c_void) -> c_int {
    0
}

/// clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_IO): a kernel task sharing
/// our memory, files and signal handlers, as a thread library creates one but without its
/// bookkeeping (TLS, stack cache, join). It returns at once; the parent waits for its exit.
pub fn clone_thread_wait(stack: &mut Stack) -> io::Result<()> {
    let flags = libc::CLONE_VM
        | libc::CLONE_FS
        | libc::CLONE_FILES
        | libc::CLONE_SIGHAND
        | libc::CLONE_IO
        | libc::SIGCHLD;
    // SAFETY: the child runs `return_at_once` on `stack`, touching nothing else (the C
    // library's clone wrapper then calls exit); the parent does not reuse the stack before
    // waiting for the child.
    let pid = unsafe { libc::clone(return_at_once, stack.top(), flags, std::ptr::null_mut()) };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    wait_ok(Pid::from_raw(pid))
}

extern "C" fn thread_noop(_: *mut c_void) -> *mut c_void {
    std::ptr::null_mut()
}

/// pthread_create with default attributes, then pthread_join.
pub fn pthread_create_join() -> io::Result<()> {
    let mut t: libc::pthread_t = 0;
    // SAFETY: `t` is a valid out-pointer; the start routine ignores its argument.
    let r = unsafe {
        libc::pthread_create(&mut t, std::ptr::null(), thread_noop, std::ptr::null_mut())
    };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    // SAFETY: `t` is a joinable thread created above and joined exactly once.
    let r = unsafe { libc::pthread_join(t, std::ptr::null_mut()) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(())
}

/// A forked child that serves a pipe ping-pong: it reads one byte from `rx` and writes it back
/// on `tx` until `rx` reports end of file, then exits. Returns its pid.
pub fn fork_echo(rx: c_int, tx: c_int, close_in_child: [c_int; 2]) -> io::Result<Pid> {
    // SAFETY: the child calls only close, read, write and _exit (async-signal-safe) on file
    // descriptors it inherited; the loop ends at end of file or on any error.
    match unsafe { fork() }.map_err(errno)? {
        // SAFETY: the descriptors are the child's inherited copies; `b` is a live byte on the
        // child's stack for each one-byte read and write; _exit ends the child.
        ForkResult::Child => unsafe {
            libc::close(close_in_child[0]);
            libc::close(close_in_child[1]);
            let mut b = 0u8;
            loop {
                if libc::read(rx, (&mut b as *mut u8).cast(), 1) != 1 {
                    break;
                }
                if libc::write(tx, (&b as *const u8).cast(), 1) != 1 {
                    break;
                }
            }
            libc::_exit(0)
        },
        ForkResult::Parent { child } => Ok(child),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_creation_path_runs_and_reaps_its_child() {
        fork_exit_wait().unwrap();
        pthread_create_join().unwrap();
        let mut stack = Stack::new();
        clone_thread_wait(&mut stack).unwrap();
        clone_thread_wait(&mut stack).unwrap();
    }

    #[test]
    fn a_missing_program_is_reported_by_each_exec_path() {
        let e = Exec::new(Path::new("/nonexistent/arum-calibrate-test")).unwrap();
        let mut stack = Stack::new();
        assert!(fork_exec_wait(&e).is_err());
        assert!(vfork_exec_wait(&e, &mut stack).is_err());
        assert!(posix_spawn_wait(&e).is_err());
    }
}
