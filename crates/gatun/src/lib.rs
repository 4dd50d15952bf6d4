//! # gatun — foreign function & memory for Rust
//!
//! Call C functions whose signatures are known only at run time, with memory safety modelled
//! on Java's Foreign Function & Memory API (JDK 25) and no allocation on the call path.
//!
//! - [`layout`]: [`layout::MemoryLayout`] / [`layout::ValueLayout`] — sizes, alignments and
//!   offsets of C data, checked against the C compiler.
//! - [`memory`]: [`memory::MemorySegment`] (bounds-checked, lifetime-checked views of native
//!   memory), [`memory::SegmentAllocator`], and heap [`memory::Arena`]s.
//! - [`linker`]: [`Linker`], [`DowncallHandle`], [`Symbol`] — downcalls; [`abi`]: the
//!   classification into a [`abi::CallPlan`] ([`abi::plan_for`] any [`abi::Abi`]); [`upcall`]: [`UpcallStub`] — Rust closures as C
//!   function pointers (`Linker::upcall_stub`).
//! - [`nonblocking`]: [`nonblocking::WorkerPool`] — downcalls on worker threads, as futures.
//! - [`capture`]: the system-call adapter ([`capture::adapt_system_call`]: `r` or `-errno`,
//!   no allocation) and [`capture::Errno`].
//! - [`cdecl`]: C declarations (`int open(const char *, int, ...);`, `struct`s, `typedef`s)
//!   parsed into [`FunctionDescriptor`]s and [`MemoryLayout`]s.
//! - [`value`]: [`Value`] (dynamic arguments and results) and the [`Scalar`] trait.
//!
//! See `ARCHITECTURE.md` for the layer map and the rules each layer keeps.

#![deny(missing_docs)]
#![warn(unsafe_op_in_unsafe_fn)]

pub mod abi;
pub(crate) mod backend;
pub mod capture;
pub mod cdecl;
/// The code arena (executable memory for stubs). Public only with the `internals` feature
/// (test and benchmark hooks).
#[cfg(feature = "internals")]
pub mod code;
#[cfg(not(feature = "internals"))]
#[allow(dead_code)]
pub(crate) mod code;
pub mod error;
pub mod layout;
pub mod linker;
pub mod memory;
pub mod nonblocking;
pub(crate) mod os;
pub mod upcall;
pub mod value;

pub use error::{Error, Result};
pub use layout::{MemoryLayout, ScalarKind, ValueLayout};
pub use linker::{Arguments, DowncallHandle, FunctionDescriptor, Linker, LinkerOption, Symbol};
pub use memory::{Arena, MemorySegment, SegmentAllocator};
pub use upcall::{
    ConfinedTypedUpcallStub, ConfinedUpcallStub, TypedUpcallStub, UpcallArgs, UpcallStub,
};
pub use value::{Scalar, Value};

/// The README's examples, compiled and run as doc tests so they stay true (where the
/// executor runs: they call C).
#[cfg(all(doctest, gatun_executes, target_os = "linux"))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
