//! The Windows loader behind [`SymbolLookup`](super::SymbolLookup): `LoadLibraryExW`,
//! `GetModuleHandleExW`, `GetProcAddress` and `FreeLibrary`, through libloading's
//! `os::windows`.
//!
//! # Unsafe invariants
//! - `Native::owner` holds one reference to its module (taken by `LoadLibraryExW` or
//!   `GetModuleHandleExW`) and gives it back (`FreeLibrary`) when it drops, so the module's code
//!   stays mapped while the `Native` lives.
//! - `GetProcAddress` only reads the module's export table under the loader lock; it is called
//!   with a NUL-terminated name that lives across the call.

use std::ffi::{c_void, CStr, OsStr};
use std::fmt;

use libloading::os::windows::Library as WinLibrary;

use super::LoadFlags;
use crate::error::{Error, Result};

/// One module reference.
pub(super) struct Native {
    /// Owns the reference; `FreeLibrary` on drop.
    owner: WinLibrary,
}

impl fmt::Debug for Native {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.owner, f)
    }
}

/// The loader's message for a libloading error: its own text and the system's (`GetLastError`
/// formatted by the OS, e.g. `The specified module could not be found. (os error 126)`).
fn reason(e: &libloading::Error) -> String {
    match std::error::Error::source(e) {
        Some(source) => format!("{e}: {source}"),
        None => e.to_string(),
    }
}

impl Native {
    /// Loads `name` (`LoadLibraryExW` without flags); `flags` mean nothing on Windows.
    ///
    /// # Safety
    /// As [`SymbolLookup::library`](super::SymbolLookup::library): `DllMain` and the TLS
    /// callbacks of the DLL and of the DLLs it imports run.
    pub(super) unsafe fn open(name: &OsStr, _flags: LoadFlags) -> Result<Native> {
        // SAFETY: forwarded to the caller.
        match unsafe { WinLibrary::new(name) } {
            Ok(owner) => Ok(Native { owner }),
            Err(e) => Err(Error::LibraryLoad {
                library: name.to_string_lossy().into_owned(),
                reason: reason(&e),
            }),
        }
    }

    /// A reference to a module the process has already loaded (`GetModuleHandleExW`, running
    /// no initialiser), or the error saying it is not loaded.
    fn already_loaded(name: &str) -> Result<Native> {
        WinLibrary::open_already_loaded(name)
            .map(|owner| Native { owner })
            .map_err(|e| Error::LibraryLoad {
                library: name.to_owned(),
                reason: reason(&e),
            })
    }

    /// `GetProcAddress` on this module; null when absent. `version` is never found (Windows has
    /// no symbol versions).
    pub(super) fn lookup(&self, name: &CStr, version: Option<&CStr>) -> *mut c_void {
        if version.is_some() {
            return std::ptr::null_mut();
        }
        // SAFETY: a module reference held by `owner` (module invariants) and a NUL-terminated
        // name; the pointer-sized symbol value is the address itself, copied out before the
        // borrow ends and never dereferenced here.
        match unsafe { self.owner.get::<*mut c_void>(name.to_bytes_with_nul()) } {
            Ok(symbol) => *symbol,
            Err(_) => std::ptr::null_mut(),
        }
    }
}

/// The C runtime DLL that code built for this target imports: mingw-w64 (`*-windows-gnu`)
/// links `msvcrt.dll` by default, `*-windows-msvc` and `*-windows-gnullvm` the Universal CRT
/// (`ucrtbase.dll`).
pub(super) const C_RUNTIME: &str = if cfg!(all(target_env = "gnu", not(target_abi = "llvm"))) {
    "msvcrt.dll"
} else {
    "ucrtbase.dll"
};

/// The libraries of [`SymbolLookup::default_lookup`](super::SymbolLookup::default_lookup),
/// each with the name it is shown by: the executable's module (`the process`), [`C_RUNTIME`],
/// then `kernel32.dll`. Each is taken with `GetModuleHandleExW` when loaded (the executable,
/// kernel32 and the C runtime of a Rust program always are), else loaded; one that can be
/// neither is left out.
pub(super) fn default_libraries() -> Vec<(String, Native)> {
    let mut libraries = Vec::new();
    if let Ok(owner) = WinLibrary::this() {
        libraries.push(("the process".to_string(), Native { owner }));
    }
    for name in [C_RUNTIME, "kernel32.dll"] {
        // SAFETY: a system DLL: its initialisers are the C runtime's and Windows' own, run by
        // every program that links it.
        let lib = Native::already_loaded(name)
            .or_else(|_| unsafe { Native::open(OsStr::new(name), LoadFlags::default()) });
        if let Ok(lib) = lib {
            libraries.push((name.to_string(), lib));
        }
    }
    libraries
}
