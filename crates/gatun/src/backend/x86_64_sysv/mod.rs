//! The x86-64 System V backend: classification into a [`CallPlan`](crate::abi::CallPlan)
//! ([`classify`], compiled on every host; the rest only on x86-64 Linux, where this is
//! `backend::native`), the compiled-stub encoder ([`stub`]) and the calls
//! into its checked entries ([`entry`], [`image`]), the hand-written trampoline
//! ([`trampoline`]) with the Rust code that fills its call frame (here), and the upcall entries
//! (`upcall_entry`) with the register rules of the upcall fast paths (`shape`).

/// Items of the executor: compiled only where it runs (this module is then `backend::native`).
macro_rules! executor_items {
    ($($item:item)*) => {
        $(#[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))] $item)*
    };
}

#[cfg(any(test, gatun_backend = "x86_64_sysv"))]
pub(crate) use crate::abi::sysv as classify;
// The upcall paths' register rules: used where this backend runs, and by the upcall
// dispatchers' unit tests on every host.
#[cfg(any(test, gatun_backend = "x86_64_sysv"))]
pub(crate) mod shape;

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

    /// The x86-64 System V backend (its upcall entries: `upcall_entry`).
    pub(crate) struct SysV;

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
}
