//! The backend of targets without an executor (and of every target under Miri): every plan and
//! link returns [`Error::Unsupported`]; its executor is [`Absent`] (no handle exists).

use std::ffi::c_void;

use crate::abi::CallPlan;
use crate::backend::upcall::{UpcallEntries, UpcallHeader};
use crate::backend::{Absent, ArgKind, Backend, Direction, RetKind};
use crate::code::ExecutableCode;
use crate::error::{Error, Result};
use crate::layout::FunctionDescriptor;

/// The backend without an executor.
pub(crate) struct Unsupported;

fn unsupported(direction: Direction) -> Error {
    Error::Unsupported {
        type_name: direction.name().into(),
        reason: format!(
            "gatun's {} executor supports x86-64 System V (Linux), AAPCS64 (Linux), Apple arm64 and x86-64 Windows only",
            direction.name()
        ),
    }
}

impl Backend for Unsupported {
    type Executor = Absent;

    /// Always [`Error::Unsupported`]: there is no executor for this target.
    fn plan(_: &FunctionDescriptor, _: Option<usize>, direction: Direction) -> Result<CallPlan> {
        Err(unsupported(direction))
    }

    /// Always [`Error::Unsupported`].
    fn link(_: &CallPlan, _: &[ArgKind], _: RetKind, _: bool, _: *const c_void) -> Result<Absent> {
        Err(unsupported(Direction::Downcall))
    }
}

impl UpcallEntries for Unsupported {
    /// Always [`Error::Unsupported`]: there is no upcall entry for this target.
    fn upcall_code(_header: *const UpcallHeader) -> Result<ExecutableCode> {
        Err(unsupported(Direction::Upcall))
    }
}
