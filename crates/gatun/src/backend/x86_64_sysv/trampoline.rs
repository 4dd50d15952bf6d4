//! The x86-64 System V downcall trampoline (hand-written assembly).
//!
//! `gatun_sysv_x64_call(frame: *mut CallFrame)` is an ordinary SysV function. It:
//! 1. saves rbp, rbx, r12, r13 (and r14 for alignment), keeps the frame pointer in rbx;
//! 2. for a capture call (`frame.errno != null`), calls `__errno_location` and keeps the
//!    thread's errno address in r13 (before any argument register is loaded);
//! 3. pushes the stack-argument slots (last first), inserting 8 bytes of padding for an odd
//!    count so rsp is 16-byte aligned at the call (SysV §3.2.2); each push writes the 8 bytes
//!    right below the previous one, so the pages of an area of any size (up to
//!    [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES)) are touched in order going down
//!    and a stack too small for it faults on its guard page (no separate probe is needed);
//! 4. loads xmm0..xmm7, then — capture only — copies the capture segment's errno into errno
//!    ("restore before"), then loads rdi..r9 and rax (%al) and calls the target;
//! 5. immediately after the call — capture only — copies errno back into the capture segment
//!    ("save after"), with no other code in between;
//! 6. stores rax, rdx, xmm0, xmm1 into the frame, restores rsp and the saved registers.
//!
//! Invariant: the layout of `CallFrame` (offsets 0..184) matches the constants below.

use super::CallFrame;

const _: () = {
    assert!(std::mem::offset_of!(CallFrame, gpr) == 8);
    assert!(std::mem::offset_of!(CallFrame, xmm) == 56);
    assert!(std::mem::offset_of!(CallFrame, stack) == 120);
    assert!(std::mem::offset_of!(CallFrame, stack_slots) == 128);
    assert!(std::mem::offset_of!(CallFrame, al) == 136);
    assert!(std::mem::offset_of!(CallFrame, errno) == 144);
    assert!(std::mem::offset_of!(CallFrame, rax) == 152);
    assert!(std::mem::offset_of!(CallFrame, xmm1) == 176);
};

std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl gatun_sysv_x64_call",
    ".hidden gatun_sysv_x64_call",
    ".type gatun_sysv_x64_call,@function",
    "gatun_sysv_x64_call:",
    ".cfi_startproc",
    "push rbp",
    ".cfi_def_cfa_offset 16",
    ".cfi_offset rbp, -16",
    "mov rbp, rsp",
    ".cfi_def_cfa_register rbp",
    "push rbx",
    "push r12",
    "push r13",
    "push r14",
    ".cfi_offset rbx, -24",
    ".cfi_offset r12, -32",
    ".cfi_offset r13, -40",
    ".cfi_offset r14, -48",
    "mov rbx, rdi",
    "mov r12, qword ptr [rbx + 144]",
    "test r12, r12",
    "jz 2f",
    "call __errno_location@PLT",
    "mov r13, rax",
    "2:",
    "mov rcx, qword ptr [rbx + 128]",
    "mov rsi, qword ptr [rbx + 120]",
    "test cl, 1",
    "jz 3f",
    "sub rsp, 8",
    "3:",
    "test rcx, rcx",
    "jz 4f",
    "dec rcx",
    "push qword ptr [rsi + rcx*8]",
    "jmp 3b",
    "4:",
    "movq xmm0, qword ptr [rbx + 56]",
    "movq xmm1, qword ptr [rbx + 64]",
    "movq xmm2, qword ptr [rbx + 72]",
    "movq xmm3, qword ptr [rbx + 80]",
    "movq xmm4, qword ptr [rbx + 88]",
    "movq xmm5, qword ptr [rbx + 96]",
    "movq xmm6, qword ptr [rbx + 104]",
    "movq xmm7, qword ptr [rbx + 112]",
    "test r12, r12",
    "jz 5f",
    "mov eax, dword ptr [r12]",
    "mov dword ptr [r13], eax",
    "5:",
    "mov rdi, qword ptr [rbx + 8]",
    "mov rsi, qword ptr [rbx + 16]",
    "mov rdx, qword ptr [rbx + 24]",
    "mov rcx, qword ptr [rbx + 32]",
    "mov r8, qword ptr [rbx + 40]",
    "mov r9, qword ptr [rbx + 48]",
    "mov rax, qword ptr [rbx + 136]",
    "call qword ptr [rbx]",
    "test r12, r12",
    "jz 6f",
    "mov ecx, dword ptr [r13]",
    "mov dword ptr [r12], ecx",
    "6:",
    "mov qword ptr [rbx + 152], rax",
    "mov qword ptr [rbx + 160], rdx",
    "movq qword ptr [rbx + 168], xmm0",
    "movq qword ptr [rbx + 176], xmm1",
    "lea rsp, [rbp - 32]",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbx",
    "pop rbp",
    ".cfi_def_cfa rsp, 8",
    "ret",
    ".cfi_endproc",
    ".size gatun_sysv_x64_call, . - gatun_sysv_x64_call",
);

extern "C" {
    /// See the module documentation.
    pub(crate) fn gatun_sysv_x64_call(frame: *mut CallFrame);
}
