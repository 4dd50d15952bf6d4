//! The Win64 downcall trampoline (hand-written assembly).
//!
//! `gatun_win64_call(frame: *mut CallFrame)` is an ordinary Microsoft x64 function with SEH
//! unwind data (`.seh_*` directives: the assembler emits its `.pdata`/`.xdata`), so stack
//! walks through a call in progress unwind it like compiled code. It:
//! 1. saves the nonvolatile rbp, rbx, rsi, rdi ("x64 ABI conventions: register volatility and
//!    preservation"), aligns rsp to 16 and makes rbp the frame register (`.seh_setframe`:
//!    the stack area below is sized at run time); rbx holds the `CallFrame` pointer, rsi the
//!    capture buffer, rdi the thread's errno address, all three kept across the calls;
//! 2. reserves `stack_slots` 8-byte slots rounded up to 16 bytes — the 32-byte shadow space
//!    and the stack arguments above it ("x64 calling convention: parameter passing": the
//!    caller always allocates the shadow space; rsp is 16-byte aligned at the call) — and
//!    copies the slots to `[rsp + 8k]`. The area (up to
//!    [`MAX_STACK_BYTES`](crate::backend::MAX_STACK_BYTES)) is probed first, as `__chkstk`
//!    does: a quadword read every 4096 bytes going down from rsp, and at the new rsp, before
//!    rsp moves, so Windows commits the pages through its guard page in order and a stack too
//!    small for the call ends in `STATUS_STACK_OVERFLOW` rather than a write past it;
//! 3. capture only ("restore before"): `*errno = buffer[2]`, `WSASetLastError(buffer[1])`,
//!    then `SetLastError(buffer[0])` last, each call with the reserved area as its shadow
//!    space (they may write only those 32 bytes, which are the target's shadow space too);
//! 4. loads xmm0..xmm3 and rcx, rdx, r8, r9 (all four of each: a variadic double is in both
//!    its XMM register and its GPR, which the plan says with two moves) and calls the target;
//!    nothing between the last restore and the call can change the thread's error states;
//! 5. stores rax and xmm0 into the frame (plain stores), then — capture only — saves
//!    `buffer[0] = GetLastError()`, `buffer[1] = WSAGetLastError()`, `buffer[2] = *errno`
//!    before anything else runs;
//! 6. restores rsp (`lea rsp, [rbp + 8]`) and the saved registers, and returns.
//!
//! xmm6..xmm15 are never touched. r10 and r11 are scratch of the probe and the copy loop only.
//!
//! Invariant: the layout of `CallFrame` (offsets 0..120) matches the constants below.

use super::last_error::{GetLastError, SetLastError, WSAGetLastError, WSASetLastError};
use super::CallFrame;

const _: () = {
    assert!(std::mem::offset_of!(CallFrame, target) == 0);
    assert!(std::mem::offset_of!(CallFrame, gpr) == 8);
    assert!(std::mem::offset_of!(CallFrame, xmm) == 40);
    assert!(std::mem::offset_of!(CallFrame, stack) == 72);
    assert!(std::mem::offset_of!(CallFrame, stack_slots) == 80);
    assert!(std::mem::offset_of!(CallFrame, capture) == 88);
    assert!(std::mem::offset_of!(CallFrame, errno) == 96);
    assert!(std::mem::offset_of!(CallFrame, rax) == 104);
    assert!(std::mem::offset_of!(CallFrame, xmm0) == 112);
    assert!(std::mem::size_of::<CallFrame>() == 120);
};

std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl gatun_win64_call",
    ".def gatun_win64_call",
    ".scl 2",
    ".type 32",
    ".endef",
    "gatun_win64_call:",
    ".seh_proc gatun_win64_call",
    "push rbp",
    ".seh_pushreg rbp",
    "push rbx",
    ".seh_pushreg rbx",
    "push rsi",
    ".seh_pushreg rsi",
    "push rdi",
    ".seh_pushreg rdi",
    // entry rsp = 8 mod 16; after four pushes and 8 more bytes, 0 mod 16
    "sub rsp, 8",
    ".seh_stackalloc 8",
    "mov rbp, rsp",
    ".seh_setframe rbp, 0",
    ".seh_endprologue",
    "mov rbx, rcx",
    "mov rsi, qword ptr [rbx + 88]",
    "mov rdi, qword ptr [rbx + 96]",
    // the stack area: stack_slots * 8 rounded up to 16
    "mov rcx, qword ptr [rbx + 80]",
    "lea rax, [rcx*8 + 15]",
    "and rax, -16",
    // its pages read in order going down before rsp moves (as `__chkstk`): r10 walks down a
    // page at a time, clamped to r11 = the new rsp, until it has read there
    "mov r10, rsp",
    "mov r11, rsp",
    "sub r11, rax",
    "6:",
    "sub r10, 4096",
    "cmp r10, r11",
    "cmovb r10, r11",
    "test qword ptr [r10], r10",
    "cmp r10, r11",
    "jne 6b",
    "sub rsp, rax",
    "mov rdx, qword ptr [rbx + 72]",
    "xor eax, eax",
    "2:",
    "cmp rax, rcx",
    "jae 3f",
    "mov r10, qword ptr [rdx + rax*8]",
    "mov qword ptr [rsp + rax*8], r10",
    "inc rax",
    "jmp 2b",
    "3:",
    "test rsi, rsi",
    "jz 4f",
    "mov eax, dword ptr [rsi + 8]",
    "mov dword ptr [rdi], eax",
    "mov ecx, dword ptr [rsi + 4]",
    "call {wsa_set}",
    "mov ecx, dword ptr [rsi]",
    "call {set}",
    "4:",
    "movq xmm0, qword ptr [rbx + 40]",
    "movq xmm1, qword ptr [rbx + 48]",
    "movq xmm2, qword ptr [rbx + 56]",
    "movq xmm3, qword ptr [rbx + 64]",
    "mov rcx, qword ptr [rbx + 8]",
    "mov rdx, qword ptr [rbx + 16]",
    "mov r8, qword ptr [rbx + 24]",
    "mov r9, qword ptr [rbx + 32]",
    "call qword ptr [rbx]",
    "mov qword ptr [rbx + 104], rax",
    "movq qword ptr [rbx + 112], xmm0",
    "test rsi, rsi",
    "jz 5f",
    "call {get}",
    "mov dword ptr [rsi], eax",
    "call {wsa_get}",
    "mov dword ptr [rsi + 4], eax",
    "mov eax, dword ptr [rdi]",
    "mov dword ptr [rsi + 8], eax",
    "5:",
    "lea rsp, [rbp + 8]",
    "pop rdi",
    "pop rsi",
    "pop rbx",
    "pop rbp",
    "ret",
    ".seh_endproc",
    get = sym GetLastError,
    set = sym SetLastError,
    wsa_get = sym WSAGetLastError,
    wsa_set = sym WSASetLastError,
);

extern "C" {
    /// See the module documentation.
    pub(crate) fn gatun_win64_call(frame: *mut CallFrame);
}
