//! The downcall linker: descriptors, symbol lookup, linking and invoking native functions.
//!
//! - [`FunctionDescriptor`]: a C signature.
//! - [`SymbolLookup`] / [`Symbol`]: native addresses that keep their library loaded.
//! - [`Linker::native`]`.`[`downcall`](Linker::downcall)`(symbol, descriptor, options)` →
//!   [`DowncallHandle`] (classified once into a [`crate::abi::CallPlan`], executed by the
//!   `call` layer's trampoline), with [`LinkerOption`]s (`FirstVariadicArg`,
//!   `CaptureCallState`, `Critical`) and [`capture_state_layout`].
//! - [`Arguments`]: a checked, dynamic argument list of untagged 8-byte slots for
//!   [`DowncallHandle::invoke_arguments`] (narrower than `&[Value]`).
//! - [`DowncallHandle::typed`] → [`TypedHandle`]: Rust argument/return types ([`CType`])
//!   checked against the descriptor once; calls at direct-call speed for scalar signatures.

mod arguments;
mod handle;
mod lookup;
pub(crate) mod option;
mod typed;

pub use crate::abi::MAX_STACK_BYTES;
pub use crate::layout::descriptor::{ArgumentLayouts, FunctionDescriptor, Layouts};
pub use arguments::Arguments;
pub use handle::{DowncallHandle, Linker};
pub use lookup::{LoadFlags, Symbol, SymbolLookup};
pub(crate) use option::check_capture_names;
pub use option::{capturable_states, capture_state_layout, LinkerOption};
pub use typed::{CArgs, CReturn, CType, TypedHandle, MAX_TYPED_ARGS};
