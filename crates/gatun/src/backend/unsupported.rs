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
