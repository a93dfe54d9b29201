//! The process's entry point, ahead of the C library's `_start`.
//!
//! At start, the C library relocates the position-independent build's pointers: it writes every
//! page of the data made read-only after relocation (`.data.rel.ro`, the GOT), and arum then
//! writes most pages of its `.data` and `.bss`. Each first write to such a page is a page fault
//! of its own. One `madvise(MADV_POPULATE_WRITE)` over the whole range, from the page of
//! `.init_array` (where the relocated data begins) to `_end`, makes those pages in a single
//! system call instead (docs/launch-overhead.md measures the difference).
//! The range holds no page the run would not write anyway but for a few of the small `.bss`.
//! A second call makes the stack's first 32 KiB below the entry's stack pointer: the
//! deepest frames of a run's start-up (clap building the run's options, whose builders move
//! large values) reach about 31 KiB down, a page fault for each page otherwise (measured with
//! the `exceptions:page_fault_user` tracepoint; docs/launch-overhead.md). The kernel's stack
//! mapping reaches 128 KiB below the arguments from exec on, so the range lies inside it.
//! This runs before anything is relocated, so it is written in assembly, with addresses relative
//! to the instruction pointer only and no stack of its own. A kernel without
//! MADV_POPULATE_WRITE (before 5.14) returns EINVAL, and the pages fault one by one as before.
//! The build script makes it the entry point only of a position-independent static build: a
//! build at a fixed address relocates nothing, and would copy pages it never writes.

// The kernel starts a process with the stack pointer on argc and RDX zero (the dynamic linker's
// exit hook, none for a static program), which `_start` reads: RDX waits in R12, which `_start`
// does not read. The system call changes only RAX, RCX and R11. 23 is MADV_POPULATE_WRITE, 28
// the number of madvise; the linker marks both ends of the range.
std::arch::global_asm!(
    ".globl arum_entry",
    ".type arum_entry, @function",
    "arum_entry:",
    "mov r12, rdx",
    "lea rdi, [rip + __init_array_start]",
    "and rdi, -4096",
    "lea rsi, [rip + _end]",
    "sub rsi, rdi",
    "mov edx, 23",
    "mov eax, 28",
    "syscall",
    "mov rdi, rsp",
    "and rdi, -4096",
    "sub rdi, 32768",
    "mov esi, 32768",
    "mov edx, 23",
    "mov eax, 28",
    "syscall",
    "mov rdx, r12",
    "jmp _start",
    ".size arum_entry, . - arum_entry",
);
