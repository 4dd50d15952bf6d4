//! The AArch64 recorder (AAPCS64, "Parameter passing"): `stubdiff_record` saves x0..x8 (x8
//! the indirect-result register), d0..d7 and 200 slots of the caller's stack from the entry
//! stack pointer; records and replaces errno; calls `stubdiff_deref` (which copies the
//! caller-made copies of by-reference arguments while they are alive); then writes the chosen
//! in-memory return through x8, or returns x0, x1 and d0..d3.

use super::{stubdiff_deref, STUBDIFF_ERRNO, STUBDIFF_REC, STUBDIFF_RET};

/// x0..x8 at 0..9 (x8 the indirect-result register), d0..d7 at 9..17.
pub const INT_BASE: usize = 0;
pub const VEC_BASE: usize = 9;
pub const STACK_BASE: usize = 17;

std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl stubdiff_record",
    "stubdiff_record:",
    "adrp x9, {rec}",
    "add x9, x9, :lo12:{rec}",
    "stp x0, x1, [x9]",
    "stp x2, x3, [x9, #16]",
    "stp x4, x5, [x9, #32]",
    "stp x6, x7, [x9, #48]",
    "str x8, [x9, #64]",
    "stp d0, d1, [x9, #72]",
    "stp d2, d3, [x9, #88]",
    "stp d4, d5, [x9, #104]",
    "stp d6, d7, [x9, #120]",
    "mov x10, #0",
    "add x11, x9, #136",
    "2:",
    "ldr x12, [sp, x10, lsl #3]",
    "str x12, [x11, x10, lsl #3]",
    "add x10, x10, #1",
    "cmp x10, #200",
    "b.lo 2b",
    "stp x29, x30, [sp, #-16]!",
    "mov x29, sp",
    "bl __errno_location",
    "adrp x10, {errno}",
    "add x10, x10, :lo12:{errno}",
    "ldr w11, [x0]",
    "str w11, [x10]",
    "ldr w11, [x10, #4]",
    "str w11, [x0]",
    "bl {deref}",
    "ldp x29, x30, [sp], #16",
    "adrp x9, {rec}",
    "add x9, x9, :lo12:{rec}",
    "ldr x8, [x9, #64]",
    "adrp x10, {ret}",
    "add x10, x10, :lo12:{ret}",
    "ldr x11, [x10, #48]",
    "cbz x11, 3f",
    "add x12, x10, #56",
    "4:",
    "ldrb w13, [x12], #1",
    "strb w13, [x8], #1",
    "subs x11, x11, #1",
    "b.ne 4b",
    "ret",
    "3:",
    "ldp x0, x1, [x10]",
    "ldp d0, d1, [x10, #16]",
    "ldp d2, d3, [x10, #32]",
    "ret",
    rec = sym STUBDIFF_REC,
    ret = sym STUBDIFF_RET,
    errno = sym STUBDIFF_ERRNO,
    deref = sym stubdiff_deref,
);
