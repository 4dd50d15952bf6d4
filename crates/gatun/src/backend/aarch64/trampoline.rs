//! The AArch64 downcall trampoline (hand-written assembly), for AAPCS64 (Linux) and Apple
//! arm64 alike.
//!
//! `gatun_aapcs64_call(frame: *mut CallFrame)` is an ordinary AAPCS64 function. It:
//! 1. starts with `bti c` (a valid indirect-call target where branch target identification is
//!    enforced), saves x29/x30 as a frame record (x29 is the frame pointer) and the
//!    callee-saved x19..x22 (AAPCS64 §6.4.1): x19 holds the `CallFrame` pointer, x20 the
//!    capture segment's errno slot, x21 the thread's errno address; x22 is saved and restored
//!    only to keep the pair store, and is otherwise unused;
//! 2. for a capture call (`frame.errno != null`), calls the C library's errno-address function
//!    (`__errno_location` on Linux, `__error` on Apple) and keeps the result in x21 (before
//!    any argument register is loaded);
//! 3. reserves the stack-argument area rounded up to 16 bytes (sp stays 16-byte aligned,
//!    §6.4.5.1), a page (4096 bytes) at a time with `str xzr, [sp]` after each page, so the
//!    pages of an area of any size (up to [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES))
//!    are touched in order going down and a stack too small for it faults on its guard page;
//!    then copies the `stack_slots` 8-byte slots to `[sp + 8k]` (an Apple plan's packed
//!    arguments were already placed inside those slots by `frame`);
//! 4. loads d0..d7, then — capture only — copies the capture segment's errno into errno
//!    ("restore before"), then loads x0..x7 and x8 (the indirect-result location, §6.9) and
//!    calls the target with `blr x16`;
//! 5. immediately after the call — capture only — copies errno back into the capture segment
//!    ("save after"), with no other code in between;
//! 6. stores x0, x1 and d0..d3 (the low 64 bits of v0..v3) into the frame, restores sp and
//!    the saved registers.
//!
//! It never reads or writes x18 (the platform register, §6.1.1; reserved on Apple). x16 (IP0)
//! carries the target and x9..x13 are scratch; all are caller-saved and carry no argument.
//!
//! The body is written once; `asm_function!` adds the ELF or the Mach-O directives (Mach-O:
//! `_`-prefixed name, `.private_extern`). The Apple build is assembled (an
//! `aarch64-apple-darwin` rlib) but not executed by gatun's tests.
//!
//! Invariant: the layout of `CallFrame` (offsets 0..216) matches the constants below.

use super::CallFrame;

// This thread's errno address: `__errno_location` (Linux), `__error` (Apple).
#[cfg(not(target_vendor = "apple"))]
use libc::__errno_location as thread_errno_location;
#[cfg(target_vendor = "apple")]
use libc::__error as thread_errno_location;

const _: () = {
    assert!(std::mem::offset_of!(CallFrame, target) == 0);
    assert!(std::mem::offset_of!(CallFrame, gpr) == 8);
    assert!(std::mem::offset_of!(CallFrame, vector) == 80);
    assert!(std::mem::offset_of!(CallFrame, stack) == 144);
    assert!(std::mem::offset_of!(CallFrame, stack_slots) == 152);
    assert!(std::mem::offset_of!(CallFrame, errno) == 160);
    assert!(std::mem::offset_of!(CallFrame, ret_int) == 168);
    assert!(std::mem::offset_of!(CallFrame, ret_vector) == 184);
    assert!(std::mem::size_of::<CallFrame>() == 216);
};

asm_function!(
    "gatun_aapcs64_call",
    [
    ".cfi_startproc",
    "hint #34", // bti c
    "stp x29, x30, [sp, #-48]!",
    ".cfi_def_cfa_offset 48",
    ".cfi_offset 29, -48",
    ".cfi_offset 30, -40",
    "mov x29, sp",
    ".cfi_def_cfa_register 29",
    "stp x19, x20, [sp, #16]",
    "stp x21, x22, [sp, #32]",
    ".cfi_offset 19, -32",
    ".cfi_offset 20, -24",
    ".cfi_offset 21, -16",
    ".cfi_offset 22, -8",
    "mov x19, x0",
    // x20 = the capture segment's errno slot (or null)
    "ldr x20, [x19, #160]",
    "cbz x20, 2f",
    "bl {errno_location}",
    "mov x21, x0",
    "2:",
    // the stack-argument area: slots rounded up to an even count (16-byte aligned sp), made
    // a page at a time going down, each page touched (`str xzr, [sp]`) before the next
    "ldr x9, [x19, #152]",
    "ldr x10, [x19, #144]",
    "add x11, x9, #1",
    "and x11, x11, #0xfffffffffffffffe",
    "lsl x11, x11, #3",
    "7:",
    "cmp x11, #1, lsl #12",
    "b.lo 8f",
    "sub sp, sp, #1, lsl #12",
    "str xzr, [sp]",
    "sub x11, x11, #1, lsl #12",
    "b 7b",
    "8:",
    "sub sp, sp, x11",
    "mov x12, #0",
    "3:",
    "cmp x12, x9",
    "b.hs 4f",
    "ldr x13, [x10, x12, lsl #3]",
    "str x13, [sp, x12, lsl #3]",
    "add x12, x12, #1",
    "b 3b",
    "4:",
    "ldp d0, d1, [x19, #80]",
    "ldp d2, d3, [x19, #96]",
    "ldp d4, d5, [x19, #112]",
    "ldp d6, d7, [x19, #128]",
    "cbz x20, 5f",
    "ldr w9, [x20]",
    "str w9, [x21]",
    "5:",
    "ldp x0, x1, [x19, #8]",
    "ldp x2, x3, [x19, #24]",
    "ldp x4, x5, [x19, #40]",
    "ldp x6, x7, [x19, #56]",
    "ldr x8, [x19, #72]",
    "ldr x16, [x19]",
    "blr x16",
    "cbz x20, 6f",
    "ldr w9, [x21]",
    "str w9, [x20]",
    "6:",
    "stp x0, x1, [x19, #168]",
    "stp d0, d1, [x19, #184]",
    "stp d2, d3, [x19, #200]",
    "mov sp, x29",
    "ldp x21, x22, [sp, #32]",
    "ldp x19, x20, [sp, #16]",
    "ldp x29, x30, [sp], #48",
    ".cfi_def_cfa 31, 0",
    "ret",
    ".cfi_endproc",
    ],
    errno_location = sym thread_errno_location,
);

extern "C" {
    /// See the module documentation.
    pub(crate) fn gatun_aapcs64_call(frame: *mut CallFrame);
}
