//! The PPC64LE recorder (64-Bit ELF V2 ABI, 2.2 "Function Calling Sequence"):
//! `stubdiff_record` saves r3..r10, f1..f13 (double images: a `float` argument in double
//! format) and 200 doublewords of the caller's parameter save area (from 32 bytes above the
//! entry r1); records and replaces errno; then writes the chosen in-memory return through the
//! hidden pointer of r3 (returning it in r3 too), or returns r3, r4 and f1..f8 (f1..f4 from the
//! vector words of `STUBDIFF_RET`, f5..f8 from its next four).
//!
//! It has a global entry point that computes its TOC pointer from r12 (it is called through a
//! function pointer) for the statics and for `__errno_location`, called through its PLT stub
//! (`bl`, then the `nop` the linker turns into the reload of r2 from 24(r1)) in a frame with
//! the 32-byte header and a 64-byte parameter save area. It uses r0, r11, r12 and CTR as
//! scratch and never touches r13.

use super::{STUBDIFF_ERRNO, STUBDIFF_REC, STUBDIFF_RET};

/// r3..r10 at 0..8 (r3 also the hidden return pointer), f1..f13 at 8..21.
pub const INT_BASE: usize = 0;
pub const VEC_BASE: usize = 8;
pub const STACK_BASE: usize = 21;

std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl stubdiff_record",
    ".type stubdiff_record, @function",
    "stubdiff_record:",
    "0: addis 2, 12, .TOC.-0b@ha",
    "addi 2, 2, .TOC.-0b@l",
    ".localentry stubdiff_record, .-stubdiff_record",
    "addis 11, 2, {rec}@toc@ha",
    "addi 11, 11, {rec}@toc@l",
    "std 3, 0(11)",
    "std 4, 8(11)",
    "std 5, 16(11)",
    "std 6, 24(11)",
    "std 7, 32(11)",
    "std 8, 40(11)",
    "std 9, 48(11)",
    "std 10, 56(11)",
    "stfd 1, 64(11)",
    "stfd 2, 72(11)",
    "stfd 3, 80(11)",
    "stfd 4, 88(11)",
    "stfd 5, 96(11)",
    "stfd 6, 104(11)",
    "stfd 7, 112(11)",
    "stfd 8, 120(11)",
    "stfd 9, 128(11)",
    "stfd 10, 136(11)",
    "stfd 11, 144(11)",
    "stfd 12, 152(11)",
    "stfd 13, 160(11)",
    // the caller's parameter save area, 200 doublewords
    "li 0, 200",
    "mtctr 0",
    "addi 12, 1, 24",
    "addi 11, 11, 160",
    "2:",
    "ldu 0, 8(12)",
    "stdu 0, 8(11)",
    "bdnz 2b",
    "mflr 0",
    "std 0, 16(1)",
    "stdu 1, -96(1)",
    "bl __errno_location",
    "nop",
    "addis 11, 2, {errno}@toc@ha",
    "addi 11, 11, {errno}@toc@l",
    "lwz 0, 0(3)",
    "stw 0, 0(11)",
    "lwz 0, 4(11)",
    "stw 0, 0(3)",
    "addi 1, 1, 96",
    "ld 0, 16(1)",
    "mtlr 0",
    "addis 11, 2, {rec}@toc@ha",
    "addi 11, 11, {rec}@toc@l",
    "ld 3, 0(11)",
    "addis 12, 2, {ret}@toc@ha",
    "addi 12, 12, {ret}@toc@l",
    "ld 0, 48(12)",
    "cmpldi 0, 0",
    "beq 3f",
    "mtctr 0",
    "addi 11, 12, 55",
    "addi 12, 3, -1",
    "4:",
    "lbzu 0, 1(11)",
    "stbu 0, 1(12)",
    "bdnz 4b",
    "blr",
    "3:",
    "ld 3, 0(12)",
    "ld 4, 8(12)",
    "lfd 1, 16(12)",
    "lfd 2, 24(12)",
    "lfd 3, 32(12)",
    "lfd 4, 40(12)",
    "lfd 5, 56(12)",
    "lfd 6, 64(12)",
    "lfd 7, 72(12)",
    "lfd 8, 80(12)",
    "blr",
    ".size stubdiff_record, . - stubdiff_record",
    rec = sym STUBDIFF_REC,
    ret = sym STUBDIFF_RET,
    errno = sym STUBDIFF_ERRNO,
);
