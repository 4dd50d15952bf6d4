//! The s390x upcall entry (hand-written assembly), the per-stub code in front of it, and the
//! register images of upcall results.
//!
//! A stub's own code is 40 bytes in an [`crate::code::ExecutableCode`] (the code arena):
//!
//! ```text
//! 0:  larl %r1, .+24        ; %r1 = the stub's data
//! 6:  lg   %r0, 0(%r1)      ; the stub's context, which starts with its UpcallHeader
//! 12: lg   %r1, 8(%r1)      ; gatun_s390x_upcall_entry
//! 18: br   %r1
//! 20: nopr %r7; nopr %r7    ; padding to the data
//! 24: .quad <context>
//! 32: .quad gatun_s390x_upcall_entry
//! ```
//!
//! r0 and r1 are scratch registers that carry no argument (s390x ELF ABI Supplement,
//! "Registers"), so the caller's argument registers (r2–r6, f0, f2, f4, f6), its stack and its
//! return address (r14) reach the entry untouched. The entry is shared by every stub. It:
//! 1. saves r6..r15 in the register save area its caller provides at `48(%r15)` and lowers r15
//!    by 352 bytes: the 160-byte register save area of the dispatcher, then an [`UpcallFrame`]
//!    at `160(%r15)`;
//! 2. stores r2..r6 (`gpr[0..5]`; `gpr[5..9]` are zeroed, the ABI has no more argument
//!    registers), the 64-bit images of f0, f2, f4, f6 (`vector[0..4]`), their high words —
//!    the short-format values, a `float`'s bits — right-justified in `vector[4..8]` (where an
//!    upcall plan's `Location::Vector(4 + n)` reads them, see `super::upcall_plan`), and the
//!    address of the caller's first stack argument (its r15 plus 160, ABI Supplement,
//!    "Parameter Passing") into the frame;
//! 3. loads the header's dispatcher ([`UpcallHeader::dispatch`], at offset 0) into r1 and
//!    calls it (`basr %r14, %r1`) with `(header = r0, frame)`;
//! 4. loads r2 (`ret_int[0]`) and f0 (`ret_vector[0]`) from the frame, restores r6..r15 and
//!    returns to the C caller. The callee-saved f8–f15 are preserved by the dispatcher, an
//!    ordinary `extern "C"` function.
//!
//! The dispatchers store a scalar result's [`UpcallEntries::scalar_return_bits`] and each
//! register part of a struct result's [`UpcallEntries::group_return_bits`]: on s390x a
//! `float` goes to the high word of f0 (the short format), every other result as its value
//! gives it (integers extended to 64 bits by their type, as the ABI has the callee do).
//!
//! Invariant: the offsets used below are those of [`UpcallFrame`] (0..192, at 160 from r15)
//! and [`UpcallHeader`] (0), asserted next to their definitions.

use super::S390x;
#[cfg(doc)]
use crate::backend::upcall::UpcallFrame;
use crate::backend::upcall::{UpcallEntries, UpcallHeader};
use crate::code::ExecutableCode;
use crate::error::Result;
use crate::layout::ScalarKind;

asm_function!(
    "gatun_s390x_upcall_entry",
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
        "lgr %r1, %r15",
        "aghi %r15, -352",
        ".cfi_adjust_cfa_offset 352",
        // gpr[0..5] = r2..r6, gpr[5..9] = 0
        "stmg %r2, %r6, 160(%r15)",
        "xc 200(32, %r15), 200(%r15)",
        // vector[0..4]: the 64-bit images; vector[4..8]: the high words, right-justified
        "std %f0, 232(%r15)",
        "std %f2, 240(%r15)",
        "std %f4, 248(%r15)",
        "std %f6, 256(%r15)",
        "xc 264(32, %r15), 264(%r15)",
        "ste %f0, 268(%r15)",
        "ste %f2, 276(%r15)",
        "ste %f4, 284(%r15)",
        "ste %f6, 292(%r15)",
        // stack = the caller's first stack argument
        "la %r2, 160(%r1)",
        "stg %r2, 296(%r15)",
        // dispatch(header, frame)
        "lgr %r2, %r0",
        "la %r3, 160(%r15)",
        "lg %r1, 0(%r2)",
        "basr %r14, %r1",
        "lg %r2, 304(%r15)",
        "ld %f0, 320(%r15)",
        "lmg %r6, %r15, 400(%r15)",
        ".cfi_restore %r6",
        ".cfi_restore %r7",
        ".cfi_restore %r8",
        ".cfi_restore %r9",
        ".cfi_restore %r10",
        ".cfi_restore %r11",
        ".cfi_restore %r12",
        ".cfi_restore %r13",
        ".cfi_restore %r14",
        ".cfi_restore %r15",
        ".cfi_def_cfa %r15, 160",
        "br %r14",
        ".cfi_endproc",
    ],
);

