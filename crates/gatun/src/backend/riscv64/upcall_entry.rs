//! The RISC-V 64 upcall entry (hand-written assembly), the per-stub code in front of it, and
//! the LP64D register images of upcall results.
//!
//! A stub's own code is 32 bytes in an [`crate::code::ExecutableCode`] (the code arena):
//!
//! ```text
//! 0:  auipc t0, 0            ; t0 = the stub's address
//! 4:  ld    t1, 24(t0)       ; gatun_lp64d_upcall_entry
//! 8:  ld    t0, 16(t0)       ; the stub's context, which starts with its UpcallHeader
//! 12: jr    t1
//! 16: .quad <context>
//! 24: .quad gatun_lp64d_upcall_entry
//! ```
//!
//! t0 and t1 are temporaries that carry no argument (RISC-V psABI, "Integer Register
//! Convention"), so the caller's argument registers (a0..a7, fa0..fa7) and stack reach the
//! entry untouched. The entry is shared by every stub. It:
//! 1. reserves 208 bytes (sp stays 16-byte aligned): an [`UpcallFrame`] at sp, then ra and s0;
//!    s0 is the frame pointer, the caller's sp;
//! 2. stores a0..a7 (`gpr[0..8]`; `gpr[8]` is zeroed, LP64D has no ninth argument register),
//!    fa0..fa7 (`vector`: their 64-bit images) and the address of the caller's first stack
//!    argument (sp at entry, psABI "Integer Calling Convention") into the frame;
//! 3. loads the header's dispatcher ([`UpcallHeader::dispatch`], at offset 0) into t1 and
//!    calls it (`jalr t1`) with `(header = t0, frame = sp)`;
//! 4. loads a0, a1 (`ret_int`) and fa0, fa1 (`ret_vector[0..2]`) from the frame, restores
//!    ra, s0 and sp and returns to the C caller. The callee-saved s1..s11 and fs0..fs11 are
//!    preserved by the dispatcher, an ordinary `extern "C"` function.
//!
//! Neither piece reads or writes gp or tp.
//!
//! The dispatchers store a scalar result's [`UpcallEntries::scalar_return_bits`] and each
//! register part of a struct result's [`UpcallEntries::group_return_bits`]: on RV64 an
//! `unsigned int` is returned sign-extended from bit 31 and a `float` NaN-boxed, as a C
//! caller relies on.
//!
//! Invariant: the offsets used below are those of [`UpcallFrame`] (0..192) and
//! [`UpcallHeader`] (0), asserted next to their definitions.

use super::Lp64d;
#[cfg(doc)]
use crate::backend::upcall::UpcallFrame;
use crate::backend::upcall::{UpcallEntries, UpcallHeader};
use crate::code::ExecutableCode;
use crate::error::Result;
use crate::layout::ScalarKind;

asm_function!(
    "gatun_lp64d_upcall_entry",
    [
        ".cfi_startproc",
        "addi sp, sp, -208",
        ".cfi_def_cfa_offset 208",
        "sd ra, 200(sp)",
        "sd s0, 192(sp)",
        ".cfi_offset 1, -8",
        ".cfi_offset 8, -16",
        "addi s0, sp, 208",
        ".cfi_def_cfa 8, 0",
        "sd a0, 0(sp)",
        "sd a1, 8(sp)",
        "sd a2, 16(sp)",
        "sd a3, 24(sp)",
        "sd a4, 32(sp)",
        "sd a5, 40(sp)",
        "sd a6, 48(sp)",
        "sd a7, 56(sp)",
        "sd zero, 64(sp)",
        "fsd fa0, 72(sp)",
        "fsd fa1, 80(sp)",
        "fsd fa2, 88(sp)",
        "fsd fa3, 96(sp)",
        "fsd fa4, 104(sp)",
        "fsd fa5, 112(sp)",
        "fsd fa6, 120(sp)",
        "fsd fa7, 128(sp)",
        "sd s0, 136(sp)",
        "ld t1, 0(t0)",
        "mv a0, t0",
        "mv a1, sp",
        "jalr t1",
        "ld a0, 144(sp)",
        "ld a1, 152(sp)",
        "fld fa0, 160(sp)",
        "fld fa1, 168(sp)",
        "ld ra, 200(sp)",
        "ld s0, 192(sp)",
        ".cfi_def_cfa 2, 208",
        "addi sp, sp, 208",
        ".cfi_def_cfa_offset 0",
        "ret",
        ".cfi_endproc",
    ],
);

