//! The x86-64 System V backend ([`SysV`]): classification into a
//! [`CallPlan`](crate::abi::CallPlan) ([`classify`], compiled on every host; the rest only on
//! x86-64 Linux, where this is `backend::native`), the compiled-stub encoder ([`stub`]) and
//! the calls into its checked entries ([`entry`], [`image`]), the executor ([`executor`]), the
//! hand-written trampoline ([`trampoline`]) with the Rust code that fills its call frame
//! (`frame`), and the upcall entry (`upcall_entry`).

pub mod classify;

// The executor: compiled only where it runs (this module is then `backend::native`).
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) mod entry;
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) mod executor;
#[cfg(gatun_backend = "x86_64_sysv")]
mod frame;
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) mod image;
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) mod slots;
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) mod stub;
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) mod trampoline;
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) mod upcall_entry;

#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) use frame::CallFrame;
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) use stub::{lock_cache_for_fork, CacheLock};

/// The System V AMD64 backend.
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) struct SysV;

#[cfg(gatun_backend = "x86_64_sysv")]
impl crate::backend::Backend for SysV {
    type Executor = executor::Executor;

    /// The SysV plan ([`classify::plan`], which checks every size and the stack limit) plus the
    /// executor's own limits, for downcalls and upcalls alike (the same descriptors are
    /// accepted both ways).
    ///
    /// # Errors
    /// As [`classify::plan`]; [`crate::Error::Unsupported`] for a plan passing a struct by
    /// reference (SysV never does; kept as a check on the plan).
    fn plan(
        descriptor: &crate::linker::FunctionDescriptor,
        first_variadic: Option<usize>,
        direction: crate::backend::Direction,
    ) -> crate::Result<crate::abi::CallPlan> {
        let plan = classify::plan(descriptor, first_variadic)?;
        if plan.args.iter().any(|a| a.by_reference.is_some()) {
            return Err(crate::Error::Unsupported {
                type_name: "by-reference struct argument".into(),
                reason: format!(
                    "the SysV {} executor passes structs by value only",
                    direction.name()
                ),
            });
        }
        Ok(plan)
    }

    /// A compiled stub with the one fast path its signature allows, or the trampoline when
    /// the OS gives no executable memory ([`executor::Executor::link`]).
    fn link(
        plan: &crate::abi::CallPlan,
        args: &[crate::backend::ArgKind],
        ret: crate::backend::RetKind,
        capture: bool,
        target: *const std::ffi::c_void,
    ) -> crate::Result<executor::Executor> {
        Ok(executor::Executor::link(plan, args, ret, capture, target))
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

/// The code of an upcall stub whose context is at address `context` (see `upcall_entry`),
/// placed in the code arena.
///
/// # Errors
/// [`crate::Error::Unsupported`] if the OS refuses executable memory.
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) fn upcall_code(context: usize) -> crate::Result<crate::code::ExecutableCode> {
    // SAFETY: the upcall stub's code (`upcall_entry`): loads `context` into r10 and jumps to
    // the shared entry, called only as a function of the stub's descriptor type.
    unsafe { crate::code::ExecutableCode::new(&upcall_entry::stub_code(context)) }
}

/// The code of a register-shape upcall stub (`upcall_entry::shape_stub_code`) whose
/// context is at address `context`, placed in the code arena.
///
/// # Errors
/// [`crate::Error::Unsupported`] if the OS refuses executable memory.
///
/// # Safety
/// The context's first word is the address of an `extern "C" fn(context, frame)` shape
/// dispatcher, and the stub is called only as a function of a type whose arguments are all
/// in the first `gprs` integer and `vectors` vector argument registers and whose result is
/// `void` or in rax, rdx, xmm0, xmm1.
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) unsafe fn shape_upcall_code(
    gprs: usize,
    vectors: usize,
    context: usize,
) -> crate::Result<crate::code::ExecutableCode> {
    // SAFETY: the caller's contract: the code loads `context` into r10 and jumps to the
    // shape entry storing those registers.
    unsafe {
        crate::code::ExecutableCode::new(&upcall_entry::shape_stub_code(gprs, vectors, context))
    }
}

/// The code of a typed upcall stub (`upcall_entry::typed_stub_code`): `context` into the
/// integer argument register `n` (0..6), then a jump to the trampoline at `target`.
///
/// # Errors
/// [`crate::Error::Unsupported`] if the OS refuses executable memory.
///
/// # Safety
/// `target` is an `extern "C"` function whose parameters are those of the C type the stub
/// is called as, followed by one pointer parameter that the SysV rules put in register
/// `n`; it must accept `context` there.
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) unsafe fn typed_upcall_code(
    n: usize,
    context: usize,
    target: usize,
) -> crate::Result<crate::code::ExecutableCode> {
    // SAFETY: the caller's contract: the code only adds the trailing argument and jumps.
    unsafe { crate::code::ExecutableCode::new(&upcall_entry::typed_stub_code(n, context, target)) }
}
