//! The AArch64 backend: AAPCS64 (Linux) and Apple arm64 classification into a
//! [`CallPlan`](crate::abi::CallPlan) ([`classify`], public as `gatun::abi::aarch64`; pure data,
//! compiled and tested on every host), and on AArch64 Linux — where this is `backend::native` —
//! the executor: the hand-written trampoline (`trampoline`) with the Rust code that fills
//! its call frame (`frame`), the by-reference copies of AAPCS64 §6.8.2 rule B.3 and the
//! indirect-result register `x8` of §6.9 (`executor`), and the upcall entry (`upcall_entry`).
//!
//! Calls run a compiled stub per signature ([`stub`], encoded by [`encode`]; the code is pure
//! data, generated and tested on every host) chosen by the `executor` at link time; the
//! trampoline runs them when the OS refuses executable memory.

/// Items of the executor: compiled only where it runs (this module is then `backend::native`).
macro_rules! executor_items {
    ($($item:item)*) => {
        $(#[cfg(all(target_arch = "aarch64", target_os = "linux", not(miri)))] $item)*
    };
}

pub mod classify;

// The AAPCS64 (Linux) compiled-stub compiler: run on AArch64 Linux; its code generation is
// pure data, compiled (and unit-tested) on every host for the tests.
#[cfg(any(test, all(target_arch = "aarch64", target_os = "linux", not(miri))))]
pub(crate) mod encode;
#[cfg(any(test, all(target_arch = "aarch64", target_os = "linux", not(miri))))]
pub(crate) mod stub;

executor_items! {
    use crate::abi::CallPlan;
    use crate::backend::Direction;
    use crate::error::Result;
    use crate::linker::FunctionDescriptor;

    pub(crate) mod executor;
    mod frame;
    pub(crate) mod trampoline;
    pub(crate) mod upcall_entry;
    #[cfg(test)]
    mod tests;

    pub(crate) use executor::Executor;
    pub(crate) use crate::backend::StackArgs;
    pub(crate) use frame::CallFrame;
    pub(crate) use super::absent::ImageEntry;
    pub(crate) use stub::{lock_cache_for_fork, CacheLock};

    /// This backend's one classification entry point for its executor: the AAPCS64 (Linux)
    /// plan ([`classify::plan`] with [`classify::Flavour::Linux`], which checks every size and
    /// the stack limit), for downcalls and upcalls alike. The executor has no limits of its own
    /// beyond the plan's: by-reference arguments (B.3) and `x8` results (§6.9) are carried out.
    ///
    /// # Errors
    /// As [`classify::plan`].
    pub(crate) fn plan(
        descriptor: &FunctionDescriptor,
        first_variadic: Option<usize>,
        _direction: Direction,
    ) -> Result<CallPlan> {
        classify::plan(descriptor, first_variadic, classify::Flavour::Linux)
    }

    /// The code of an upcall stub whose context is at address `context` (see `upcall_entry`),
    /// placed in the code arena.
    ///
    /// # Errors
    /// [`crate::Error::Unsupported`] if the OS refuses executable memory.
    pub(crate) fn upcall_code(context: usize) -> Result<crate::code::ExecutableCode> {
        // SAFETY: the upcall stub's code (`upcall_entry`): loads `context` into x17 and the
        // shared entry's address into x16 and branches to it, called only as a function of the
        // stub's descriptor type.
        unsafe { crate::code::ExecutableCode::new(&upcall_entry::stub_code(context)) }
    }
}

#[cfg(all(
    target_arch = "aarch64",
    target_os = "linux",
    not(miri),
    feature = "internals"
))]
pub(crate) use executor::{compile_uncached, stub_code};
