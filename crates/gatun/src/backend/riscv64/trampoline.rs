//! The RISC-V 64 downcall trampoline (hand-written assembly), for the LP64D convention.
//!
//! `gatun_lp64d_call(frame: *mut CallFrame)` is an ordinary LP64D function. It:
//! 1. saves ra and the callee-saved s0..s3 (RISC-V psABI, "Integer Register Convention") in a
//!    48-byte record below the caller's sp; s0 is the frame pointer (the caller's sp), s1
//!    holds the `CallFrame` pointer, s2 the capture segment's errno slot, s3 the thread's
//!    errno address;
//! 2. for a capture call (`frame.errno != null`), calls `__errno_location` and keeps the
//!    result in s3 (before any argument register is loaded);
//! 3. reserves the stack-argument area rounded up to 16 bytes (sp stays 16-byte aligned,
//!    psABI "Integer Calling Convention"), a page (4096 bytes) at a time with `sd zero, 0(sp)`
//!    after each page, so the pages of an area of any size (up to
//!    [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES)) are touched in order going down
//!    and a stack too small for it faults on its guard page; then copies the `stack_slots`
//!    8-byte slots to `[sp + 8k]`;
//! 4. loads fa0..fa7 (64-bit images, a `float` already NaN-boxed by `frame`), then — capture
//!    only — copies the capture segment's errno into errno ("restore before"), then loads
//!    a0..a7 and calls the target with `jalr t1`;
//! 5. immediately after the call — capture only — copies errno back into the capture segment
//!    ("save after"), with no other code in between;
//! 6. stores a0, a1, fa0 and fa1 into the frame, restores sp and the saved registers.
//!
//! It never reads or writes gp or tp (the global and thread pointers). t0..t6 are scratch
//! (t1 carries the target); none carries an argument.
//!
//! Invariant: the layout of `CallFrame` (offsets 0..192) matches the constants below.

use super::CallFrame;

const _: () = {
    assert!(std::mem::offset_of!(CallFrame, target) == 0);
    assert!(std::mem::offset_of!(CallFrame, gpr) == 8);
    assert!(std::mem::offset_of!(CallFrame, fpr) == 72);
    assert!(std::mem::offset_of!(CallFrame, stack) == 136);
    assert!(std::mem::offset_of!(CallFrame, stack_slots) == 144);
    assert!(std::mem::offset_of!(CallFrame, errno) == 152);
    assert!(std::mem::offset_of!(CallFrame, ret_int) == 160);
    assert!(std::mem::offset_of!(CallFrame, ret_fpr) == 176);
    assert!(std::mem::size_of::<CallFrame>() == 192);
};

asm_function!(
    "gatun_lp64d_call",
    [
        ".cfi_startproc",
        "addi sp, sp, -48",
        ".cfi_def_cfa_offset 48",
        "sd ra, 40(sp)",
        "sd s0, 32(sp)",
        "sd s1, 24(sp)",
        "sd s2, 16(sp)",
        "sd s3, 8(sp)",
        ".cfi_offset 1, -8",
        ".cfi_offset 8, -16",
        ".cfi_offset 9, -24",
        ".cfi_offset 18, -32",
        ".cfi_offset 19, -40",
        "addi s0, sp, 48",
        ".cfi_def_cfa 8, 0",
        "mv s1, a0",
        // s2 = the capture segment's errno slot (or null), s3 = this thread's errno address
        "ld s2, 152(s1)",
        "beqz s2, 2f",
        "call {errno_location}",
        "mv s3, a0",
        "2:",
        // the stack-argument area: slots rounded up to an even count (16-byte aligned sp),
        // made a page at a time going down, each page touched before the next
        "ld t0, 144(s1)",
        "ld t1, 136(s1)",
        "addi t2, t0, 1",
        "andi t2, t2, -2",
        "slli t2, t2, 3",
        "li t3, 4096",
        "7:",
        "bltu t2, t3, 8f",
        "sub sp, sp, t3",
        "sd zero, 0(sp)",
        "sub t2, t2, t3",
        "j 7b",
        "8:",
        "sub sp, sp, t2",
        "mv t4, sp",
        "3:",
        "beqz t0, 4f",
        "ld t5, 0(t1)",
        "sd t5, 0(t4)",
        "addi t1, t1, 8",
        "addi t4, t4, 8",
        "addi t0, t0, -1",
        "j 3b",
        "4:",
        "fld fa0, 72(s1)",
        "fld fa1, 80(s1)",
        "fld fa2, 88(s1)",
        "fld fa3, 96(s1)",
        "fld fa4, 104(s1)",
        "fld fa5, 112(s1)",
        "fld fa6, 120(s1)",
        "fld fa7, 128(s1)",
        "beqz s2, 5f",
        "lw t0, 0(s2)",
        "sw t0, 0(s3)",
        "5:",
        "ld a0, 8(s1)",
        "ld a1, 16(s1)",
        "ld a2, 24(s1)",
        "ld a3, 32(s1)",
        "ld a4, 40(s1)",
        "ld a5, 48(s1)",
        "ld a6, 56(s1)",
        "ld a7, 64(s1)",
        "ld t1, 0(s1)",
        "jalr t1",
        "beqz s2, 6f",
        "lw t0, 0(s3)",
        "sw t0, 0(s2)",
        "6:",
        "sd a0, 160(s1)",
        "sd a1, 168(s1)",
        "fsd fa0, 176(s1)",
        "fsd fa1, 184(s1)",
        "addi sp, s0, -48",
        ".cfi_def_cfa 2, 48",
        "ld ra, 40(sp)",
        "ld s0, 32(sp)",
        "ld s1, 24(sp)",
        "ld s2, 16(sp)",
        "ld s3, 8(sp)",
        "addi sp, sp, 48",
        ".cfi_def_cfa_offset 0",
        "ret",
        ".cfi_endproc",
    ],
    errno_location = sym libc::__errno_location,
);

extern "C" {
    /// See the module documentation.
    pub(crate) fn gatun_lp64d_call(frame: *mut CallFrame);
}
