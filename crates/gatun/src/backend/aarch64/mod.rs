//! The AArch64 backend: AAPCS64 (Linux) and Apple arm64 classification into a
//! [`CallPlan`](crate::abi::CallPlan) ([`classify`], public as `gatun::abi::aarch64`; pure data,
//! compiled and tested on every host), and on AArch64 Linux and Apple arm64 — where this is
//! `backend::native` — the executor: the hand-written trampoline (`trampoline`) with the Rust code that fills
//! its call frame (`frame`), the by-reference copies of AAPCS64 §6.8.2 rule B.3 and the
//! indirect-result register `x8` of §6.9 (`executor`), and the upcall entry (`upcall_entry`).
//!
//! Calls run a compiled stub per signature ([`stub`], encoded by [`encode`]; the code is pure
//! data, generated and tested on every host) chosen by the `executor` at link time; the
//! trampoline runs them when the OS refuses executable memory.
//!
//! The executor follows one [`Flavour`](classify::Flavour), chosen at compile time by target
//! vendor (`FLAVOUR`) and used for every plan, downcall and upcall. What is Apple-only:
//! the plans themselves (variadics on the stack, packed named stack arguments written with
//! exactly [`CallPlan::stack_write_bytes`](crate::abi::CallPlan::stack_write_bytes) bytes by
//! the stubs and the trampoline alike), the Mach-O directives of the two `global_asm!`
//! functions and the trampoline's errno address (`__error` instead of `__errno_location`), and
//! the absence of the stub cache's fork lock (only Linux's code arena has a fork handler). The
//! Apple executor is compiled (an `aarch64-apple-darwin` rlib, which assembles the Mach-O
//! code) but not executed by gatun's tests; the Linux one runs under qemu.

#[cfg(gatun_backend = "aarch64")]
pub(crate) use crate::abi::aarch64 as classify;

// The compiled-stub compiler: run by the executor; its code generation is pure data, compiled
// (and unit-tested) on every host for the tests.
#[cfg(any(test, gatun_backend = "aarch64"))]
pub(crate) mod encode;
#[cfg(any(test, gatun_backend = "aarch64"))]
pub(crate) mod stub;

/// One `global_asm!` function `$name` (a string literal, the C name) with the body
/// `$body` and the operands `$operands`: `.text`, 16-byte aligned, global but private to
/// the linked image, with the object format's directives — ELF: `.hidden`, `.type` and
/// `.size`; Mach-O: the `_`-prefixed name and `.private_extern` (no `.type`/`.size`).
/// The body is written once for both.
#[cfg(gatun_backend = "aarch64")]
macro_rules! asm_function {
    ($name:literal, [$($body:expr),* $(,)?] $(, $($operands:tt)*)?) => {
        #[cfg(target_vendor = "apple")]
        std::arch::global_asm!(
            ".text",
            ".p2align 4",
            concat!(".globl _", $name),
            concat!(".private_extern _", $name),
            concat!("_", $name, ":"),
            $($body,)*
            $($($operands)*)?
        );
        #[cfg(not(target_vendor = "apple"))]
        std::arch::global_asm!(
            ".text",
            ".p2align 4",
            concat!(".globl ", $name),
            concat!(".hidden ", $name),
            concat!(".type ", $name, ",%function"),
            concat!($name, ":"),
            $($body,)*
            concat!(".size ", $name, ", . - ", $name),
            $($($operands)*)?
        );
    };
}

// The executor: compiled only where it runs (this module is then `backend::native`).
#[cfg(gatun_backend = "aarch64")]
pub(crate) mod executor;
#[cfg(gatun_backend = "aarch64")]
mod frame;
#[cfg(gatun_backend = "aarch64")]
pub(crate) mod slots;
#[cfg(all(test, gatun_backend = "aarch64"))]
mod tests;
#[cfg(gatun_backend = "aarch64")]
pub(crate) mod trampoline;
#[cfg(gatun_backend = "aarch64")]
pub(crate) mod upcall_entry;

#[cfg(gatun_backend = "aarch64")]
pub(crate) use frame::CallFrame;

/// The AAPCS64 (Linux) or Apple arm64 backend (the flavour is the target's, [`FLAVOUR`]).
#[cfg(gatun_backend = "aarch64")]
pub(crate) struct Aapcs64;

/// The flavour of the executor's target: [`classify::Flavour::Apple`] on Apple arm64,
/// [`classify::Flavour::Linux`] (AAPCS64) elsewhere.
#[cfg(gatun_backend = "aarch64")]
pub(crate) const FLAVOUR: classify::Flavour = if cfg!(target_vendor = "apple") {
    classify::Flavour::Apple
} else {
    classify::Flavour::Linux
};

#[cfg(gatun_backend = "aarch64")]
impl crate::backend::Backend for Aapcs64 {
    type Executor = crate::backend::executor::StubExecutor<executor::Entries>;

    /// The plan of the target's flavour ([`classify::plan`] with [`FLAVOUR`], which checks
    /// every size and the stack limit), for downcalls and upcalls alike. The executor has no
    /// limits of its own beyond the plan's: by-reference arguments (B.3) and `x8` results
    /// (§6.9) are carried out.
    fn plan(
        descriptor: &crate::layout::FunctionDescriptor,
        first_variadic: Option<usize>,
        _direction: crate::backend::Direction,
    ) -> crate::Result<crate::abi::CallPlan> {
        classify::plan(descriptor, first_variadic, FLAVOUR)
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
