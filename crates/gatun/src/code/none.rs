//! Targets other than Unix and Windows: no executable memory.

use super::ExecutableCode;
use crate::error::{Error, Result};

/// No mapping of its own exists here (uninhabited).
#[derive(Debug)]
pub(super) enum Own {}

/// Always [`Error::Unsupported`].
///
/// # Errors
/// Always.
pub(super) fn map_own(_code: &[u8]) -> Result<ExecutableCode> {
    Err(Error::Unsupported {
        type_name: "executable memory".into(),
        reason: "generated code is only supported on Unix and Windows targets".into(),
    })
}

/// Never called: no [`Own`] exists.
///
/// # Safety
/// None (uninhabited).
pub(super) unsafe fn unmap(_ptr: *mut u8, own: &Own) {
    match *own {}
}
