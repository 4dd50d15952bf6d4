//! The Microsoft x64 recorder (Microsoft x64 calling convention, "Parameter passing"):
//! `stubdiff_record` saves rcx, rdx, r8, r9, the low 64 bits of xmm0..3 and 200 slots of the
//! caller's stack from the first home slot on; then, before anything that could change them,
//! the last error and errno it sees (setting the new errno); then `stubdiff_deref` for the
//! by-reference copies, and the new last error last. It writes an in-memory return through the
//! hidden pointer of rcx (returning it in rax), or returns rax and xmm0. rsi and rdi are
//! nonvolatile here, so the in-memory return is copied with r8..r11.

use super::{stubdiff_deref, STUBDIFF_ERRNO, STUBDIFF_LAST_ERROR, STUBDIFF_REC, STUBDIFF_RET};

/// rcx, rdx, r8, r9 at 0..4, xmm0..3 at 4..8; the stack from the first home slot
/// (`Location::Stack(32)` is the first stack argument, past the four home slots).
pub const INT_BASE: usize = 0;
pub const VEC_BASE: usize = 4;
pub const STACK_BASE: usize = 8;

#[link(name = "kernel32")]
extern "system" {
    fn GetLastError() -> u32;
    fn SetLastError(code: u32);
}
extern "C" {
    /// The C runtime's errno address (msvcrt).
    fn _errno() -> *mut i32;
}

std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl stubdiff_record",
    "stubdiff_record:",
    "lea r11, [rip + {rec}]",
    "mov [r11], rcx",
    "mov [r11 + 8], rdx",
    "mov [r11 + 16], r8",
    "mov [r11 + 24], r9",
    "movq [r11 + 32], xmm0",
    "movq [r11 + 40], xmm1",
    "movq [r11 + 48], xmm2",
    "movq [r11 + 56], xmm3",
    "xor eax, eax",
    "2:",
    "mov r10, [rsp + 8 + rax * 8]",
    "mov [r11 + 64 + rax * 8], r10",
    "inc rax",
    "cmp rax, 200",
    "jb 2b",
    // entry rsp = 8 mod 16: 40 bytes make it 16-aligned with the 32-byte home area
    "sub rsp, 40",
    "call {get_last_error}",
    "lea r10, [rip + {last}]",
    "mov [r10], eax",
    "call {errno_location}",
    "lea r10, [rip + {errno}]",
    "mov ecx, [rax]",
    "mov [r10], ecx",
    "mov ecx, [r10 + 4]",
    "mov [rax], ecx",
    "call {deref}",
    "lea r10, [rip + {last}]",
    "mov ecx, [r10 + 4]",
    "call {set_last_error}",
    "add rsp, 40",
    "lea r11, [rip + {rec}]",
    "lea r10, [rip + {ret}]",
    "mov rcx, [r10 + 48]",
    "test rcx, rcx",
    "jz 3f",
    "mov rdx, [r11]",
    "xor eax, eax",
    "4:",
    "mov r8b, [r10 + 56 + rax]",
    "mov [rdx + rax], r8b",
    "inc rax",
    "cmp rax, rcx",
    "jb 4b",
    "mov rax, rdx",
    "ret",
    "3:",
    "mov rax, [r10]",
    "movq xmm0, [r10 + 16]",
    "ret",
    rec = sym STUBDIFF_REC,
    ret = sym STUBDIFF_RET,
    errno = sym STUBDIFF_ERRNO,
    last = sym STUBDIFF_LAST_ERROR,
    get_last_error = sym GetLastError,
    set_last_error = sym SetLastError,
    errno_location = sym _errno,
    deref = sym stubdiff_deref,
);
