//! The x86-64 System V backend: classification into a [`CallPlan`](crate::abi::CallPlan)
//! ([`classify`], compiled on every host; the rest only on x86-64 Linux, where this is
//! `backend::native`), the compiled-stub encoder ([`stub`]) and the calls
//! into its checked entries ([`entry`], [`image`]), the hand-written trampoline
//! ([`trampoline`]) with the Rust code that fills its call frame (here), and the upcall entry
//! (`upcall_entry`).

/// Items of the executor: compiled only where it runs (this module is then `backend::native`).
macro_rules! executor_items {
    ($($item:item)*) => {
        $(#[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))] $item)*
    };
}

#[cfg(any(test, gatun_backend = "x86_64_sysv"))]
pub(crate) use crate::abi::sysv as classify;

executor_items! {
    use crate::abi::CallPlan;
    use crate::backend::Direction;
    use crate::error::{Error, Result};
    use crate::linker::FunctionDescriptor;

    pub(crate) mod entry;
    pub(crate) mod executor;
    mod frame;
    pub(crate) mod image;
    pub(crate) mod slots;
    pub(crate) mod stub;
    pub(crate) mod trampoline;
    pub(crate) mod upcall_entry;

    pub(crate) use executor::{Executor, StructEntry};
    pub(crate) use crate::backend::StackArgs;
    pub(crate) use frame::CallFrame;
    pub(crate) use image::ImageEntry;
}
#[cfg(all(
    target_arch = "x86_64",
    target_os = "linux",
    not(miri),
    feature = "internals"
))]
pub(crate) use executor::{compile_uncached, stub_code};

executor_items! {
    /// This backend's one classification entry point for its executor: the SysV plan
    /// ([`classify::plan`], which checks every size and the stack limit) plus the executor's own
    /// limits, for downcalls and upcalls alike (the same descriptors are accepted both ways).
    ///
    /// # Errors
    /// As [`classify::plan`]; [`Error::Unsupported`] for a plan passing a struct by reference
    /// (SysV never does; kept as a check on the plan).
    pub(crate) fn plan(
        descriptor: &FunctionDescriptor,
        first_variadic: Option<usize>,
        direction: Direction,
    ) -> Result<CallPlan> {
        let plan = classify::plan(descriptor, first_variadic)?;
        if plan.args.iter().any(|a| a.by_reference.is_some()) {
            return Err(Error::Unsupported {
                type_name: "by-reference struct argument".into(),
                reason: format!(
                    "the SysV {} executor passes structs by value only",
                    direction.name()
                ),
            });
        }
        Ok(plan)
    }

    /// The code of an upcall stub whose context is at address `context` (see `upcall_entry`),
    /// placed in the code arena.
    ///
    /// # Errors
    /// [`Error::Unsupported`] if the OS refuses executable memory.
    pub(crate) fn upcall_code(context: usize) -> Result<crate::code::ExecutableCode> {
        // SAFETY: the upcall stub's code (`upcall_entry`): loads `context` into r10 and jumps to
        // the shared entry, called only as a function of the stub's descriptor type.
        unsafe { crate::code::ExecutableCode::new(&upcall_entry::stub_code(context)) }
    }

    /// The code of a register-shape upcall stub (`upcall_entry::shape_stub_code`) whose
    /// context is at address `context`, placed in the code arena.
    ///
    /// # Errors
    /// [`Error::Unsupported`] if the OS refuses executable memory.
    ///
    /// # Safety
    /// The context's first word is the address of an `extern "C" fn(context, frame)` shape
    /// dispatcher, and the stub is called only as a function of a type whose arguments are all
    /// in the first `gprs` integer and `vectors` vector argument registers and whose result is
    /// `void` or in rax, rdx, xmm0, xmm1.
    pub(crate) unsafe fn shape_upcall_code(
        gprs: usize,
        vectors: usize,
        context: usize,
    ) -> Result<crate::code::ExecutableCode> {
        // SAFETY: the caller's contract: the code loads `context` into r10 and jumps to the
        // shape entry storing those registers.
        unsafe {
            crate::code::ExecutableCode::new(&upcall_entry::shape_stub_code(
                gprs, vectors, context,
            ))
        }
    }

    /// The code of a typed upcall stub (`upcall_entry::typed_stub_code`): `context` into the
    /// integer argument register `n` (0..6), then a jump to the trampoline at `target`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] if the OS refuses executable memory.
    ///
    /// # Safety
    /// `target` is an `extern "C"` function whose parameters are those of the C type the stub
    /// is called as, followed by one pointer parameter that the SysV rules put in register
    /// `n`; it must accept `context` there.
    pub(crate) unsafe fn typed_upcall_code(
        n: usize,
        context: usize,
        target: usize,
    ) -> Result<crate::code::ExecutableCode> {
        // SAFETY: the caller's contract: the code only adds the trailing argument and jumps.
        unsafe {
            crate::code::ExecutableCode::new(&upcall_entry::typed_stub_code(n, context, target))
        }
    }
}
