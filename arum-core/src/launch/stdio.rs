//! arum's standard descriptors when it was started with some of them closed.

use std::os::fd::IntoRawFd;

/// Descriptors 0-2 that arum was started without are filled with /dev/null opened close-on-exec:
/// arum's own messages then go nowhere instead of into a file arum opens later (which would get
/// the lowest free number), and the program, after exec, finds them closed, as it would have
/// without arum.
pub fn hold_closed_standard_descriptors() {
    use rustix::stdio::{stderr, stdin, stdout};
    for fd in [stdin(), stdout(), stderr()] {
        if rustix::io::fcntl_getfd(fd).is_err() {
            // The lowest free descriptor is `fd` itself (every lower one is open or was filled).
            let _ = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/null")
                .map(IntoRawFd::into_raw_fd);
        }
    }
}