extern "C" {
    /// See the module documentation. Never called from Rust; only its address is used.
    fn gatun_lp64d_upcall_entry();
}

/// Length in bytes of a stub's code.
pub(crate) const STUB_LEN: usize = 32;

/// The machine code of a stub whose context is at `context` (see the module documentation).
pub(crate) fn stub_code(context: usize) -> [u8; STUB_LEN] {
    let entry = gatun_lp64d_upcall_entry as *const () as usize;
    let mut code = [0u8; STUB_LEN];
    use super::encode::{auipc, jalr, load, Load, X};
    // auipc t0, 0; ld t1, 24(t0); ld t0, 16(t0); jr t1
    let words = [
        auipc(X::T0, 0),
        load(Load::D, X::T1, X::T0, 24),
        load(Load::D, X::T0, X::T0, 16),
        jalr(X::ZERO, X::T1, 0),
    ];
    for (k, insn) in words.into_iter().enumerate() {
        code[4 * k..4 * k + 4].copy_from_slice(&insn.to_le_bytes());
    }
    code[16..24].copy_from_slice(&(context as u64).to_le_bytes());
    code[24..32].copy_from_slice(&(entry as u64).to_le_bytes());
    code
}

impl UpcallEntries for Lp64d {
    fn upcall_code(header: *const UpcallHeader) -> Result<ExecutableCode> {
        // SAFETY: the stub's code loads the shared entry's address into t1 and `header` into
        // t0 and jumps to the entry, which calls the header's dispatcher. Called only as a
        // function of the stub's descriptor type.
        unsafe { ExecutableCode::new(&stub_code(header as usize)) }
    }

    /// An `unsigned int` sign-extended from bit 31 (RV64 keeps every 32-bit value so in a
    /// register), a `float` NaN-boxed; every other kind's bits are already its register image
    /// (narrow signed integers sign-extended, unsigned ones zero-extended, a `bool` 0 or 1).
    #[inline(always)]
    fn scalar_return_bits(kind: ScalarKind, bits: u64) -> u64 {
        match kind {
            ScalarKind::U32 => bits as u32 as i32 as i64 as u64,
            ScalarKind::F32 => super::nan_box(bits),
            _ => bits,
        }
    }

    /// A 4-byte part in a floating-point register is a `float` member: NaN-boxed. Integer
    /// parts keep their bytes (the psABI leaves the bits of a struct's register beyond its
    /// members undefined).
    #[inline(always)]
    fn group_return_bits(vector: bool, size: usize, bits: u64) -> u64 {
        if vector && size == 4 {
            super::nan_box(bits)
        } else {
            bits
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stub_code_loads_the_context_into_t0_and_jumps_to_the_entry_through_t1() {
        let code = super::stub_code(0x1122_3344_5566_7788);
        let insn = |k: usize| u32::from_le_bytes(code[4 * k..4 * k + 4].try_into().unwrap());
        // the words of `riscv64-linux-gnu-as` for the four instructions
        assert_eq!(insn(0), 0x0000_0297); // auipc t0, 0
        assert_eq!(insn(1), 0x0182_b303); // ld t1, 24(t0)
        assert_eq!(insn(2), 0x0102_b283); // ld t0, 16(t0)
        assert_eq!(insn(3), 0x0003_0067); // jr t1
        assert_eq!(code[16..24], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(
            u64::from_le_bytes(code[24..32].try_into().unwrap()),
            super::gatun_lp64d_upcall_entry as *const () as usize as u64
        );
    }
}
