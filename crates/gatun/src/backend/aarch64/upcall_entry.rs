//! The AArch64 upcall entry (hand-written assembly) and the per-stub code in front of it, for
//! AAPCS64 (Linux) and Apple arm64 alike (one body; `asm_function!` adds the ELF or Mach-O
//! directives; the Apple build is assembled but not executed by gatun's tests).
//!
//! A stub's own code is 32 bytes in an [`crate::code::ExecutableCode`] (the code arena):
//!
//! ```text
//! 0:  bti c
//! 4:  ldr x17, 16            ; the stub's context, which starts with its UpcallHeader
//! 8:  ldr x16, 24            ; gatun_aapcs64_upcall_entry
//! 12: br  x16
//! 16: .quad <context>
//! 24: .quad gatun_aapcs64_upcall_entry
//! ```
//!
//! x16 and x17 are the intra-procedure-call scratch registers IP0/IP1 (AAPCS64 §6.1.1): they
//! carry no argument, so the caller's argument registers (x0..x7, x8, v0..v7) and stack reach
//! the entry untouched, and `br x16` to the entry's `bti c` is a valid branch where branch
//! target identification is enforced. The entry is shared by every stub. It:
//! 1. starts with `bti c`, pushes the frame record x29/x30 and reserves an [`UpcallFrame`] (sp
//!    stays 16-byte aligned);
//! 2. stores x0..x7 and x8 (`gpr`), d0..d7 (`vector`: the low 64 bits of v0..v7) and the
//!    address of the caller's first stack argument (sp at entry = `x29 + 16`, §6.8.2 C.12ff.)
//!    into the frame;
//! 3. loads the header's dispatcher ([`UpcallHeader::dispatch`], at offset 0) into x16 and
//!    calls it (`blr x16`) with `(header = x17, frame = sp)`;
//! 4. loads x0, x1 (`ret_int`) and d0..d3 (`ret_vector`) from the frame, restores sp, x29, x30
//!    and returns to the C caller. The callee-saved x19..x28 and d8..d15 are preserved by the
//!    dispatcher, an ordinary `extern "C"` function.
//!
//! Neither piece reads or writes x18 (the platform register; reserved on Apple).
//!
//! Invariant: the offsets used below are those of [`UpcallFrame`] (0..192) and
//! [`UpcallHeader`] (0), asserted next to their definitions.

use super::Aapcs64;
#[cfg(doc)]
use crate::backend::upcall::UpcallFrame;
use crate::backend::upcall::{UpcallEntries, UpcallHeader};
use crate::code::ExecutableCode;
use crate::error::Result;

asm_function!(
    "gatun_aapcs64_upcall_entry",
    [
        ".cfi_startproc",
        "hint #34", // bti c
        "stp x29, x30, [sp, #-16]!",
        ".cfi_def_cfa_offset 16",
        ".cfi_offset 29, -16",
        ".cfi_offset 30, -8",
        "mov x29, sp",
        ".cfi_def_cfa_register 29",
        "sub sp, sp, #192",
        "stp x0, x1, [sp]",
        "stp x2, x3, [sp, #16]",
        "stp x4, x5, [sp, #32]",
        "stp x6, x7, [sp, #48]",
        "str x8, [sp, #64]",
        "stp d0, d1, [sp, #72]",
        "stp d2, d3, [sp, #88]",
        "stp d4, d5, [sp, #104]",
        "stp d6, d7, [sp, #120]",
        "add x9, x29, #16",
        "str x9, [sp, #136]",
        "ldr x16, [x17]",
        "mov x0, x17",
        "mov x1, sp",
        "blr x16",
        "ldp x0, x1, [sp, #144]",
        "ldp d0, d1, [sp, #160]",
        "ldp d2, d3, [sp, #176]",
        "mov sp, x29",
        "ldp x29, x30, [sp], #16",
        ".cfi_def_cfa 31, 0",
        "ret",
        ".cfi_endproc",
    ],
);

extern "C" {
    /// See the module documentation. Never called from Rust; only its address is used.
    fn gatun_aapcs64_upcall_entry();
}

/// Length in bytes of a stub's code.
pub(crate) const STUB_LEN: usize = 32;

/// `bti c`.
const BTI_C: u32 = 0xD503_245F;
/// `ldr x17, #12` (64-bit literal load, PC-relative offset 12 = imm19 3).
const LDR_X17_PLUS_12: u32 = 0x5800_0000 | (3 << 5) | 17;
/// `ldr x16, #16` (imm19 4).
const LDR_X16_PLUS_16: u32 = 0x5800_0000 | (4 << 5) | 16;
/// `br x16`.
const BR_X16: u32 = 0xD61F_0200;

/// The machine code of a stub whose context is at `context` (see the module documentation).
pub(crate) fn stub_code(context: usize) -> [u8; STUB_LEN] {
    let entry = gatun_aapcs64_upcall_entry as *const () as usize;
    let mut code = [0u8; STUB_LEN];
    for (k, insn) in [BTI_C, LDR_X17_PLUS_12, LDR_X16_PLUS_16, BR_X16]
        .into_iter()
        .enumerate()
    {
        code[4 * k..4 * k + 4].copy_from_slice(&insn.to_le_bytes());
    }
    code[16..24].copy_from_slice(&(context as u64).to_le_bytes());
    code[24..32].copy_from_slice(&(entry as u64).to_le_bytes());
    code
}

impl UpcallEntries for Aapcs64 {
    fn upcall_code(header: *const UpcallHeader) -> Result<ExecutableCode> {
        // SAFETY: the stub's code loads `header` into x17 and the shared entry's address into
        // x16 and branches to it; the entry calls the header's dispatcher. Called only as a
        // function of the stub's descriptor type.
        unsafe { ExecutableCode::new(&stub_code(header as usize)) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stub_code_loads_the_context_into_x17_and_branches_to_the_entry_through_x16() {
        let code = super::stub_code(0x1122_3344_5566_7788);
        let insn = |k: usize| u32::from_le_bytes(code[4 * k..4 * k + 4].try_into().unwrap());
        assert_eq!(insn(0), 0xD503_245F); // bti c
        assert_eq!(insn(1), 0x5800_0071); // ldr x17, #12
        assert_eq!(insn(2), 0x5800_0090); // ldr x16, #16
        assert_eq!(insn(3), 0xD61F_0200); // br x16
        assert_eq!(code[16..24], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(
            u64::from_le_bytes(code[24..32].try_into().unwrap()),
            super::gatun_aapcs64_upcall_entry as *const () as usize as u64
        );
    }
}
