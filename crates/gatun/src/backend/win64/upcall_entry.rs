//! The Win64 upcall entry (hand-written assembly, with SEH unwind data) and the per-stub code in
//! front of it.
//!
//! A stub's own code is 23 bytes in an [`crate::code::ExecutableCode`]:
//!
//! ```text
//! movabs r10, <context>                ; the stub's context (its UpcallHeader first)
//! movabs r11, gatun_win64_upcall_entry
//! jmp r11
//! ```
//!
//! r10 and r11 are volatile and carry no argument ("x64 ABI conventions: register volatility
//! and preservation"), so the caller's argument registers and stack reach the entry
//! untouched. The stub is a leaf that touches neither rsp nor a nonvolatile register, so it
//! needs no unwind data ("x64 exception handling": a leaf function without unwind data has its
//! return address at `[rsp]`, which holds all the way to the entry). The entry is shared by
//! every stub. It:
//! 1. pushes rbp (`.seh_pushreg`), makes it the frame register (`.seh_setframe`) and reserves
//!    32 bytes of shadow space for the dispatcher ("the caller must always allocate sufficient
//!    space to store four register parameters") plus an [`UpcallFrame`] above it (224 bytes;
//!    rsp stays 16-byte aligned);
//! 2. stores rcx, rdx, r8, r9 (`gpr[0..4]`), the low 64 bits of xmm0..xmm3 (`vector[0..4]`)
//!    and `stack` = the caller's rsp at its call instruction (entry rsp + 8, past the return
//!    address), where the plan's `Location::Stack(off)` offsets count from: the shadow space at
//!    0..32, the caller's first stack argument at 32;
//! 3. calls the header's dispatcher ([`UpcallHeader::dispatch`], at offset 0: `call [r10]`)
//!    with `(header = r10, frame)` (a Microsoft x64 function, which preserves rbx, rsi, rdi,
//!    r12..r15 and xmm6..xmm15);
//! 4. loads rax (`ret_int[0]`) and xmm0 (`ret_vector[0]`) from the frame — for an in-memory
//!    result the dispatcher put the hidden return pointer (rcx at entry) in `ret_int[0]` —,
//!    restores rsp and rbp and returns.
//!
//! The entry itself uses only rax, rcx, rdx (volatile) and rbp (saved); it never touches rsi,
//! rdi or xmm4..xmm15.
//!
//! Invariant: the offsets used below are those of [`UpcallFrame`] (0..192), placed at
//! `rsp + 32`, and [`UpcallHeader`] (0), asserted next to their definitions.

use super::Win64;
#[cfg(doc)]
use crate::backend::upcall::UpcallFrame;
use crate::backend::upcall::{UpcallEntries, UpcallHeader};
use crate::code::ExecutableCode;
use crate::error::Result;

std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl gatun_win64_upcall_entry",
    ".def gatun_win64_upcall_entry",
    ".scl 2",
    ".type 32",
    ".endef",
    "gatun_win64_upcall_entry:",
    ".seh_proc gatun_win64_upcall_entry",
    "push rbp",
    ".seh_pushreg rbp",
    "mov rbp, rsp",
    ".seh_setframe rbp, 0",
    "sub rsp, 224",
    ".seh_stackalloc 224",
    ".seh_endprologue",
    "mov qword ptr [rsp + 32], rcx",
    "mov qword ptr [rsp + 40], rdx",
    "mov qword ptr [rsp + 48], r8",
    "mov qword ptr [rsp + 56], r9",
    "movq qword ptr [rsp + 104], xmm0",
    "movq qword ptr [rsp + 112], xmm1",
    "movq qword ptr [rsp + 120], xmm2",
    "movq qword ptr [rsp + 128], xmm3",
    "lea rax, [rbp + 16]",
    "mov qword ptr [rsp + 168], rax",
    "mov rcx, r10",
    "lea rdx, [rsp + 32]",
    "call qword ptr [r10]",
    "mov rax, qword ptr [rsp + 176]",
    "movq xmm0, qword ptr [rsp + 192]",
    "lea rsp, [rbp]",
    "pop rbp",
    "ret",
    ".seh_endproc",
);

extern "C" {
    /// See the module documentation. Never called from Rust; only its address is used.
    fn gatun_win64_upcall_entry();
}

/// Length in bytes of a stub's code.
pub(crate) const STUB_LEN: usize = 23;

/// The machine code of a stub whose context is at `context` (see the module documentation).
pub(crate) fn stub_code(context: usize) -> [u8; STUB_LEN] {
    let entry = gatun_win64_upcall_entry as *const () as usize;
    let mut code = [0u8; STUB_LEN];
    code[0..2].copy_from_slice(&[0x49, 0xBA]); // movabs r10, imm64
    code[2..10].copy_from_slice(&(context as u64).to_le_bytes());
    code[10..12].copy_from_slice(&[0x49, 0xBB]); // movabs r11, imm64
    code[12..20].copy_from_slice(&(entry as u64).to_le_bytes());
    code[20..23].copy_from_slice(&[0x41, 0xFF, 0xE3]); // jmp r11
    code
}

impl UpcallEntries for Win64 {
    fn upcall_code(header: *const UpcallHeader) -> Result<ExecutableCode> {
        // SAFETY: the stub's code loads `header` into r10 and jumps to the shared entry, which
        // calls the header's dispatcher; called only as a function of the stub's descriptor
        // type.
        unsafe { ExecutableCode::new(&stub_code(header as usize)) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stub_code_loads_the_context_into_r10_and_jumps_to_the_entry_through_r11() {
        let code = super::stub_code(0x1122_3344_5566_7788);
        assert_eq!(code[..2], [0x49, 0xBA]); // movabs r10,
        assert_eq!(code[2..10], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(code[10..12], [0x49, 0xBB]); // movabs r11,
        assert_eq!(
            u64::from_le_bytes(code[12..20].try_into().unwrap()),
            super::gatun_win64_upcall_entry as *const () as usize as u64
        );
        assert_eq!(code[20..], [0x41, 0xFF, 0xE3]); // jmp r11
    }
}
