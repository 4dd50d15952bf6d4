//! The backend of targets without an executor: every link returns [`Error::Unsupported`].

use crate::abi::CallPlan;
use crate::backend::upcall::{UpcallEntries, UpcallHeader};
use crate::backend::Direction;
use crate::code::ExecutableCode;
use crate::error::{Error, Result};
use crate::linker::FunctionDescriptor;

pub(crate) use super::absent::{ImageEntry, StructEntry};
// The fork lock exists for Linux's code-arena fork handler only.
#[cfg(target_os = "linux")]
pub(crate) use super::absent::{lock_cache_for_fork, CacheLock};

fn unsupported(direction: Direction) -> Error {
    Error::Unsupported {
        type_name: direction.name().into(),
        reason: format!(
            "gatun's {} executor supports x86-64 System V (Linux), AAPCS64 (Linux), Apple arm64 and x86-64 Windows only",
            direction.name()
        ),
    }
}

/// Always [`Error::Unsupported`]: there is no executor for this target.
pub(crate) fn plan(
    _descriptor: &FunctionDescriptor,
    _first_variadic: Option<usize>,
    direction: Direction,
) -> Result<CallPlan> {
    Err(unsupported(direction))
}

/// The backend of targets without an executor.
pub(crate) struct Unsupported;

impl UpcallEntries for Unsupported {
    /// Always [`Error::Unsupported`]: there is no upcall entry for this target.
    fn upcall_code(_header: *const UpcallHeader) -> Result<ExecutableCode> {
        Err(unsupported(Direction::Upcall))
    }
}

/// The stub tools' code: [`Error::Unsupported`] (no stub compiler for this target).
#[cfg(feature = "internals")]
pub(crate) fn stub_code(
    _plan: &CallPlan,
    _args: &[crate::backend::ArgKind],
    _capture: bool,
) -> Result<Vec<u8>> {
    Err(unsupported(Direction::Downcall))
}

/// As [`stub_code`].
#[cfg(feature = "internals")]
pub(crate) fn compile_uncached(
    _plan: &CallPlan,
    _args: &[crate::backend::ArgKind],
    _capture: bool,
) -> Result<usize> {
    Err(unsupported(Direction::Downcall))
}

/// No executor exists here: [`Executor::link`] fails, so no value of this type is ever made
/// and no handle exists. The methods mirror `x86_64_sysv::executor::Executor` (every fast path
/// absent; the interpreted path fails with [`Error::Unsupported`]).
#[derive(Clone)]
pub(crate) struct Executor {
    _private: (),
}

#[allow(clippy::missing_safety_doc)]
impl Executor {
    pub(crate) fn link(
        _plan: &CallPlan,
        _args: &[crate::backend::ArgKind],
        _ret: crate::backend::RetKind,
        _capture: bool,
        _target: *const std::ffi::c_void,
    ) -> Result<Executor> {
        Err(unsupported(Direction::Downcall))
    }
    super::absent::no_fast_paths!();
    super::absent::no_slots_path!();

    pub(crate) unsafe fn interpret(
        &self,
        _plan: &CallPlan,
        _target: *const std::ffi::c_void,
        _capture: *mut i32,
        _ret: *mut u8,
        _arg: impl FnMut(usize) -> Result<crate::backend::ArgSource>,
    ) -> Result<u64> {
        Err(unsupported(Direction::Downcall))
    }
}
