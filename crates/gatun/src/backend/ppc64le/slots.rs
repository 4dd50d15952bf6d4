//! The `linker::Arguments` fast path on PPC64LE (ELFv2): a call whose arguments are at most
//! eight scalars, not variadic, is made straight from Rust with the argument registers loaded
//! from the slots — no stub. ELFv2 ABI 2.2.3.2 ("Parameter Passing Register Selection
//! Algorithm") gives each argument the next doubleword of the parameter save area; an
//! integer-class argument (integers, bools, pointers) in doubleword k goes in r(3+k), and a
//! `float`/`double` goes in the next of f1–f13 while still using up its doubleword (so the
//! GPR of its position is skipped). With at most eight arguments all are in registers, and the
//! registers follow from the kinds alone. The slots hold small integers extended to 64 bits by
//! their type (as the ABI requires of the caller) and a `float`'s bits in the low 32; a
//! `float`'s register image is its double format ([`super::single_to_double`]).
//!
//! # Invariants
//! - Calls are made from `asm!` blocks without `nostack` and with `clobber_abi("C")`, LR and
//!   CTR clobbered, whose operands are exactly the argument registers in use; each block makes
//!   its own frame of the 32-byte header and a 64-byte parameter save area, saves r2 at 24(r1)
//!   around the `bctrl` and calls with the target in r12.
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

/// The argument registers of such a call: `gp[..ni]` for r3–r10 (by position, zero where a
/// floating-point argument's position skips one), `fp[..nf]` for f1–f8.
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
        let (f32_tag, f64_tag) = (
            crate::value::scalar_tag(ScalarKind::F32),
            crate::value::scalar_tag(ScalarKind::F64),
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
                    super::single_to_double(bits)
                } else {
                    bits
                };
                r.nf += 1;
            } else {
                r.gp[i] = bits;
                r.ni = i + 1;
            }
        }
        r
    }

    /// Calls `target` with these registers; returns r3 (`v0 = false`) or f1's 64 bits
    /// (`v0 = true`; a `float` result in double format). With constant counts the match folds
    /// to one `bctrl` block.
    ///
    /// # Safety
    /// `target` is a function, not variadic, whose arguments are exactly these registers'
    /// and that returns in r3 (`v0 = false`: an integer, a pointer or nothing) or f1; its
    /// contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call(&self, target: *const c_void, v0: bool) -> u64 {
        let (g, f) = (&self.gp, &self.fp);
        macro_rules! asm_call {
            ([$($gr:tt $gi:tt)*], [$($fr:tt $fi:tt)*]) => {{
                let (r3, f1): (u64, f64);
                // SAFETY: an ELFv2 call (see the module invariants) with the argument
                // registers the callee reads, in a frame of its own below the protected zone
                // the compiler may use (no `nostack`); it clobbers only what the C ABI lets
                // it (`clobber_abi("C")`, LR and CTR), r2 restored; it may read and write
                // memory as its contract allows.
                unsafe {
                    std::arch::asm!(
                        "stdu 1, -96(1)",
                        "std 2, 24(1)",
                        "mtctr 12",
                        "bctrl",
                        "ld 2, 24(1)",
                        "addi 1, 1, 96",
                        in("r12") target,
                        $(in($gr) g[$gi],)*
                        $(in($fr) f64::from_bits(f[$fi]),)*
                        lateout("r3") r3,
                        lateout("f1") f1,
                        out("lr") _,
                        out("ctr") _,
                        clobber_abi("C"),
                    );
                }
                if v0 { f1.to_bits() } else { r3 }
            }};
        }
        crate::backend::slots::register_matrix!(
            asm_call!,
            self.ni => ["r3" 0 "r4" 1 "r5" 2 "r6" 3 "r7" 4 "r8" 5 "r9" 6 "r10" 7],
            self.nf => ["f1" 0 "f2" 1 "f3" 2 "f4" 3 "f5" 4 "f6" 5 "f7" 6 "f8" 7],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::scalar_tag;
    use std::mem::MaybeUninit;

    #[test]
    fn integers_take_the_gpr_of_their_position_and_floats_the_next_fpr() {
        let mut slots: Slots = [MaybeUninit::uninit(); 8];
        for (i, s) in slots.iter_mut().enumerate() {
            *s = MaybeUninit::new(10 + i as u64);
        }
        slots[1] = MaybeUninit::new(1.5f32.to_bits() as u64);
        slots[3] = MaybeUninit::new((-2.0f64).to_bits());
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
        assert_eq!((r.ni, r.nf), (8, 2));
        // r4 and r6 skipped: the float and the double use up their positions
        assert_eq!(r.gp, [10, 0, 12, 0, 14, 15, 16, 17]);
        // the float in double format, the double as it is
        assert_eq!(&r.fp[..2], &[1.5f64.to_bits(), (-2.0f64).to_bits()]);
    }
}
