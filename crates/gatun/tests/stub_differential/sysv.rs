//! The x86-64 SysV recorder (System V AMD64 psABI, "Parameter Passing"): `stubdiff_record`
//! saves rdi, rsi, rdx, rcx, r8, r9 and rax (`%al`, the vector-register count of a variadic
//! call), the low 64 bits of xmm0..7 and 200 slots of the caller's stack past the return
//! address; records and replaces errno; then writes the chosen in-memory return through the
//! hidden pointer of rdi (returning it in rax) or returns rax, rdx, xmm0 and xmm1.

use super::{STUBDIFF_ERRNO, STUBDIFF_REC, STUBDIFF_RET};

/// rdi, rsi, rdx, rcx, r8, r9 at 0..6, rax (`%al`) at 6, xmm0..7 at 7..15.
pub const INT_BASE: usize = 0;
pub const VEC_BASE: usize = 7;
pub const STACK_BASE: usize = 15;

std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl stubdiff_record",
    "stubdiff_record:",
    "lea r11, [rip + {rec}]",
    "mov [r11], rdi",
    "mov [r11 + 8], rsi",
    "mov [r11 + 16], rdx",
    "mov [r11 + 24], rcx",
    "mov [r11 + 32], r8",
    "mov [r11 + 40], r9",
    "mov [r11 + 48], rax",
    "movq [r11 + 56], xmm0",
    "movq [r11 + 64], xmm1",
    "movq [r11 + 72], xmm2",
    "movq [r11 + 80], xmm3",
    "movq [r11 + 88], xmm4",
    "movq [r11 + 96], xmm5",
    "movq [r11 + 104], xmm6",
    "movq [r11 + 112], xmm7",
    "xor ecx, ecx",
    "2:",
    "mov r10, [rsp + 8 + rcx * 8]",
    "mov [r11 + 120 + rcx * 8], r10",
    "inc rcx",
    "cmp rcx, 200",
    "jb 2b",
    "sub rsp, 8",
    "call __errno_location@PLT",
    "add rsp, 8",
    "lea r10, [rip + {errno}]",
    "mov ecx, [rax]",
    "mov [r10], ecx",
    "mov ecx, [r10 + 4]",
    "mov [rax], ecx",
    "lea r11, [rip + {rec}]",
    "mov rdi, [r11]",
    "lea r10, [rip + {ret}]",
    "mov rcx, [r10 + 48]",
    "test rcx, rcx",
    "jz 3f",
    "lea rsi, [r10 + 56]",
    "rep movsb",
    "mov rax, [r11]",
    "ret",
    "3:",
    "mov rax, [r10]",
    "mov rdx, [r10 + 8]",
    "movq xmm0, [r10 + 16]",
    "movq xmm1, [r10 + 24]",
    "ret",
    rec = sym STUBDIFF_REC,
    ret = sym STUBDIFF_RET,
    errno = sym STUBDIFF_ERRNO,
);
