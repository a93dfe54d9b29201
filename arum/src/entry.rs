//! The process's entry point, ahead of the C library's `_start`.
//!
//! At start, the C library relocates the position-independent build's pointers: it writes every
//! page of the data made read-only after relocation (`.data.rel.ro`, the GOT), and arum then
//! writes most pages of its `.data`. Each first write to such a page is a page fault of its
//! own. One `madvise(MADV_POPULATE_WRITE)` over the whole range, from the page of `.init_array`
//! (where the relocated data begins) to the end of `.data` (`_edata`), makes those pages in a
//! single system call instead (docs/launch-overhead.md measures the difference). `.bss` is
//! left to fault: a run writes one or two of its seven pages (most of it is the C library's
//! table of thread-specific keys, 16 KiB of which a run uses the first entries), and a page
//! made but never written is a page allocated for nothing (`kmem:mm_page_alloc` counts them).
//! A second call makes the stack's first 32 KiB below the entry's stack pointer: a plain run
//! reaches about 30 KiB down (`main`, the run, the measurement and the report's filling, which
//! reads the saved calibration: 3-9 KiB of frame each), a page fault for each page otherwise
//! (a hardware watchpoint on the deepest word written; docs/launch-overhead.md). The kernel's stack
//! mapping reaches 128 KiB below the arguments from exec on, so the range lies inside it.
//! Then it applies the packed relative relocations (`DT_RELR`, which the build asks the linker
//! for) itself and sets their size in the dynamic section to zero, so that the C library finds
//! none left to apply. The C library's decoder tests each bitmap's 63 bits one at a time, on
//! branches that depend on the data; this one jumps from set bit to set bit (`bsf`), and the
//! packed table is 3 KiB where the plain one is 250 KiB, read from the file at every start
//! (`benchmarks/overhead.sh` with `ARUM_BESIDE` set to a build with plain relocations measures
//! the difference; docs/launch-overhead.md). Relocations that are not relative (the C library's
//! `IRELATIVE`s) stay in the plain table, the C library's to apply. A binary without a packed
//! table (a linker that cannot pack) is left to the C library whole.
//! This runs before anything is relocated, so it is written in assembly, with addresses relative
//! to the instruction pointer only and no stack of its own. A kernel without
//! MADV_POPULATE_WRITE (before 5.14) returns EINVAL, and the pages fault one by one as before.
//! The build script makes it the entry point only of a position-independent static build: a
//! build at a fixed address relocates nothing, and would copy pages it never writes.

// The kernel starts a process with the stack pointer on argc and RDX zero (the dynamic linker's
// exit hook, none for a static program), which `_start` reads: RDX waits in R12, which `_start`
// does not read. The system call changes only RAX, RCX and R11; `_start` reads no register but
// RSP and RDX, so the relocation may use the others freely. 23 is MADV_POPULATE_WRITE,
// 28 the number of madvise; the linker marks both ends of the range. The dynamic section lies in
// the data made read-only after relocation, still writable here.
std::arch::global_asm!(
    ".globl arum_entry",
    ".type arum_entry, @function",
    "arum_entry:",
    "mov r12, rdx",
    "lea rdi, [rip + __init_array_start]",
    "and rdi, -4096",
    "lea rsi, [rip + _edata]",
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
    // The load address: the ELF header sits at address 0 of a position-independent executable
    // (the C library's relocation takes its base the same way).
    "lea r8, [rip + __ehdr_start]",
    // Find DT_RELR (36, the table's link-time address) and DT_RELRSZ (35, its size in bytes).
    "lea rsi, [rip + _DYNAMIC]",
    "xor ecx, ecx",
    "xor edx, edx",
    "xor r9d, r9d",
    "2:",
    "mov rax, [rsi]",
    "test rax, rax",
    "jz 4f",
    "cmp rax, 36",
    "jne 3f",
    "mov rcx, [rsi + 8]",
    "3:",
    "cmp rax, 35",
    "jne 30f",
    "mov rdx, [rsi + 8]",
    "lea r9, [rsi + 8]",
    "30:",
    "add rsi, 16",
    "jmp 2b",
    "4:",
    "test rcx, rcx",
    "jz 9f",
    "test r9, r9",
    "jz 9f",
    // RCX walks the table up to RDX; RDI is the next address an entry describes.
    "add rcx, r8",
    "add rdx, rcx",
    "xor edi, edi",
    "5:",
    "cmp rcx, rdx",
    "jae 8f",
    "mov rax, [rcx]",
    "add rcx, 8",
    "test al, 1",
    "jnz 6f",
    // An even entry is the link-time address of one pointer to relocate; the next entry's
    // bitmap starts at the word after it.
    "lea rdi, [r8 + rax]",
    "add [rdi], r8",
    "add rdi, 8",
    "jmp 5b",
    // An odd entry is a bitmap: its bit i (1 to 63) marks the word i - 1 after RDI.
    "6:",
    "shr rax, 1",
    "jz 7f",
    "61:",
    "bsf r10, rax",
    "add [rdi + r10 * 8], r8",
    "lea r11, [rax - 1]",
    "and rax, r11",
    "jnz 61b",
    "7:",
    "add rdi, 504",
    "jmp 5b",
    // Every packed relocation is applied: leave the C library none.
    "8:",
    "mov qword ptr [r9], 0",
    "9:",
    "mov rdx, r12",
    "jmp _start",
    ".size arum_entry, . - arum_entry",
);
