//! The `linker::Arguments` fast path on AArch64 (AAPCS64 and Apple arm64): a call whose
//! arguments are at most eight scalars, not variadic, is made straight from Rust with the
//! argument registers loaded from the slots — no stub. AAPCS64 §6.8.2 (stage C) gives each
//! integer-class argument (integers, bools, pointers) the next of x0-x7 and each float the next
//! of v0-v7, in order, so with at most eight arguments all are in registers and the registers
//! follow from the kinds alone. Apple arm64 differs only for stack and variadic arguments. The
//! slots hold small integers extended to 64 bits (Apple arm64 has the caller extend them to 32)
//! and a `float`'s bits in the low 32 bits (s-register view of the d-register).
//!
//! # Invariants
//! - Calls are made from `asm!` blocks (`blr`) without `nostack` and with `clobber_abi("C")`,
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

/// The argument registers of such a call: `gp[..ni]` for x0-x7, `fp[..nf]` for v0-v7.
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
        let float = |k: u8| {
            k == crate::value::scalar_tag(ScalarKind::F32)
                || k == crate::value::scalar_tag(ScalarKind::F64)
        };
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
            if float(k) {
                r.fp[r.nf] = bits;
                r.nf += 1;
            } else {
                r.gp[r.ni] = bits;
                r.ni += 1;
            }
        }
        r
    }

    /// Calls `target` with these registers; returns x0 (`v0 = false`) or d0's bits
    /// (`v0 = true`). With constant counts the match folds to one `blr` block.
    ///
    /// # Safety
    /// `target` is a function, not variadic, whose arguments are exactly these registers'
    /// and that returns in x0 (`v0 = false`: an integer, a pointer or nothing) or v0; its
    /// contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call(&self, target: *const c_void, v0: bool) -> u64 {
        let (g, f) = (&self.gp, &self.fp);
        macro_rules! asm_call {
            ([$($gr:tt $gi:tt)*], [$($fr:tt $fi:tt)*]) => {{
                let (x0, d0): (u64, f64);
                // SAFETY: an AAPCS64 call (see the module invariants) with the argument
                // registers the callee reads; it clobbers only what the C ABI lets it
                // (`clobber_abi("C")`, x30 included); it may read and write memory as its
                // contract allows.
                unsafe {
                    std::arch::asm!(
                        "blr {t}",
                        t = in(reg) target,
                        $(in($gr) g[$gi],)*
                        $(in($fr) f64::from_bits(f[$fi]),)*
                        lateout("x0") x0,
                        lateout("v0") d0,
                        clobber_abi("C"),
                    );
                }
                if v0 { d0.to_bits() } else { x0 }
            }};
        }
        crate::backend::slots::register_matrix!(
            asm_call!,
            self.ni => ["x0" 0 "x1" 1 "x2" 2 "x3" 3 "x4" 4 "x5" 5 "x6" 6 "x7" 7],
            self.nf => ["v0" 0 "v1" 1 "v2" 2 "v3" 3 "v4" 4 "v5" 5 "v6" 6 "v7" 7],
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
        assert_eq!(&r.fp[..2], &[11, 13]);
    }
}
