//! The s390x backend: the calling convention of the s390x ELF ABI Supplement (z/Architecture,
//! 64-bit, big-endian; "1.2.1 Registers", "1.2.2 The Stack Frame", "1.2.3 Parameter Passing",
//! "1.2.4 Return Values") as Linux uses it. Its classification is `crate::abi::s390x` (pure
//! data, compiled and tested on every host); on s390x Linux — where this is `backend::native`
//! — the executor: the hand-written trampoline (`trampoline`) with the Rust code that fills its
//! call frame (`frame`), the by-reference copies of aggregates not of 1, 2, 4 or 8 bytes and
//! the result pointer in `r2` (`executor`), and the upcall entry (`upcall_entry`).
//!
//! Calls run a compiled stub per signature (`stub`, encoded by `encode`; the code is pure
//! data, generated and tested on every host) chosen by the `executor` at link time; the
//! trampoline runs them when the OS refuses executable memory.
//!
//! Register usage the executor relies on (ABI Supplement, "Registers"): arguments in r2–r6 and
//! f0, f2, f4, f6, results in r2 and f0; r6–r13, r15 and f8–f15 are callee-saved (r6 is both
//! an argument register and callee-saved); r14 holds the return address (`basr %r14, …`); r0
//! and r1 are scratch registers that carry no argument (the upcall stubs use them). r15 is the
//! stack pointer, 8-byte aligned at every call, and **the caller provides the 160-byte
//! register save area** at `0(%r15)`, which the callee may write; stack arguments start at
//! `160(%r15)`, one 8-byte slot each, a narrow value right-justified in it (big-endian).
//! Every integer argument and integer result is extended to 64 bits by its type (the caller
//! extends arguments, the callee results), so a result is read from the right end of r2.
//!
//! A `float` in a floating-point register is in the short format, which occupies the **high**
//! 32 bits of the 64-bit register (z/Architecture Principles of Operation, "Floating-Point
//! Registers"; `le`/`ste` load and store them): the frame and the stubs put a 4-byte
//! floating-point move there. The 64-bit image of `f0` after a call therefore has a `float`
//! result in its high word; the executor ([`executor::Executor`]), which knows the return
//! kind, moves it to the low word, where the call layer reads a `float`'s bits. In the other
//! direction, upcall plans ([`S390x::plan`] with [`Direction::Upcall`]) name a 4-byte move from
//! `f(2n)` as `Location::Vector(4 + n)`, the frame word where the upcall entry stores that
//! register's high word right-justified; `Vector(0..4)` stay the registers' 64-bit images.
//!
//! The instruction cache needs no maintenance after code is written: z/Architecture keeps
//! instruction fetching coherent with stores (Principles of Operation, "Storage-Operand
//! Consistency" and "Instruction Fetching": a store into an instruction location is seen by
//! later execution of it, and the other CPUs see it once they have serialized, which taking
//! the handle's published `Arc` does); the code arena's `__clear_cache` is libgcc's, a bare
//! `br %r14` on s390x.

#[cfg(any(test, gatun_backend = "s390x"))]
use crate::abi::{CallPlan, Conversion, Location};
#[cfg(doc)]
use crate::backend::Direction;

#[cfg(gatun_backend = "s390x")]
pub(crate) use crate::abi::s390x as classify;

// The compiled-stub compiler: run by the executor; its code generation is pure data, compiled
// (and unit-tested) on every host for the tests.
#[cfg(any(test, gatun_backend = "s390x"))]
pub(crate) mod encode;
#[cfg(any(test, gatun_backend = "s390x"))]
pub(crate) mod stub;

/// One `global_asm!` function `$name` (a string literal, the C name) with the body `$body`
/// and the operands `$operands`: `.text`, 16-byte aligned, global but hidden (private to the
/// linked image), with the ELF `.type` and `.size` directives.
#[cfg(gatun_backend = "s390x")]
macro_rules! asm_function {
    ($name:literal, [$($body:expr),* $(,)?] $(, $($operands:tt)*)?) => {
        std::arch::global_asm!(
            ".text",
            ".p2align 4",
            concat!(".globl ", $name),
            concat!(".hidden ", $name),
            concat!(".type ", $name, ",@function"),
            concat!($name, ":"),
            $($body,)*
            concat!(".size ", $name, ", . - ", $name),
            $($($operands)*)?
        );
    };
}

// The executor: compiled only where it runs (this module is then `backend::native`).
#[cfg(gatun_backend = "s390x")]
pub(crate) mod executor;
#[cfg(gatun_backend = "s390x")]
mod frame;
#[cfg(gatun_backend = "s390x")]
pub(crate) mod slots;
#[cfg(all(test, gatun_backend = "s390x"))]
mod tests;
#[cfg(gatun_backend = "s390x")]
pub(crate) mod trampoline;
#[cfg(gatun_backend = "s390x")]
pub(crate) mod upcall_entry;

#[cfg(gatun_backend = "s390x")]
pub(crate) use frame::CallFrame;

#[cfg(any(test, gatun_backend = "s390x"))]
/// The number of floating-point argument registers (f0, f2, f4, f6): `Location::Vector(n)`
/// for n below it is `f(2n)`'s 64-bit image; in an upcall plan `Vector(FPRS + n)` is the
/// high word of `f(2n)`, right-justified (see the module documentation).
pub(crate) const FPRS: u8 = 4;

