//! The C library's start of a static program, without the one step arum does not use.
//!
//! A statically linked glibc asks the kernel for the program's own path on every start
//! (`readlink("/proc/self/exe")` in `_dl_get_origin`), to expand `$ORIGIN` in the search paths
//! of libraries it might load later. arum loads none by such a path: the C library's own
//! `dlopen` uses (character set conversion, name services) search its configured directories,
//! not `$ORIGIN`. That look-up
//! walks /proc on every run, one of the costs `benchmarks/overhead.sh` adds up. Defining the
//! function here keeps the linker from taking glibc's (it takes an archive member only for a
//! symbol still undefined); the answer is glibc's own for "origin unknown", `(char *) -1`,
//! with which an `$ORIGIN` element of a search path is skipped.

/// glibc's internal `const char *_dl_get_origin (void)`, as the start-up calls it.
#[no_mangle]
pub extern "C" fn _dl_get_origin() -> *const libc::c_char {
    usize::MAX as *const libc::c_char
}
