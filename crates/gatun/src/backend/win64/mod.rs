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

#[cfg(any(test, gatun_backend = "win64"))]
pub(crate) use crate::abi::win64 as classify;

// The thread's Windows error states (declared once: the trampoline, the stubs and the
// system-call adapter's typed path use them).
#[cfg(windows)]
pub(crate) use crate::os::last_error;

// The compiled-stub compiler: run by the executor; its code generation is pure data, compiled
// (and unit-tested) on every host for the tests.
#[cfg(any(test, gatun_backend = "win64"))]
pub(crate) mod stub;

// The executor: compiled only where it runs (this module is then `backend::native`).
#[cfg(gatun_backend = "win64")]
pub(crate) mod executor;
#[cfg(gatun_backend = "win64")]
mod frame;
#[cfg(gatun_backend = "win64")]
pub(crate) mod slots;
#[cfg(all(test, gatun_backend = "win64"))]
mod tests;
#[cfg(gatun_backend = "win64")]
pub(crate) mod trampoline;
#[cfg(gatun_backend = "win64")]
pub(crate) mod upcall_entry;

#[cfg(gatun_backend = "win64")]
pub(crate) use frame::CallFrame;

/// The Microsoft x64 backend.
#[cfg(gatun_backend = "win64")]
pub(crate) struct Win64;

#[cfg(gatun_backend = "win64")]
impl crate::backend::Backend for Win64 {
    type Executor = crate::backend::executor::StubExecutor<executor::Entries>;

    /// The Win64 plan ([`classify::plan`], which checks every size and the stack limit), for
    /// downcalls and upcalls alike. The executor has no limits of its own beyond the plan's:
    /// by-reference arguments and the hidden return pointer are carried out.
    fn plan(
        descriptor: &crate::layout::FunctionDescriptor,
        first_variadic: Option<usize>,
        _direction: crate::backend::Direction,
    ) -> crate::Result<crate::abi::CallPlan> {
        classify::plan(descriptor, first_variadic)
    }

    /// A compiled stub with its fast path, or the trampoline when the OS gives no executable
    /// memory or refuses the stub's function table (`StubExecutor::link`).
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
        let checks = crate::backend::ArgCheck::all(args);
        let fns = stub::CaptureFns::native();
        Ok(stub::compile(plan, &checks, capture, &fns).bytes)
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
