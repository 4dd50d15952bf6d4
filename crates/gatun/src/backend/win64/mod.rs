//! The Win64 backend: Microsoft x64 calling convention classification into a
//! [`CallPlan`](crate::abi::CallPlan) ([`classify`], public as `gatun::abi::win64`; pure data,
//! compiled and tested on every host), and on x86-64 Windows — where this is
//! `backend::native` — the executor: the hand-written trampoline (`trampoline`) with the Rust
//! code that fills its call frame (`frame`), the by-reference copies and the hidden return
//! pointer (`executor`), the upcall entry (`upcall_entry`) and the `linker::Arguments` direct
//! call (`slots`).
//!
//! The three `global_asm!` functions (the trampoline, the upcall entry, the slots helper) carry SEH unwind directives (`.seh_proc` ... `.seh_endproc`),
//! from which the assembler emits their `.pdata`/`.xdata` entries, so Windows stack walks
//! (exceptions, debuggers, `RtlVirtualUnwind`) pass through them.
//!
//! Calls run a compiled stub per signature ([`stub`], encoded by the shared x86-64 encoder;
//! the code is pure data, generated and tested on every host) chosen by the `executor` at link
//! time; each framed stub carries its own `UNWIND_INFO` and `RUNTIME_FUNCTION`s, registered with
//! `RtlAddFunctionTable` while the stub lives. The trampoline runs the calls when the OS refuses
//! executable memory.

/// Items of the executor: compiled only where it runs (this module is then `backend::native`).
macro_rules! executor_items {
    ($($item:item)*) => {
        $(#[cfg(all(target_arch = "x86_64", target_os = "windows", not(miri)))] $item)*
    };
}

#[cfg(any(test, gatun_backend = "win64"))]
pub(crate) use crate::abi::win64 as classify;

// The thread's Windows error states (declared once: the trampoline, the stubs and the
// system-call adapter's typed path use them).
#[cfg(windows)]
pub(crate) use crate::os::last_error;

// The compiled-stub compiler: run by the executor; its code generation is pure data, compiled
// (and unit-tested) on every host for the tests.
#[cfg(any(test, all(target_arch = "x86_64", target_os = "windows", not(miri))))]
pub(crate) mod stub;

executor_items! {
    use crate::abi::CallPlan;
    use crate::backend::Direction;
    use crate::error::Result;
    use crate::linker::FunctionDescriptor;

    pub(crate) mod executor;
    mod frame;
    pub(crate) mod slots;
    pub(crate) mod trampoline;
    pub(crate) mod upcall_entry;

    /// The Win64 backend (its upcall entry: `upcall_entry`).
    pub(crate) struct Win64;

    #[cfg(test)]
    mod tests;

    pub(crate) use executor::{Executor, StructEntry};
    pub(crate) use frame::CallFrame;
    pub(crate) use super::absent::ImageEntry;

    /// This backend's one classification entry point for its executor: the Win64 plan
    /// ([`classify::plan`], which checks every size and the stack limit), for downcalls and
    /// upcalls alike. The executor has no limits of its own beyond the plan's: by-reference
    /// arguments and the hidden return pointer are carried out.
    ///
    /// # Errors
    /// As [`classify::plan`].
    pub(crate) fn plan(
        descriptor: &FunctionDescriptor,
        first_variadic: Option<usize>,
        _direction: Direction,
    ) -> Result<CallPlan> {
        classify::plan(descriptor, first_variadic)
    }
}

#[cfg(all(
    target_arch = "x86_64",
    target_os = "windows",
    not(miri),
    feature = "internals"
))]
pub(crate) use executor::{compile_uncached, stub_code};
