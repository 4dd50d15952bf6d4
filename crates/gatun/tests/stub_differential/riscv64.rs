//! The RISC-V 64 recorder (RISC-V ELF psABI, "Integer Calling Convention" and "Hardware
//! Floating-point Calling Convention", LP64D): `stubdiff_record` saves a0..a7, all 64 bits of
//! fa0..fa7 (a `float` argument's NaN box included) and 200 slots of the caller's stack from
//! the entry stack pointer; records and replaces errno; calls `stubdiff_deref` (which copies
//! the caller-made copies of by-reference arguments while they are alive); then writes the
//! chosen in-memory return through the hidden pointer of a0 (returning it in a0 too), or
//! returns a0, a1, fa0 and fa1.
//!
//! It uses the temporaries t0..t5 and ra only (never gp or tp), keeps sp 16-byte aligned
//! around its calls, and is assembled with the D extension enabled locally, since the
//! module-level assembler need not have it.

use super::{stubdiff_deref, STUBDIFF_ERRNO, STUBDIFF_REC, STUBDIFF_RET};

/// a0..a7 at 0..8 (a0 also the hidden return pointer), fa0..fa7 at 8..16.
pub const INT_BASE: usize = 0;
pub const VEC_BASE: usize = 8;
pub const STACK_BASE: usize = 16;

std::arch::global_asm!(
    ".text",
    ".option push",
    ".option arch, +d",
    ".p2align 2",
    ".globl stubdiff_record",
    ".type stubdiff_record, @function",
    "stubdiff_record:",
    "lla t0, {rec}",
    "sd a0, 0(t0)",
    "sd a1, 8(t0)",
    "sd a2, 16(t0)",
    "sd a3, 24(t0)",
    "sd a4, 32(t0)",
    "sd a5, 40(t0)",
    "sd a6, 48(t0)",
    "sd a7, 56(t0)",
    "fsd fa0, 64(t0)",
    "fsd fa1, 72(t0)",
    "fsd fa2, 80(t0)",
    "fsd fa3, 88(t0)",
    "fsd fa4, 96(t0)",
    "fsd fa5, 104(t0)",
    "fsd fa6, 112(t0)",
    "fsd fa7, 120(t0)",
    "addi t1, t0, 128",
    "mv t2, sp",
    "li t3, 200",
    "2:",
    "ld t4, 0(t2)",
    "sd t4, 0(t1)",
    "addi t2, t2, 8",
    "addi t1, t1, 8",
    "addi t3, t3, -1",
    "bnez t3, 2b",
    "addi sp, sp, -16",
    "sd ra, 8(sp)",
    "call __errno_location",
    "lla t0, {errno}",
    "lw t1, 0(a0)",
    "sw t1, 0(t0)",
    "lw t1, 4(t0)",
    "sw t1, 0(a0)",
    "call {deref}",
    "ld ra, 8(sp)",
    "addi sp, sp, 16",
    "lla t0, {rec}",
    "ld a0, 0(t0)",
    "lla t1, {ret}",
    "ld t2, 48(t1)",
    "beqz t2, 3f",
    "addi t3, t1, 56",
    "mv t4, a0",
    "4:",
    "lbu t5, 0(t3)",
    "sb t5, 0(t4)",
    "addi t3, t3, 1",
    "addi t4, t4, 1",
    "addi t2, t2, -1",
    "bnez t2, 4b",
    "ret",
    "3:",
    "ld a0, 0(t1)",
    "ld a1, 8(t1)",
    "fld fa0, 16(t1)",
    "fld fa1, 24(t1)",
    "ret",
    ".size stubdiff_record, . - stubdiff_record",
    ".option pop",
    rec = sym STUBDIFF_REC,
    ret = sym STUBDIFF_RET,
    errno = sym STUBDIFF_ERRNO,
    deref = sym stubdiff_deref,
);