#[cfg(any(test, gatun_backend = "s390x"))]
/// Whether a move into (or out of) a floating-point register is a short-format value, which
/// lives in the register's high word: 4 bytes, not widened to a `double`.
#[inline(always)]
pub(crate) fn is_short_fpr_move(size: u8, conv: Conversion) -> bool {
    size == 4 && conv != Conversion::FloatToDouble
}

#[cfg(gatun_backend = "s390x")]
/// The 64-bit register image of a short-format value (a `float`, or a 4-byte one-float
/// struct) whose bits are the low 32 of `bits`: the high word of the register.
#[inline(always)]
pub(crate) const fn short_image(bits: u64) -> u64 {
    bits << 32
}

#[cfg(gatun_backend = "s390x")]
/// The bits of a short-format value (its 32 bits in the low word) from the 64-bit image of
/// the floating-point register holding it.
#[inline(always)]
pub(crate) const fn short_bits(image: u64) -> u64 {
    image >> 32
}

#[cfg(any(test, gatun_backend = "s390x"))]
/// An upcall plan from the classifier's plan: every short-format move from a floating-point
/// register `Vector(n)` becomes `Vector(FPRS + n)`, the frame word where the upcall entry
/// stores the register's high word right-justified, so that the dispatchers read a `float`'s
/// bits in the low 32 as on every backend. Other moves, the by-reference pointers and the
/// return plan are unchanged.
pub(crate) fn upcall_plan(mut plan: CallPlan) -> CallPlan {
    for ap in &mut plan.args {
        for m in &mut ap.moves {
            if let Location::Vector(n) = m.to {
                if n < FPRS && is_short_fpr_move(m.size, m.conv) {
                    m.to = Location::Vector(FPRS + n);
                }
            }
        }
    }
    plan
}

/// The s390x ELF ABI backend of s390x Linux.
#[cfg(gatun_backend = "s390x")]
pub(crate) struct S390x;

#[cfg(gatun_backend = "s390x")]
impl crate::backend::Backend for S390x {
    type Executor = executor::Executor;

    /// [`classify::plan`] (which checks every size and the stack limit), for downcalls and
    /// upcalls alike; an upcall's plan names the short-format FPR moves as [`upcall_plan`]
    /// says. The executor has no limits of its own beyond the plan's: by-reference arguments
    /// and results through `r2` are carried out.
    fn plan(
        descriptor: &crate::layout::FunctionDescriptor,
        first_variadic: Option<usize>,
        direction: crate::backend::Direction,
    ) -> crate::Result<CallPlan> {
        let plan = classify::plan(descriptor, first_variadic)?;
        Ok(match direction {
            crate::backend::Direction::Upcall => upcall_plan(plan),
            _ => plan,
        })
    }

    /// A compiled stub with its fast path, or the trampoline when the OS gives no executable
    /// memory ([`executor::Executor::link`]).
    fn link(
        plan: &CallPlan,
        args: &[crate::backend::ArgKind],
        ret: crate::backend::RetKind,
        capture: bool,
        _target: *const std::ffi::c_void,
    ) -> crate::Result<Self::Executor> {
        executor::Executor::link(plan, args, ret, capture)
    }

    #[cfg(feature = "internals")]
    fn stub_code(
        plan: &CallPlan,
        args: &[crate::backend::ArgKind],
        capture: bool,
    ) -> crate::Result<Vec<u8>> {
        Ok(stub::compile(plan, &crate::backend::ArgCheck::all(args), capture).bytes)
    }

    #[cfg(feature = "internals")]
    fn compile_uncached(
        plan: &CallPlan,
        args: &[crate::backend::ArgKind],
        capture: bool,
    ) -> crate::Result<usize> {
        let checks = crate::backend::ArgCheck::all(args);
        Ok(stub::build(plan, &checks, capture)?.bytes().len())
    }
}

#[cfg(test)]
mod plan_tests {
    use super::*;
    use crate::layout::FunctionDescriptor as FD;
    use crate::layout::{MemoryLayout, ValueLayout as V};

    #[test]
    fn upcall_plans_name_short_fpr_moves_by_the_high_word() {
        let one = MemoryLayout::c_struct([MemoryLayout::from(V::F32)]).unwrap();
        let d = FD::of_void([
            V::F32.into(),
            V::F64.into(),
            one,
            V::I32.into(),
            V::F32.into(),
            V::F32.into(),
        ]);
        let down = crate::abi::s390x::plan(&d, None).unwrap();
        let up = upcall_plan(down.clone());
        let to = |p: &CallPlan| -> Vec<Location> { p.args.iter().map(|a| a.moves[0].to).collect() };
        assert_eq!(
            to(&down),
            [
                Location::Vector(0),
                Location::Vector(1),
                Location::Vector(2),
                Location::Int(0),
                Location::Vector(3),
                Location::Stack(0),
            ]
        );
        // the floats and the one-float struct by their high words; the double, the int and
        // the float on the stack (right-justified in its slot) as they are
        assert_eq!(
            to(&up),
            [
                Location::Vector(4),
                Location::Vector(1),
                Location::Vector(6),
                Location::Int(0),
                Location::Vector(7),
                Location::Stack(0),
            ]
        );
        // a variadic float is promoted: a double's whole register
        let v = crate::abi::s390x::plan(&FD::of_void([V::I32, V::F32]), Some(1)).unwrap();
        assert_eq!(upcall_plan(v.clone()), v);
    }
}
