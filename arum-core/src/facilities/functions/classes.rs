//! What a probe hit costs depends on the probed function's first instruction: the kernel
//! emulates a few (a push of a register, a nop, a relative jump or call) and single-steps every
//! other out of line, a second trap. Each target is put in the class of its first instruction,
//! and each class is calibrated on a function of arum's own that starts the same way
//! (`arum_probe_class_*` below), so that every function's durations lose the cost its own
//! probes have.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The class of a function's first instruction, for the cost of a probe on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// `push` of a register: emulated.
    Push,
    /// A nop of any length: emulated.
    Nop,
    /// A relative jump or call: emulated.
    Branch,
    /// `endbr64` (code built for CET, as Debian's libraries are).
    Endbr,
    /// Anything else: stepped out of line.
    Stepped,
}

impl Class {
    pub const ALL: [Class; 5] = [
        Class::Push,
        Class::Nop,
        Class::Branch,
        Class::Endbr,
        Class::Stepped,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Push => "push",
            Class::Nop => "nop",
            Class::Branch => "branch",
            Class::Endbr => "endbr64",
            Class::Stepped => "stepped",
        }
    }

    /// The class of the instruction starting `code` (x86-64).
    pub fn of(code: &[u8]) -> Class {
        match code {
            [0xf3, 0x0f, 0x1e, 0xfa, ..] => Class::Endbr,
            [0x50..=0x57, ..] | [0x41, 0x50..=0x57, ..] => Class::Push,
            [0x90, ..] | [0x0f, 0x1f, ..] | [0x66, 0x90, ..] | [0x66, 0x0f, 0x1f, ..] => Class::Nop,
            [0xe8, ..] | [0xe9, ..] | [0xeb, ..] | [0x70..=0x7f, ..] | [0x0f, 0x80..=0x8f, ..] => {
                Class::Branch
            }
            _ => Class::Stepped,
        }
    }

    /// The class of the function at `offset` in `file`; stepped when it cannot be read (the
    /// dearest: a cost never under-corrected into negative durations).
    pub fn of_file(file: &Path, offset: u64) -> Class {
        let mut code = [0u8; 8];
        let read = std::fs::File::open(file).and_then(|mut f| {
            f.seek(SeekFrom::Start(offset))?;
            f.read_exact(&mut code)
        });
        match read {
            Ok(()) => Class::of(&code),
            Err(_) => Class::Stepped,
        }
    }

    /// arum's own function of this class applied to `x`: `x + 1`.
    #[inline(always)]
    pub fn call(self, x: u64) -> u64 {
        // SAFETY: the targets (assembly below) read only their argument register and return
        // it plus one, touching no memory; they follow the C calling convention.
        unsafe { self.calibration_target()(x) }
    }

    /// Reads the first bytes of arum's own function of this class as data, which brings its
    /// code back into the caches without calling it (a call would hit its probes).
    pub fn touch_code(self) {
        // SAFETY: the function's first byte lies in arum's own text, mapped readable.
        std::hint::black_box(unsafe { std::ptr::read_volatile(self.address() as *const u8) });
    }

    /// The address of arum's own function of this class.
    pub fn address(self) -> usize {
        self.calibration_target() as usize
    }

    fn calibration_target(self) -> unsafe extern "C" fn(u64) -> u64 {
        match self {
            Class::Push => arum_probe_class_push,
            Class::Nop => arum_probe_class_nop,
            Class::Branch => arum_probe_class_branch,
            Class::Endbr => arum_probe_class_endbr,
            Class::Stepped => arum_probe_class_stepped,
        }
    }
}

// The calibration targets, in assembly so that their first instructions are what their names
// say whatever the compiler would emit. Each returns its argument plus one.
std::arch::global_asm!(
    ".pushsection .text.arum_probe_classes,\"ax\",@progbits",
    ".globl arum_probe_class_push",
    ".type arum_probe_class_push,@function",
    "arum_probe_class_push:",
    "push rbp",
    "mov rbp, rsp",
    "lea rax, [rdi + 1]",
    "pop rbp",
    "ret",
    ".size arum_probe_class_push, .-arum_probe_class_push",
    ".globl arum_probe_class_nop",
    ".type arum_probe_class_nop,@function",
    "arum_probe_class_nop:",
    "nop dword ptr [rax + rax]",
    "lea rax, [rdi + 1]",
    "ret",
    ".size arum_probe_class_nop, .-arum_probe_class_nop",
    ".globl arum_probe_class_branch",
    ".type arum_probe_class_branch,@function",
    "arum_probe_class_branch:",
    "jmp 2f",
    "2:",
    "lea rax, [rdi + 1]",
    "ret",
    ".size arum_probe_class_branch, .-arum_probe_class_branch",
    ".globl arum_probe_class_endbr",
    ".type arum_probe_class_endbr,@function",
    "arum_probe_class_endbr:",
    "endbr64",
    "push rbp",
    "mov rbp, rsp",
    "lea rax, [rdi + 1]",
    "pop rbp",
    "ret",
    ".size arum_probe_class_endbr, .-arum_probe_class_endbr",
    ".globl arum_probe_class_stepped",
    ".type arum_probe_class_stepped,@function",
    "arum_probe_class_stepped:",
    "lea rax, [rdi + 1]",
    "ret",
    ".size arum_probe_class_stepped, .-arum_probe_class_stepped",
    ".popsection",
);

extern "C" {
    fn arum_probe_class_push(x: u64) -> u64;
    fn arum_probe_class_nop(x: u64) -> u64;
    fn arum_probe_class_branch(x: u64) -> u64;
    fn arum_probe_class_endbr(x: u64) -> u64;
    fn arum_probe_class_stepped(x: u64) -> u64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_calibration_target_is_of_its_class_and_adds_one() {
        for class in Class::ALL {
            assert_eq!(class.call(41), 42, "{class:?}");
            // SAFETY: the function's code is mapped readable and at least 8 bytes long.
            let code = unsafe { std::slice::from_raw_parts(class.address() as *const u8, 8) };
            assert_eq!(Class::of(code), class, "{code:02x?}");
        }
    }

    #[test]
    fn first_instructions_by_class() {
        let cases: &[(&[u8], Class)] = &[
            (&[0x55, 0x48, 0x89, 0xe5], Class::Push),
            (&[0x41, 0x57, 0x41, 0x56], Class::Push),
            (&[0x53, 0x48], Class::Push),
            (&[0x90, 0x90], Class::Nop),
            (&[0x0f, 0x1f, 0x44, 0x00, 0x00], Class::Nop),
            (&[0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00], Class::Nop),
            (&[0xe9, 0, 0, 0, 0], Class::Branch),
            (&[0xeb, 0x02], Class::Branch),
            (&[0x0f, 0x84, 0, 0, 0, 0], Class::Branch),
            (&[0xf3, 0x0f, 0x1e, 0xfa, 0x55], Class::Endbr),
            (&[0x48, 0x83, 0xec, 0x08], Class::Stepped),
            (&[0x48, 0x8d, 0x47, 0x01], Class::Stepped),
            (&[0x41, 0x48], Class::Stepped),
            (&[], Class::Stepped),
        ];
        for (code, class) in cases {
            assert_eq!(Class::of(code), *class, "{code:02x?}");
        }
    }
}
