//! The s390x downcall trampoline (hand-written assembly), for the s390x ELF ABI.
//!
//! `gatun_s390x_call(frame: *mut CallFrame)` is an ordinary s390x function. It:
//! 1. saves r6..r15 in the register save area its caller provides at `48(%r15)` (s390x ELF ABI
//!    Supplement, "The Stack Frame"); r11 is the frame pointer (the caller's r15), r10 holds
//!    the `CallFrame` pointer, r9 the capture segment's errno slot, r8 the thread's errno
//!    address (all callee-saved, so they survive the calls);
//! 2. lowers r15 by 160 bytes (the register save area of the functions it calls) and, for a
//!    capture call (`frame.errno != null`), calls `__errno_location` and keeps the result in
//!    r8 (before any argument register is loaded);
//! 3. lowers r15 by the stack-argument area (8-byte slots: r15 stays 8-byte aligned), a page
//!    (4096 bytes) at a time with a store to `0(%r15)` after each page, so the pages of an area
//!    of any size (up to [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES)) are touched in
//!    order going down and a stack too small for it faults on its guard page; then copies the
//!    `stack_slots` 8-byte slots to `160 + 8k(%r15)`, above the callee's register save area;
//! 4. loads f0, f2, f4, f6 (64-bit images, a `float` already in the high word by `frame`),
//!    then — capture only — copies the capture segment's errno into errno ("restore before"),
//!    then loads r2..r6 and calls the target with `basr %r14, %r1`;
//! 5. immediately after the call — capture only — copies errno back into the capture segment
//!    ("save after"), with no other code in between;
//! 6. stores r2 and f0 into the frame, restores r6..r15 and returns.
//!
//! r0 and r1 are the only other registers it writes; neither carries an argument. The CFI
//! directives describe the saved registers and the frame pointer (the CFA is the caller's r15
//! plus 160, as for every s390x function).
//!
//! Invariant: the layout of `CallFrame` (offsets 0..120) matches the constants below.

use super::CallFrame;

const _: () = {
    assert!(std::mem::offset_of!(CallFrame, target) == 0);
    assert!(std::mem::offset_of!(CallFrame, gpr) == 8);
    assert!(std::mem::offset_of!(CallFrame, fpr) == 48);
    assert!(std::mem::offset_of!(CallFrame, stack) == 80);
    assert!(std::mem::offset_of!(CallFrame, stack_slots) == 88);
    assert!(std::mem::offset_of!(CallFrame, errno) == 96);
    assert!(std::mem::offset_of!(CallFrame, ret_int) == 104);
    assert!(std::mem::offset_of!(CallFrame, ret_fpr) == 112);
    assert!(std::mem::size_of::<CallFrame>() == 120);
};

asm_function!(
    "gatun_s390x_call",
    [
        ".cfi_startproc",
        "stmg %r6, %r15, 48(%r15)",
        ".cfi_offset %r6, -112",
        ".cfi_offset %r7, -104",
        ".cfi_offset %r8, -96",
        ".cfi_offset %r9, -88",
        ".cfi_offset %r10, -80",
        ".cfi_offset %r11, -72",
        ".cfi_offset %r12, -64",
        ".cfi_offset %r13, -56",
        ".cfi_offset %r14, -48",
        ".cfi_offset %r15, -40",
        "lgr %r11, %r15",
        ".cfi_def_cfa_register %r11",
        "aghi %r15, -160",
        "lgr %r10, %r2",
        // r9 = the capture segment's errno slot (or null), r8 = this thread's errno address
        "lg %r9, 96(%r10)",
        "ltgr %r9, %r9",
        "je 2f",
        "brasl %r14, {errno_location}@PLT",
        "lgr %r8, %r2",
        "2:",
        // the stack-argument area, made a page at a time going down, each page touched
        // before the next
        "lg %r7, 88(%r10)",
        "lg %r6, 80(%r10)",
        "sllg %r1, %r7, 3",
        "lghi %r0, 4096",
        "3:",
        "clgr %r1, %r0",
        "jl 4f",
        "sgr %r15, %r0",
        "stg %r0, 0(%r15)",
        "sgr %r1, %r0",
        "j 3b",
        "4:",
        "sgr %r15, %r1",
        "la %r1, 160(%r15)",
        "5:",
        "ltgr %r7, %r7",
        "je 6f",
        "mvc 0(8, %r1), 0(%r6)",
        "la %r1, 8(%r1)",
        "la %r6, 8(%r6)",
        "aghi %r7, -1",
        "j 5b",
        "6:",
        "ld %f0, 48(%r10)",
        "ld %f2, 56(%r10)",
        "ld %f4, 64(%r10)",
        "ld %f6, 72(%r10)",
        "ltgr %r9, %r9",
        "je 7f",
        "l %r0, 0(%r9)",
        "st %r0, 0(%r8)",
        "7:",
        "lmg %r2, %r6, 8(%r10)",
        "lg %r1, 0(%r10)",
        "basr %r14, %r1",
        "ltgr %r9, %r9",
        "je 8f",
        "l %r0, 0(%r8)",
        "st %r0, 0(%r9)",
        "8:",
        "stg %r2, 104(%r10)",
        "std %f0, 112(%r10)",
        "lmg %r6, %r15, 48(%r11)",
        ".cfi_def_cfa %r15, 160",
        "br %r14",
        ".cfi_endproc",
    ],
    errno_location = sym libc::__errno_location,
);

extern "C" {
    /// See the module documentation.
    pub(crate) fn gatun_s390x_call(frame: *mut CallFrame);
}
