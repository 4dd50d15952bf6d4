//! The `linker::Arguments` fast path on RISC-V 64 (LP64D): a call whose arguments are at most
//! eight scalars, not variadic, is made straight from Rust with the argument registers loaded
//! from the slots — no stub. The RISC-V psABI ("Integer Calling Convention", "Hardware
//! Floating-point Calling Convention") gives each named integer-class argument (integers,
//! bools, pointers) the next of a0-a7 and each named `float`/`double` the next of fa0-fa7, so
//! with at most eight arguments all are in registers and the registers follow from the kinds
//! alone. The slots hold small integers extended to 64 bits by their type and a `float`'s bits
//! in the low 32 bits; the register images add what LP64D requires of the whole register: an
//! `unsigned int` sign-extended from bit 31, a `float` NaN-boxed (upper 32 bits all ones).
//!
//! # Invariants
//! - Calls are made from `asm!` blocks (`jalr`) without `nostack` and with `clobber_abi("C")`,
//!   whose operands are exactly the argument registers in use.
//! - [`path_of`] gives a path only to signatures this module can call: no capture, not
//!   variadic, at most eight arguments, all scalars, a non-bool scalar or void return.

use std::ffi::c_void;

use crate::abi::CallPlan;
use crate::backend::{ArgKind, RetKind, Slots, SlotsPath};
use crate::layout::ScalarKind;

/// The slots path of a signature (see the module documentation).
pub(crate) fn path_of(plan: &CallPlan, args: &[ArgKind], ret: RetKind, capture: bool) -> SlotsPath {
    let scalars = args.len() <= 8 && args.iter().all(|a| matches!(a, ArgKind::Scalar(_)));
    if capture || plan.is_variadic() || !scalars {
        return SlotsPath::None;
    }
    match ret {
        RetKind::Scalar(ScalarKind::F32 | ScalarKind::F64) => SlotsPath::Float,
        RetKind::Scalar(ScalarKind::Bool) | RetKind::Group { .. } => SlotsPath::None,
        RetKind::Void | RetKind::Scalar(_) => SlotsPath::Int,
    }
}

/// The argument registers of such a call: `gp[..ni]` for a0-a7, `fp[..nf]` for fa0-fa7.
pub(crate) struct DirectRegisters {
    gp: [u64; 8],
    fp: [u64; 8],
    ni: usize,
    nf: usize,
}

impl DirectRegisters {
    /// The registers of the arguments whose kind word is `kinds` (`linker::arguments`: the
    /// `Value` tag of each argument, zero bytes after the last; at most eight). Inlined with a
    /// constant `kinds` this folds to the register assignment itself.
    ///
    /// # Safety
    /// `slots[i]` is initialised for every non-zero kind byte `i` of `kinds`.
    #[inline(always)]
    pub(crate) unsafe fn of(kinds: u64, slots: &Slots) -> Self {
        let (f32_tag, f64_tag, u32_tag) = (
            crate::value::scalar_tag(ScalarKind::F32),
            crate::value::scalar_tag(ScalarKind::F64),
            crate::value::scalar_tag(ScalarKind::U32),
        );
        let mut r = DirectRegisters {
            gp: [0; 8],
            fp: [0; 8],
            ni: 0,
            nf: 0,
        };
        for (i, slot) in slots.iter().enumerate() {
            let k = (kinds >> (8 * i)) as u8;
            if k == 0 {
                break;
            }
            // SAFETY: kind byte `i` is not zero (caller).
            let bits = unsafe { slot.assume_init() };
            if k == f32_tag || k == f64_tag {
                r.fp[r.nf] = if k == f32_tag {
                    super::nan_box(bits)
                } else {
                    bits
                };
                r.nf += 1;
            } else {
                r.gp[r.ni] = if k == u32_tag {
                    bits as u32 as i32 as i64 as u64
                } else {
                    bits
                };
                r.ni += 1;
            }
        }
        r
    }

    /// Calls `target` with these registers; returns a0 (`v0 = false`) or fa0's 64 bits
    /// (`v0 = true`; a `float` result in the low 32). With constant counts the match folds to
    /// one `jalr` block.
    ///
    /// # Safety
    /// `target` is a function, not variadic, whose arguments are exactly these registers'
    /// and that returns in a0 (`v0 = false`: an integer, a pointer or nothing) or fa0; its
    /// contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call(&self, target: *const c_void, v0: bool) -> u64 {
        let (g, f) = (&self.gp, &self.fp);
        macro_rules! asm_call {
            ([$($gr:tt $gi:tt)*], [$($fr:tt $fi:tt)*]) => {{
                let (a0, fa0): (u64, f64);
                // SAFETY: an LP64D call (see the module invariants) with the argument
                // registers the callee reads; it clobbers only what the C ABI lets it
                // (`clobber_abi("C")`, ra included); it may read and write memory as its
                // contract allows.
                unsafe {
                    std::arch::asm!(
                        "jalr ra, 0({t})",
                        t = in(reg) target,
                        $(in($gr) g[$gi],)*
                        $(in($fr) f64::from_bits(f[$fi]),)*
                        lateout("a0") a0,
                        lateout("fa0") fa0,
                        clobber_abi("C"),
                    );
                }
                if v0 { fa0.to_bits() } else { a0 }
            }};
        }
        crate::backend::slots::register_matrix!(
            asm_call!,
            self.ni => ["a0" 0 "a1" 1 "a2" 2 "a3" 3 "a4" 4 "a5" 5 "a6" 6 "a7" 7],
            self.nf => ["fa0" 0 "fa1" 1 "fa2" 2 "fa3" 3 "fa4" 4 "fa5" 5 "fa6" 6 "fa7" 7],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::scalar_tag;
    use std::mem::MaybeUninit;

    #[test]
    fn eight_arguments_of_any_mix_fit_the_registers() {
        let mut slots: Slots = [MaybeUninit::uninit(); 8];
        for (i, s) in slots.iter_mut().enumerate() {
            *s = MaybeUninit::new(10 + i as u64);
        }
        let kinds = [
            ScalarKind::I64,
            ScalarKind::F32,
            ScalarKind::Pointer,
            ScalarKind::F64,
            ScalarKind::Bool,
            ScalarKind::I8,
            ScalarKind::U32,
            ScalarKind::I16,
        ];
        let word = kinds
            .iter()
            .enumerate()
            .fold(0, |w, (i, k)| w | u64::from(scalar_tag(*k)) << (8 * i));
        // SAFETY: every slot is initialised.
        let r = unsafe { DirectRegisters::of(word, &slots) };
        assert_eq!((r.ni, r.nf), (6, 2));
        assert_eq!(&r.gp[..6], &[10, 12, 14, 15, 16, 17]);
        // the float NaN-boxed, the double as it is
        assert_eq!(&r.fp[..2], &[0xFFFF_FFFF_0000_000B, 13]);
    }

    #[test]
    fn an_unsigned_int_is_sign_extended_from_bit_31() {
        let mut slots: Slots = [MaybeUninit::uninit(); 8];
        slots[0] = MaybeUninit::new(0x8000_0001);
        slots[1] = MaybeUninit::new(0x7FFF_FFFF);
        let word = u64::from(scalar_tag(ScalarKind::U32)) * 0x101;
        // SAFETY: slots 0 and 1 are initialised.
        let r = unsafe { DirectRegisters::of(word, &slots) };
        assert_eq!(&r.gp[..2], &[0xFFFF_FFFF_8000_0001, 0x7FFF_FFFF]);
    }
}
