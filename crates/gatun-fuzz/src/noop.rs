//! A real function address to link downcalls to, without ever calling them.
//!
//! # Invariants
//! - [`noop_symbol`] is the address of [`noop`], a function in this crate's code that lives
//!   for the whole process (it is never unloaded).
//! - The fuzz checks only *link* handles to it (with arbitrary descriptors) and never invoke
//!   them: calling `noop` through a descriptor other than `void (void)` would be undefined
//!   behaviour, so no handle linked to it is ever called.

use std::ffi::c_void;

use gatun::Symbol;

/// `void noop(void)`: does nothing.
extern "C" fn noop() {}

/// A symbol for [`noop`], for linking (never calling) downcalls of any descriptor.
pub fn noop_symbol() -> Symbol {
    // SAFETY: `noop` is code of this crate, alive for the whole process; the handles linked
    // to this symbol are never called (see the module invariants), so the descriptor they are
    // linked with need not match `noop`'s type.
    unsafe { Symbol::from_address(noop as *const c_void) }
}
