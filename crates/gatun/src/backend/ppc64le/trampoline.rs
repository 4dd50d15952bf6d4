//! The PPC64LE downcall trampoline (hand-written assembly), for the ELFv2 convention.
//!
//! `gatun_elfv2_call(frame: *mut CallFrame)` is an ordinary ELFv2 function with a single
//! entry point that does not use r2 (it reaches nothing through the TOC). It:
//! 1. saves LR in the caller's LR save doubleword (16(r1)) and the callee-saved r30, r31 in
//!    the protected zone below the caller's r1 (ELFv2 ABI 2.2.2.4); r31 is the frame pointer
//!    (the caller's r1), r30 holds the `CallFrame` pointer;
//! 2. makes its frame: the 32-byte header, the parameter save area of `max(stack_slots, 8)`
//!    doublewords (always at least the 64 bytes a callee may store its register arguments in,
//!    2.2.3.3), rounded up to 16 bytes (r1 stays 16-byte aligned, 2.2.2.1), and the 16 bytes
//!    of the saved registers; a page (4096 bytes) at a time with `stdu`, whose back-chain store
//!    touches each page in order going down, so the pages of a frame of any size (up to
//!    [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES)) are touched in order and a stack
//!    too small for it faults on its guard page; the last `stdux` and a store of r31 leave the
//!    back chain pointing at the caller's frame; then copies the `stack_slots` doublewords to
//!    `32 + 8k(r1)`;
//! 3. loads f1..f13 (64-bit images, a `float` already in double format by `frame`), then —
//!    capture only — copies the capture segment's errno into errno ("restore before"), then
//!    loads r3..r10, puts the target in r12 and CTR, saves r2 at 24(r1) and calls with
//!    `bctrl` (2.3.6 "Function Calls": the callee's global entry point computes its TOC from
//!    r12);
//! 4. immediately after the call loads r2 back from 24(r1), then — capture only — copies
//!    errno back into the capture segment ("save after"), with no other code in between;
//! 5. stores r3, r4 and f1..f8 (double images) into the frame, restores r1, r30, r31 and LR.
//!
//! It names no register beyond r0..r12, r30, r31, f1..f13, CTR, LR and CR0; r13 (the thread
//! pointer) is never touched.
//!
//! Invariant: the layout of `CallFrame` (offsets 0..288) matches the constants below.

use super::CallFrame;

const _: () = {
    assert!(std::mem::offset_of!(CallFrame, target) == 0);
    assert!(std::mem::offset_of!(CallFrame, gpr) == 8);
    assert!(std::mem::offset_of!(CallFrame, fpr) == 72);
    assert!(std::mem::offset_of!(CallFrame, stack) == 176);
    assert!(std::mem::offset_of!(CallFrame, stack_slots) == 184);
    assert!(std::mem::offset_of!(CallFrame, errno) == 192);
    assert!(std::mem::offset_of!(CallFrame, errno_location) == 200);
    assert!(std::mem::offset_of!(CallFrame, ret_int) == 208);
    assert!(std::mem::offset_of!(CallFrame, ret_fpr) == 224);
};

asm_function!(
    "gatun_elfv2_call",
    [
        ".cfi_startproc",
        "mflr 0",
        "std 0, 16(1)",
        "std 31, -8(1)",
        "std 30, -16(1)",
        ".cfi_offset lr, 16",
        ".cfi_offset r31, -8",
        ".cfi_offset r30, -16",
        "mr 31, 1",
        ".cfi_def_cfa_register r31",
        "mr 30, 3",
        // r11 = frame bytes: 32 + 8 * max(slots, 8) rounded up to 16, + 16
        "ld 12, 184(30)",
        "cmpldi 12, 8",
        "bge 1f",
        "li 12, 8",
        "1:",
        "addi 11, 12, 1",
        "rldicr 11, 11, 3, 59",
        "addi 11, 11, 48",
        // a page at a time going down: each stdu stores the back chain in the new page
        "2:",
        "cmpldi 11, 4096",
        "blt 3f",
        "stdu 1, -4096(1)",
        "addi 11, 11, -4096",
        "b 2b",
        "3:",
        "neg 11, 11",
        "stdux 1, 1, 11",
        "std 31, 0(1)",
        // the parameter save area: stack_slots doublewords from 32(r1)
        "ld 12, 184(30)",
        "cmpldi 12, 0",
        "beq 5f",
        "mtctr 12",
        "ld 11, 176(30)",
        "addi 11, 11, -8",
        "addi 10, 1, 24",
        "4:",
        "ldu 0, 8(11)",
        "stdu 0, 8(10)",
        "bdnz 4b",
        "5:",
        "lfd 1, 72(30)",
        "lfd 2, 80(30)",
        "lfd 3, 88(30)",
        "lfd 4, 96(30)",
        "lfd 5, 104(30)",
        "lfd 6, 112(30)",
        "lfd 7, 120(30)",
        "lfd 8, 128(30)",
        "lfd 9, 136(30)",
        "lfd 10, 144(30)",
        "lfd 11, 152(30)",
        "lfd 12, 160(30)",
        "lfd 13, 168(30)",
        // capture: errno = *capture, right before the call
        "ld 11, 192(30)",
        "cmpldi 11, 0",
        "beq 6f",
        "ld 12, 200(30)",
        "lwz 0, 0(11)",
        "stw 0, 0(12)",
        "6:",
        "ld 3, 8(30)",
        "ld 4, 16(30)",
        "ld 5, 24(30)",
        "ld 6, 32(30)",
        "ld 7, 40(30)",
        "ld 8, 48(30)",
        "ld 9, 56(30)",
        "ld 10, 64(30)",
        "ld 12, 0(30)",
        "mtctr 12",
        "std 2, 24(1)",
        "bctrl",
        "ld 2, 24(1)",
        // capture: *capture = errno, right after the call
        "ld 11, 192(30)",
        "cmpldi 11, 0",
        "beq 7f",
        "ld 12, 200(30)",
        "lwz 0, 0(12)",
        "stw 0, 0(11)",
        "7:",
        "std 3, 208(30)",
        "std 4, 216(30)",
        "stfd 1, 224(30)",
        "stfd 2, 232(30)",
        "stfd 3, 240(30)",
        "stfd 4, 248(30)",
        "stfd 5, 256(30)",
        "stfd 6, 264(30)",
        "stfd 7, 272(30)",
        "stfd 8, 280(30)",
        "mr 1, 31",
        ".cfi_def_cfa_register r1",
        "ld 30, -16(1)",
        "ld 31, -8(1)",
        "ld 0, 16(1)",
        "mtlr 0",
        "blr",
        ".cfi_endproc",
    ],
);

extern "C" {
    /// See the module documentation.
    pub(crate) fn gatun_elfv2_call(frame: *mut CallFrame);
}
