//! The backend of targets without an executor: every link returns [`Error::Unsupported`].
//! (An AArch64 host uses this backend too: `backend::aarch64` classifies, but has no executor.)

use crate::abi::CallPlan;
use crate::backend::Direction;
use crate::code::ExecutableCode;
use crate::error::{Error, Result};
use crate::linker::FunctionDescriptor;

fn unsupported(direction: Direction) -> Error {
    Error::Unsupported {
        type_name: direction.name().into(),
        reason: format!(
            "gatun's {} executor supports x86-64 System V (Linux) only",
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

/// Always [`Error::Unsupported`]: there is no upcall entry for this target.
pub(crate) fn upcall_code(_context: usize) -> Result<ExecutableCode> {
    Err(unsupported(Direction::Upcall))
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

/// No image entries exist here (uninhabited).
#[derive(Debug, Clone, Copy)]
pub(crate) enum ImageEntry {}

impl ImageEntry {
    pub(crate) fn size_align(&self) -> (usize, usize) {
        match *self {}
    }

    pub(crate) unsafe fn call(
        &self,
        _args: *const u8,
        _target: *const std::ffi::c_void,
    ) -> Option<[u64; 2]> {
        match *self {}
    }

    pub(crate) unsafe fn store(&self, _ret: *mut u8, _image: [u64; 2]) {
        match *self {}
    }
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
    #[cfg(feature = "internals")]
    pub(crate) fn interpreted(&self) -> Executor {
        self.clone()
    }
    pub(crate) fn is_compiled(&self) -> bool {
        false
    }
    pub(crate) fn int_arity(&self, _nargs: usize) -> usize {
        usize::MAX
    }
    pub(crate) fn float_arity(&self, _nargs: usize) -> usize {
        usize::MAX
    }
    pub(crate) unsafe fn call_int(&self, _: *const u8, _: *const std::ffi::c_void) -> Option<u64> {
        None
    }
    pub(crate) unsafe fn call_float(
        &self,
        _: *const u8,
        _: *const std::ffi::c_void,
    ) -> Option<u64> {
        None
    }
    pub(crate) fn image(&self) -> Option<ImageEntry> {
        None
    }
    pub(crate) unsafe fn call_struct(
        &self,
        _: *const u8,
        _: *mut u8,
        _: *const std::ffi::c_void,
    ) -> bool {
        false
    }
    pub(crate) unsafe fn call_values(
        &self,
        _: *const u8,
        _: *mut u8,
        _: *mut i32,
        _: *const std::ffi::c_void,
    ) -> Option<u64> {
        None
    }
    pub(crate) unsafe fn call_capture(
        &self,
        _: *const u8,
        _: *mut i32,
        _: *const std::ffi::c_void,
    ) -> Option<u64> {
        None
    }
    pub(crate) fn uncaptured(&self) -> Option<Uncaptured<'_>> {
        None
    }
    pub(crate) unsafe fn call_raw(
        &self,
        _: *const *const u8,
        _: *mut u8,
        _: *mut i32,
        _: *const std::ffi::c_void,
    ) -> Option<u64> {
        None
    }
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

/// No uncaptured entries exist here (uninhabited).
#[derive(Clone, Copy)]
pub(crate) enum Uncaptured<'a> {
    #[allow(dead_code)]
    Never(std::convert::Infallible, std::marker::PhantomData<&'a ()>),
}

#[allow(clippy::missing_safety_doc)]
impl Uncaptured<'_> {
    pub(crate) unsafe fn call(self, _: *const u8, _: *const std::ffi::c_void) -> Option<u64> {
        match self {
            Uncaptured::Never(never, _) => match never {},
        }
    }
}

/// The stub cache's fork lock: nothing to lock without a stub compiler (taken by the Linux
/// code arena only).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) struct CacheLock;

impl Drop for CacheLock {
    /// Releases nothing (the native backend's lock releases the stub cache here).
    fn drop(&mut self) {}
}

/// As `x86_64_sysv::stub::lock_cache_for_fork`: no cache here.
#[cfg(target_os = "linux")]
pub(crate) fn lock_cache_for_fork() -> CacheLock {
    CacheLock
}