extern "C" {
    /// See the module documentation. Never called from Rust; only its address is used.
    fn gatun_s390x_upcall_entry();
}

/// Length in bytes of a stub's code.
pub(crate) const STUB_LEN: usize = 40;

/// The machine code of a stub whose context is at `context` and whose entry is `entry` (see
/// the module documentation).
pub(crate) fn code_for(context: usize, entry: usize) -> [u8; STUB_LEN] {
    use super::encode::{br, larl, nopr, rxy, Addr, Rxy, R};
    let mut code = [0u8; STUB_LEN];
    let insns = [
        larl(R::R1, 24),
        rxy(Rxy::Lg, R::R0, Addr::new(R::R1, 0)),
        rxy(Rxy::Lg, R::R1, Addr::new(R::R1, 8)),
        br(R::R1),
        nopr(),
        nopr(),
    ];
    let mut at = 0;
    for i in insns {
        code[at..at + i.len()].copy_from_slice(i.bytes());
        at += i.len();
    }
    debug_assert_eq!(at, 24);
    code[24..32].copy_from_slice(&(context as u64).to_be_bytes());
    code[32..40].copy_from_slice(&(entry as u64).to_be_bytes());
    code
}

/// The machine code of a stub whose context is at `context`, jumping to the shared entry.
pub(crate) fn stub_code(context: usize) -> [u8; STUB_LEN] {
    code_for(context, gatun_s390x_upcall_entry as *const () as usize)
}

impl UpcallEntries for S390x {
    fn upcall_code(header: *const UpcallHeader) -> Result<ExecutableCode> {
        // SAFETY: the stub's code loads `header` into r0 and the shared entry's address into
        // r1 and jumps to the entry, which calls the header's dispatcher. Called only as a
        // function of the stub's descriptor type.
        unsafe { ExecutableCode::new(&stub_code(header as usize)) }
    }

    /// A `float` in the high word of f0 (the short format); every other kind's bits are
    /// already its register image (narrow signed integers sign-extended, unsigned ones
    /// zero-extended, a `bool` 0 or 1: the extension to 64 bits the ABI has the callee make).
    #[inline(always)]
    fn scalar_return_bits(kind: ScalarKind, bits: u64) -> u64 {
        match kind {
            ScalarKind::F32 => super::short_image(bits),
            _ => bits,
        }
    }

    /// A 4-byte part in a floating-point register is a short-format value: the high word.
    /// (s390x returns every struct in memory, so no plan has such parts; the rule is the
    /// register's.)
    #[inline(always)]
    fn group_return_bits(vector: bool, size: usize, bits: u64) -> u64 {
        if vector && size == 4 {
            super::short_image(bits)
        } else {
            bits
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stub_code_loads_the_context_into_r0_and_jumps_to_the_entry_through_r1() {
        let code = super::code_for(0x1122_3344_5566_7788, 0x0000_7FFF_0000_1000);
        // the bytes of `s390x-linux-gnu-as` for the six instructions
        let want = [
            0xC0, 0x10, 0x00, 0x00, 0x00, 0x0C, // larl %r1, .+24
            0xE3, 0x00, 0x10, 0x00, 0x00, 0x04, // lg %r0, 0(%r1)
            0xE3, 0x10, 0x10, 0x08, 0x00, 0x04, // lg %r1, 8(%r1)
            0x07, 0xF1, // br %r1
            0x07, 0x07, 0x07, 0x07, // nopr %r7 (twice)
        ];
        assert_eq!(code[..24], want);
        assert_eq!(code[24..32], 0x1122_3344_5566_7788u64.to_be_bytes());
        assert_eq!(code[32..40], 0x0000_7FFF_0000_1000u64.to_be_bytes());
        let shared = super::stub_code(0);
        assert_eq!(
            u64::from_be_bytes(shared[32..40].try_into().unwrap()),
            super::gatun_s390x_upcall_entry as *const () as usize as u64
        );
    }
}
