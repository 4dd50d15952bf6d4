//! The downcall linker: descriptors, symbols, linking and invoking native functions.
//!
//! - [`FunctionDescriptor`]: a C signature.
//! - [`Symbol`]: a native address that keeps its library loaded.
//! - [`Linker::native`]`.`[`downcall`](Linker::downcall)`(symbol, descriptor, options)` →
//!   [`DowncallHandle`] (classified once into a [`crate::abi::CallPlan`], executed by
//!   [`crate::call`]'s trampoline), with [`LinkerOption`]s (`FirstVariadicArg`,
//!   `CaptureCallState`, `Critical`) and [`capture_state_layout`].

mod descriptor;
mod handle;
mod option;
mod symbol;

pub use descriptor::FunctionDescriptor;
pub use handle::{DowncallHandle, Linker};
pub use option::{capturable_states, capture_state_layout, LinkerOption};
pub use symbol::Symbol;
