//! [`Symbol`]: the address of a native function or variable, keeping its library loaded.
//!
//! Minimal version written for the linker; `SymbolLookup` (branch `lookup`) produces these.

use std::any::Any;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

/// A native address (Java: a zero-length `MemorySegment` from `SymbolLookup.find`) plus an
/// optional keep-alive handle (e.g. the loaded library) that lives as long as any clone of the
/// symbol, or of a [`crate::linker::DowncallHandle`] linked against it.
///
/// Cheap to clone (an address and an `Arc`); `Send + Sync`.
#[derive(Clone)]
pub struct Symbol {
    address: usize,
    _keep_alive: Option<Arc<dyn Any + Send + Sync>>,
}

impl Symbol {
    /// A symbol at `address` with nothing to keep alive (a function of the executable, libc,
    /// or one whose library the caller keeps loaded).
    ///
    /// # Safety
    /// `address` must stay valid (its code or data mapped) as long as the symbol or any handle
    /// linked against it is used.
    pub unsafe fn from_address(address: *const c_void) -> Symbol {
        Symbol {
            address: address as usize,
            _keep_alive: None,
        }
    }

    /// A symbol at `address` that keeps `owner` (e.g. an `Arc<libloading::Library>`) alive.
    ///
    /// # Safety
    /// `address` must stay valid as long as `owner` lives.
    pub unsafe fn with_owner(address: *const c_void, owner: Arc<dyn Any + Send + Sync>) -> Symbol {
        Symbol {
            address: address as usize,
            _keep_alive: Some(owner),
        }
    }

    /// The address.
    pub fn address(&self) -> *const c_void {
        self.address as *const c_void
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Symbol({:#x})", self.address)
    }
}
