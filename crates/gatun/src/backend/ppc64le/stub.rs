//! Compiled downcall stubs for PPC64LE Linux (ELFv2): not generated yet, so every handle
//! takes the trampoline ([`stub_for`] reports that no stub exists).

use std::ffi::c_void;
use std::sync::Arc;

use crate::abi::CallPlan;
pub(crate) use crate::backend::ArgCheck;
pub(crate) use crate::backend::RawFn;
use crate::error::Result;
use crate::value::Value;

/// A placed stub's entries.
pub(crate) struct Stub {
    /// The raw entry.
    pub(crate) raw: RawFn,
    /// The values entry.
    pub(crate) values: ValuesEntry,
}

/// The values entry of a stub (none exists yet).
#[derive(Clone, Copy, Debug)]
pub(crate) enum ValuesEntry {}

impl ValuesEntry {
    /// Calls the entry.
    ///
    /// # Safety
    /// No value of this type exists.
    pub(crate) unsafe fn call(
        self,
        _values: *const Value<'_>,
        _ret: *mut u8,
        _capture: *mut i32,
        _target: *const c_void,
        _errno_location: *mut i32,
    ) -> Option<u64> {
        match self {}
    }
}

/// The stub of a signature: none yet (the handle takes the trampoline).
///
/// # Errors
/// Always [`crate::Error::Unsupported`].
pub(crate) fn stub_for(
    _plan: &CallPlan,
    _checks: &[ArgCheck],
    _capture: bool,
) -> Result<Arc<Stub>> {
    Err(crate::Error::Unsupported {
        type_name: "downcall".into(),
        reason: "no PPC64LE stub compiler".into(),
    })
}
