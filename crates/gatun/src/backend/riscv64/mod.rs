//! The RISC-V 64 backend: the LP64D calling convention of RISC-V 64 Linux (RISC-V psABI,
//! "Procedure Calling Convention": the integer and the hardware floating-point calling
//! conventions with FLEN = 64). Its classification is `crate::abi::riscv64` (pure data,
//! compiled and tested on every host); on RISC-V 64 Linux — where this is `backend::native` —
//! the executor: the hand-written trampoline (`trampoline`) with the Rust code that fills its
//! call frame (`frame`), the by-reference copies of aggregates over 16 bytes and the result
//! pointer in `a0` (`executor`), and the upcall entry (`upcall_entry`).
//!
//! Calls run a compiled stub per signature (`stub`, encoded by `encode`; the code is pure
//! data, generated and tested on every host) chosen by the `executor` at link time; the
//! trampoline runs them when the OS refuses executable memory.
//!
//! Register usage the executor relies on (psABI, "Integer Register Convention" and
//! "Floating-point Register Convention"): arguments in a0–a7 and fa0–fa7, results in a0/a1
//! and fa0/fa1; s0–s11, fs0–fs11 and sp are callee-saved; t0–t6 are temporaries that carry
//! no argument (the upcall stubs use t0/t1); gp and tp are never read or written. sp is
//! 16-byte aligned at every call. A `float` in a 64-bit floating-point register is NaN-boxed
//! (the upper 32 bits all ones; ISA manual, "NaN Boxing of Narrower Values"): otherwise the
//! callee reads it as the canonical NaN. An `unsigned int` in a 64-bit integer register is
//! sign-extended from bit 31, as every 32-bit value is on RV64 (psABI, "Integer Calling
//! Convention").

#[cfg(gatun_backend = "riscv64")]
pub(crate) use crate::abi::riscv64 as classify;

// The compiled-stub compiler: run by the executor; its code generation is pure data, compiled
// (and unit-tested) on every host for the tests.
#[cfg(any(test, gatun_backend = "riscv64"))]
pub(crate) mod encode;
#[cfg(any(test, gatun_backend = "riscv64"))]
pub(crate) mod stub;

/// One `global_asm!` function `$name` (a string literal, the C name) with the body `$body`
/// and the operands `$operands`: `.text`, 4-byte aligned, global but hidden (private to the
/// linked image), with the ELF `.type` and `.size` directives, assembled with the D extension
/// (`.option arch, +d`) whatever the module-level assembler was told.
#[cfg(gatun_backend = "riscv64")]
macro_rules! asm_function {
    ($name:literal, [$($body:expr),* $(,)?] $(, $($operands:tt)*)?) => {
        std::arch::global_asm!(
            ".text",
            // The module-level assembler may not see the target's D extension (release
            // builds): name it for these functions.
            ".option push",
            ".option arch, +d",
            ".p2align 2",
            concat!(".globl ", $name),
            concat!(".hidden ", $name),
            concat!(".type ", $name, ",@function"),
            concat!($name, ":"),
            $($body,)*
            concat!(".size ", $name, ", . - ", $name),
            ".option pop",
            $($($operands)*)?
        );
    };
}

// The executor: compiled only where it runs (this module is then `backend::native`).
#[cfg(gatun_backend = "riscv64")]
pub(crate) mod executor;
#[cfg(gatun_backend = "riscv64")]
mod frame;
#[cfg(gatun_backend = "riscv64")]
pub(crate) mod slots;
#[cfg(all(test, gatun_backend = "riscv64"))]
mod tests;
#[cfg(gatun_backend = "riscv64")]
pub(crate) mod trampoline;
#[cfg(gatun_backend = "riscv64")]
pub(crate) mod upcall_entry;

#[cfg(gatun_backend = "riscv64")]
pub(crate) use frame::CallFrame;

/// The 64-bit image of a `float` (its bits in the low 32) in a floating-point register:
/// NaN-boxed, the upper 32 bits all ones (RISC-V ISA manual, "NaN Boxing of Narrower Values").
#[cfg(gatun_backend = "riscv64")]
#[inline(always)]
pub(crate) const fn nan_box(bits: u64) -> u64 {
    bits | 0xFFFF_FFFF_0000_0000
}

/// The LP64D backend of RISC-V 64 Linux.
#[cfg(gatun_backend = "riscv64")]
pub(crate) struct Lp64d;

#[cfg(gatun_backend = "riscv64")]
impl crate::backend::Backend for Lp64d {
    type Executor = crate::backend::executor::StubExecutor<executor::Entries>;

    /// [`classify::plan`] (which checks every size and the stack limit), for downcalls and
    /// upcalls alike. The executor has no limits of its own beyond the plan's: by-reference
    /// arguments and results through `a0` are carried out.
    fn plan(
        descriptor: &crate::layout::FunctionDescriptor,
        first_variadic: Option<usize>,
        _direction: crate::backend::Direction,
    ) -> crate::Result<crate::abi::CallPlan> {
        classify::plan(descriptor, first_variadic)
    }

    /// A compiled stub with its fast path, or the trampoline when the OS gives no executable
    /// memory (`StubExecutor::link`).
    fn link(
        plan: &crate::abi::CallPlan,
        args: &[crate::backend::ArgKind],
        ret: crate::backend::RetKind,
        capture: bool,
        _target: *const std::ffi::c_void,
    ) -> crate::Result<Self::Executor> {
        crate::backend::executor::StubExecutor::link(plan, args, ret, capture)
    }

    #[cfg(feature = "internals")]
    fn stub_code(
        plan: &crate::abi::CallPlan,
        args: &[crate::backend::ArgKind],
        capture: bool,
    ) -> crate::Result<Vec<u8>> {
        Ok(stub::compile(plan, &crate::backend::ArgCheck::all(args), capture).bytes)
    }

    #[cfg(feature = "internals")]
    fn compile_uncached(
        plan: &crate::abi::CallPlan,
        args: &[crate::backend::ArgKind],
        capture: bool,
    ) -> crate::Result<usize> {
        let checks = crate::backend::ArgCheck::all(args);
        Ok(stub::build(plan, &checks, capture)?.bytes().len())
    }
}
