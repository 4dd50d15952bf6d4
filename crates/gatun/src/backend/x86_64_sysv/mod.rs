//! The x86-64 System V backend ([`SysV`]): classification into a
//! [`CallPlan`](crate::abi::CallPlan) ([`classify`], compiled on every host; the rest only on
//! x86-64 Linux, where this is `backend::native`), the compiled-stub encoder ([`stub`]) and
//! the calls into its checked entries ([`entry`], [`image`]), the executor ([`executor`]), the
//! hand-written trampoline ([`trampoline`]) with the Rust code that fills its call frame
//! (`frame`), and the upcall entries (`upcall_entry`) with the register rules of the upcall
//! fast paths (`shape`).

#[cfg(any(test, gatun_backend = "x86_64_sysv"))]
pub(crate) use crate::abi::sysv as classify;
// The upcall paths' register rules: used where this backend runs, and by the upcall
// dispatchers' unit tests on every host.
#[cfg(any(test, gatun_backend = "x86_64_sysv"))]
pub(crate) mod shape;

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
        descriptor: &crate::layout::FunctionDescriptor,
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
