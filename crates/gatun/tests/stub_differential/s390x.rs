//! The s390x recorder (s390x ELF ABI Supplement, "Parameter Passing" and "Return Values"):
//! `stubdiff_record` saves r2..r6, all 64 bits of f0, f2, f4, f6 (a `float` argument in the
//! high word) and 200 slots of the caller's stack-argument area (from `160(%r15)` at entry);
//! records and replaces errno; calls `stubdiff_deref` (which copies the caller-made copies of
//! by-reference arguments while they are alive); then writes the chosen in-memory return
//! through the hidden pointer of r2 (returning it in r2 too), or returns r2 and f0.
//!
//! It saves r6..r15 in the register save area its caller provides and gives the functions it
//! calls one of their own (160 bytes below its r15), as the ABI has every caller do.

use super::{stubdiff_deref, STUBDIFF_ERRNO, STUBDIFF_REC, STUBDIFF_RET};

/// r2..r6 at 0..5 (r2 also the hidden return pointer), f0, f2, f4, f6 at 5..9, the
/// stack-argument slots from 9.
pub const INT_BASE: usize = 0;
pub const VEC_BASE: usize = 5;
pub const STACK_BASE: usize = 9;

std::arch::global_asm!(
    ".text",
    ".p2align 3",
    ".globl stubdiff_record",
    ".type stubdiff_record, @function",
    "stubdiff_record:",
    "stmg %r6, %r15, 48(%r15)",
    "larl %r1, {rec}",
    "stmg %r2, %r6, 0(%r1)",
    "std %f0, 40(%r1)",
    "std %f2, 48(%r1)",
    "std %f4, 56(%r1)",
    "std %f6, 64(%r1)",
    "la %r3, 72(%r1)",
    "la %r4, 160(%r15)",
    "lghi %r5, 200",
    "2:",
    "mvc 0(8, %r3), 0(%r4)",
    "la %r3, 8(%r3)",
    "la %r4, 8(%r4)",
    "brctg %r5, 2b",
    "lgr %r11, %r15",
    "aghi %r15, -160",
    "brasl %r14, __errno_location@PLT",
    "larl %r1, {errno}",
    "l %r0, 0(%r2)",
    "st %r0, 0(%r1)",
    "l %r0, 4(%r1)",
    "st %r0, 0(%r2)",
    "brasl %r14, {deref}",
    "lgr %r15, %r11",
    "larl %r1, {rec}",
    "lg %r2, 0(%r1)",
    "larl %r3, {ret}",
    "lg %r4, 48(%r3)",
    "ltgr %r4, %r4",
    "je 3f",
    "la %r5, 56(%r3)",
    "lgr %r6, %r2",
    "4:",
    "mvc 0(1, %r6), 0(%r5)",
    "la %r5, 1(%r5)",
    "la %r6, 1(%r6)",
    "brctg %r4, 4b",
    "lmg %r6, %r15, 48(%r15)",
    "br %r14",
    "3:",
    "lg %r2, 0(%r3)",
    "ld %f0, 16(%r3)",
    "lmg %r6, %r15, 48(%r15)",
    "br %r14",
    ".size stubdiff_record, . - stubdiff_record",
    rec = sym STUBDIFF_REC,
    ret = sym STUBDIFF_RET,
    errno = sym STUBDIFF_ERRNO,
    deref = sym stubdiff_deref,
);
