//! The `linker::Arguments` fast path on s390x: a call whose arguments are all scalars in
//! registers, not variadic, is made straight from Rust with the argument registers loaded
//! from the slots — no stub. The s390x ELF ABI Supplement ("Parameter Passing") gives each
//! integer-class argument (integers, bools, pointers) the next of r2–r6 and each
//! `float`/`double` the next of f0, f2, f4, f6, so with at most five of the one and four of the
//! other all are in registers and the registers follow from the kinds alone. The slots hold
//! small integers extended to 64 bits by their type (as the ABI has the caller extend them)
//! and a `float`'s bits in the low 32 bits; a `float`'s register image is those bits in the
//! high word (the short format).
//!
//! # Invariants
//! - Calls are made from `asm!` blocks (`basr %r14`) without `nostack` and with
//!   `clobber_abi("C")`, whose operands are exactly the argument registers in use; each block
//!   lowers `r15` by the 160-byte register save area the callee may write (ABI Supplement,
//!   "The Stack Frame") around the call, so the callee never writes the frame of the function
//!   holding the block.
//! - [`path_of`] gives a path only to signatures this module can call: no capture, not
//!   variadic, every argument a scalar in a register (no stack bytes, no hidden result
//!   pointer), a non-bool scalar or void return.

use std::ffi::c_void;

use crate::abi::CallPlan;
use crate::backend::{ArgKind, RetKind, Slots, SlotsPath};
use crate::layout::ScalarKind;

/// The slots path of a signature (see the module documentation).
pub(crate) fn path_of(plan: &CallPlan, args: &[ArgKind], ret: RetKind, capture: bool) -> SlotsPath {
    let scalars = args.len() <= 8 && args.iter().all(|a| matches!(a, ArgKind::Scalar(_)));
    let in_registers = plan.stack_bytes == 0 && plan.hidden_return_pointer.is_none();
    if capture || plan.is_variadic() || !scalars || !in_registers {
        return SlotsPath::None;
    }
    match ret {
        RetKind::Scalar(ScalarKind::F32 | ScalarKind::F64) => SlotsPath::Float,
        RetKind::Scalar(ScalarKind::Bool) | RetKind::Group { .. } => SlotsPath::None,
        RetKind::Void | RetKind::Scalar(_) => SlotsPath::Int,
    }
}

/// The argument registers of such a call: `gp[..ni]` for r2–r6, `fp[..nf]` for f0, f2, f4, f6.
pub(crate) struct DirectRegisters {
    gp: [u64; 5],
    fp: [u64; 4],
    ni: usize,
    nf: usize,
}

impl DirectRegisters {
    /// The registers of the arguments whose kind word is `kinds` (`linker::arguments`: the
    /// `Value` tag of each argument, zero bytes after the last; at most five integer-class and
    /// four floating-point arguments, as [`path_of`] allows: the indices are masked so that
    /// a longer list cannot index out of the arrays). Inlined with a constant `kinds`
    /// this folds to the register assignment itself.
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
            gp: [0; 5],
            fp: [0; 4],
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
                r.fp[r.nf & 3] = if k == f32_tag {
                    super::short_image(bits)
                } else {
                    bits
                };
                r.nf += 1;
            } else {
                r.gp[r.ni % 5] = bits;
                r.ni += 1;
            }
        }
        r
    }

    /// Calls `target` with these registers; returns r2 (`v0 = false`) or f0's 64-bit image
    /// (`v0 = true`; a `float` result in the high word, which the executor shifts down). With
    /// constant counts the match folds to one `basr` block.
    ///
    /// # Safety
    /// `target` is a function, not variadic, whose arguments are exactly these registers'
    /// and that returns in r2 (`v0 = false`: an integer, a pointer or nothing) or f0; its
    /// contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call(&self, target: *const c_void, v0: bool) -> u64 {
        let (g, f) = (&self.gp, &self.fp);
        macro_rules! asm_call {
            ([$($gr:tt $gi:tt)*], [$($fr:tt $fi:tt)*]) => {{
                let (r2, f0): (u64, f64);
                // SAFETY: an s390x call (see the module invariants) with the argument
                // registers the callee reads and a fresh 160-byte register save area below
                // r15 for it; it clobbers only what the C ABI lets it (`clobber_abi("C")`,
                // r14 included); it may read and write memory as its contract allows.
                unsafe {
                    std::arch::asm!(
                        "aghi %r15, -160",
                        "basr %r14, {t}",
                        "aghi %r15, 160",
                        t = in(reg_addr) target,
                        $(in($gr) g[$gi],)*
                        $(in($fr) f64::from_bits(f[$fi]),)*
                        lateout("r2") r2,
                        lateout("f0") f0,
                        clobber_abi("C"),
                    );
                }
                if v0 { f0.to_bits() } else { r2 }
            }};
        }
        crate::backend::slots::register_matrix!(
            asm_call!,
            self.ni => ["r2" 0 "r3" 1 "r4" 2 "r5" 3 "r6" 4],
            self.nf => ["f0" 0 "f2" 1 "f4" 2 "f6" 3],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::scalar_tag;
    use std::mem::MaybeUninit;

    #[test]
    fn eight_arguments_of_five_integers_and_three_floats_fit_the_registers() {
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
            ScalarKind::F64,
        ];
        let word = kinds
            .iter()
            .enumerate()
            .fold(0, |w, (i, k)| w | u64::from(scalar_tag(*k)) << (8 * i));
        // SAFETY: every slot is initialised.
        let r = unsafe { DirectRegisters::of(word, &slots) };
        assert_eq!((r.ni, r.nf), (5, 3));
        assert_eq!(&r.gp, &[10, 12, 14, 15, 16]);
        // the float in the high word, the doubles as they are
        assert_eq!(&r.fp[..3], &[11 << 32, 13, 17]);
    }

    #[test]
    fn only_signatures_all_in_registers_take_the_path() {
        use crate::layout::{FunctionDescriptor as FD, ValueLayout as V};
        let path = |d: &FD, variadic: Option<usize>| {
            let plan = crate::abi::s390x::plan(d, variadic).unwrap();
            let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
            path_of(&plan, &args, RetKind::of(d.return_layout()), false)
        };
        let mut five = vec![V::I64; 5];
        five.extend([V::F64; 3]);
        assert_eq!(path(&FD::of(V::F32, five.clone()), None), SlotsPath::Float);
        assert_eq!(path(&FD::of(V::I32, five.clone()), None), SlotsPath::Int);
        // a sixth integer or a fifth double is on the stack
        assert_eq!(
            path(&FD::of(V::I32, vec![V::I64; 6]), None),
            SlotsPath::None
        );
        assert_eq!(
            path(&FD::of(V::I32, vec![V::F64; 5]), None),
            SlotsPath::None
        );
        assert_eq!(path(&FD::of(V::BOOL, [V::I32]), None), SlotsPath::None);
        assert_eq!(path(&FD::of(V::I32, [V::I32]), Some(1)), SlotsPath::None);
    }
}
