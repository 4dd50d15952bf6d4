//! Symbol lookup: the addresses of native functions and variables in shared libraries
//! (JDK FFM `SymbolLookup`: `libraryLookup`, `Linker.defaultLookup`, `find`, `or`).
//!
//! A [`SymbolLookup`] is an ordered list of loaded libraries; [`SymbolLookup::find`] asks each in
//! turn and returns the first non-null address as a [`Symbol`]. Libraries are opened through
//! `libloading` and closed when the last `SymbolLookup` or [`Symbol`] that refers to them is
//! dropped, so a symbol, and any downcall handle linked from it, never outlives its code. (Closing
//! only drops a reference: whether the code is then unmapped is the loader's decision — other
//! handles, `RTLD_NODELETE` or dependants keep it mapped.)
//!
//! The loader is the operating system's, in the module named after it:
//! - Unix (`unix`): `dlopen(3)`, `dlsym` (`dlvsym` for [`SymbolLookup::find_versioned`]),
//!   `dlclose(3)`;
//! - Windows (`windows`): `LoadLibraryExW` (no flags: the `LoadLibraryW` search order),
//!   `GetProcAddress`, `FreeLibrary`.
//!
//! # Thread rules
//! [`SymbolLookup`] and [`Symbol`] are `Clone + Send + Sync`: lookups may run from any number of
//! threads at once (glibc, musl and Apple's dyld serialise `dlopen`/`dlsym`/`dlclose` with
//! the loader lock; Windows' `LoadLibrary`/`GetProcAddress`/`FreeLibrary` take the loader lock).
//!
//! # Unsafe invariants
//! A `Library` is only ever reached through an `Arc`, held by every `SymbolLookup` that lists it
//! and by every `Symbol` found in it; its `native` handle stays open until it drops (the OS
//! module's invariants). An address found in a library is therefore mapped for as long as a
//! `Symbol` carrying it exists.

use std::ffi::{c_void, CString, OsStr};
use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

/// How [`SymbolLookup::library_with`] asks the loader to load a library. The default
/// (`LoadFlags::default()`, both `false`) is `RTLD_NOW | RTLD_LOCAL`, what
/// [`SymbolLookup::library`] uses. On Windows both flags are ignored: `LoadLibraryExW` binds a
/// DLL's imports at load time and has no local or global scope (`GetProcAddress` searches the
/// one module it is given).
///
/// ```
/// use gatun::linker::{LoadFlags, SymbolLookup};
/// // dlopen("libm.so.6", RTLD_LAZY | RTLD_GLOBAL); on Apple targets libm is part of libSystem,
/// // on Windows the C runtime (msvcrt.dll for the GNU toolchain) holds the math functions
/// let name = if cfg!(target_vendor = "apple") {
///     "libm.dylib"
/// } else if cfg!(windows) {
///     "msvcrt.dll"
/// } else {
///     "libm.so.6"
/// };
/// let flags = LoadFlags { global: true, lazy: true };
/// // SAFETY: loading the C math library runs no initialisers with preconditions.
/// let libm = unsafe { SymbolLookup::library_with(name, flags) }.unwrap();
/// assert!(libm.find("cos").is_ok());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct LoadFlags {
    /// `RTLD_GLOBAL`: the library's symbols also resolve references of libraries loaded after it
    /// (and are seen by [`SymbolLookup::default_lookup`]). `false`: `RTLD_LOCAL`. Ignored on
    /// Windows.
    pub global: bool,
    /// `RTLD_LAZY`: function references are bound at their first call instead of at load time,
    /// so a missing dependency symbol aborts the process at that call rather than failing the
    /// load. `false`: `RTLD_NOW`, every reference is bound before `dlopen` returns. Ignored on
    /// Windows.
    pub lazy: bool,
}

/// One open library and the name it was opened by.
struct Library {
    /// The name or path given by the user (or a description such as `the process`).
    name: String,
    /// The loader's handle; closes it on drop.
    native: os::Native,
}

impl Library {
    fn new(name: String, native: os::Native) -> Arc<Self> {
        Arc::new(Library { name, native })
    }
}

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:?})", self.name, self.native)
    }
}

/// An ordered set of loaded libraries to find [`Symbol`]s in (JDK FFM `SymbolLookup`).
///
/// Cloning is cheap (reference counts). Every library in a lookup stays loaded while the lookup,
/// a clone of it, or any [`Symbol`] found through it lives; it is closed (`dlclose`,
/// `FreeLibrary` on Windows) when the last of them drops. `Send + Sync`: see the module's thread rules.
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use gatun::linker::SymbolLookup;
/// // The C math library's cos (glibc's libm); zlib's crc32 on Apple targets, kernel32's
/// // GetTickCount on Windows
/// let (name, own) = if cfg!(target_vendor = "apple") {
///     ("libz.1.dylib", "crc32")
/// } else if cfg!(windows) {
///     ("kernel32.dll", "GetTickCount")
/// } else {
///     ("libm.so.6", "cos")
/// };
/// // SAFETY: loading libm (zlib, kernel32) runs no initialisers with preconditions.
/// let lib = unsafe { SymbolLookup::library(name) }.unwrap();
/// let lookup = lib.or(SymbolLookup::default_lookup());
/// assert!(lookup.find(own).is_ok()); // from the library
/// assert!(lookup.find("strlen").is_ok()); // from libc (the default lookup), searched next
/// assert!(lookup.find("gatun_no_such_symbol").is_err());
/// # }
/// ```
#[derive(Clone)]
pub struct SymbolLookup {
    /// Searched in order; never empty.
    libraries: Vec<Arc<Library>>,
}

impl SymbolLookup {
    /// Loads a shared library by soname (`"libm.so.6"`, searched the `dlopen(3)` way:
    /// `LD_LIBRARY_PATH`, the `ld.so` cache, the default directories) or by path (any name with a
    /// `/`), with `RTLD_NOW | RTLD_LOCAL` (JDK `SymbolLookup.libraryLookup`). On Apple targets
    /// the library is a `.dylib` (`"libz.1.dylib"`, `"/usr/lib/libz.1.dylib"`), found by dyld:
    /// a name without `/` is searched in `DYLD_LIBRARY_PATH` and the fallback directories
    /// (`/usr/local/lib`, `/usr/lib`), and system libraries come from the dyld shared cache
    /// even though their files are absent from disk (macOS 11 and later). On Windows the library
    /// is a DLL (`"kernel32.dll"`, `"C:\\path\\x.dll"`), loaded with `LoadLibraryExW` without
    /// flags: a name without a path is searched the `LoadLibraryW` way (known DLLs, the
    /// executable's directory, the system directories, `PATH`).
    ///
    /// # Errors
    /// [`Error::LibraryLoad`] with the loader's message (on Windows, the system's text of
    /// `GetLastError`). When the file is a GNU ld script (as
    /// Debian's `/usr/lib/x86_64-linux-gnu/libm.so`), the reason names the real libraries it
    /// points to, e.g. `libm.so.6`.
    ///
    /// # Safety
    /// Loading runs the library's initialisers (ELF `.init_array`, C++ static constructors) and
    /// unloading runs its finalisers: as with calling any foreign function, the caller asserts
    /// that running them here is sound. System libraries such as libc, libm or libz are.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::linker::SymbolLookup;
    /// use gatun::Error;
    /// let name = if cfg!(target_vendor = "apple") {
    ///     "libm.dylib"
    /// } else if cfg!(windows) {
    ///     "msvcrt.dll"
    /// } else {
    ///     "libm.so.6"
    /// };
    /// // SAFETY: loading the C math library runs no initialisers with preconditions.
    /// let libm = unsafe { SymbolLookup::library(name) }.unwrap();
    /// assert_eq!(libm.find("floor").unwrap().library(), Some(name));
    /// // SAFETY: nothing is loaded: the file does not exist.
    /// let missing = unsafe { SymbolLookup::library("gatun-no-such-library") };
    /// assert!(matches!(missing, Err(Error::LibraryLoad { .. })));
    /// ```
    pub unsafe fn library(name_or_path: impl AsRef<OsStr>) -> Result<SymbolLookup> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::library_with(name_or_path, LoadFlags::default()) }
    }

    /// [`SymbolLookup::library`] with explicit `dlopen` flags (`RTLD_GLOBAL`, `RTLD_LAZY`;
    /// ignored on Windows, see [`LoadFlags`]).
    ///
    /// # Errors
    /// As [`SymbolLookup::library`].
    ///
    /// # Safety
    /// As [`SymbolLookup::library`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::linker::{LoadFlags, SymbolLookup};
    /// let name = if cfg!(target_vendor = "apple") {
    ///     "libm.dylib"
    /// } else if cfg!(windows) {
    ///     "msvcrt.dll"
    /// } else {
    ///     "libm.so.6"
    /// };
    /// let flags = LoadFlags { lazy: true, ..LoadFlags::default() }; // RTLD_LAZY | RTLD_LOCAL
    /// // SAFETY: loading the C math library runs no initialisers with preconditions.
    /// let libm = unsafe { SymbolLookup::library_with(name, flags) }.unwrap();
    /// assert!(libm.find("sqrt").is_ok());
    /// ```
    pub unsafe fn library_with(
        name_or_path: impl AsRef<OsStr>,
        flags: LoadFlags,
    ) -> Result<SymbolLookup> {
        let name = name_or_path.as_ref();
        // SAFETY: forwarded to the caller.
        let native = unsafe { os::Native::open(name, flags) }?;
        let library = Library::new(name.to_string_lossy().into_owned(), native);
        Ok(SymbolLookup {
            libraries: vec![library],
        })
    }

    /// The symbols of the running process and the C library (JDK `Linker.defaultLookup`).
    ///
    /// Searched in order: the process's global scope (`dlopen(NULL)`: the executable, the
    /// libraries it was linked against and those loaded `RTLD_GLOBAL`, as a C call would bind),
    /// then the C libraries, the ones JDK's `libsyslookup` links:
    /// - on Linux and other Unix targets, the libc this process runs on (found with `dladdr`
    ///   on a libc function) and, on glibc, `libm.so.6`;
    /// - on Apple targets, `/usr/lib/libSystem.B.dylib`, which re-exports the C library, libm,
    ///   libpthread and the other `/usr/lib/system` libraries (there `dladdr` on a libc
    ///   function names one of those parts, `libsystem_kernel.dylib` for `getpid`, which lacks
    ///   most of libc);
    /// - on Windows, where "the process" is the executable's own module (`GetProcAddress` finds
    ///   only what the executable exports, not what it imports), the C runtime the target links
    ///   — `msvcrt.dll` for `*-windows-gnu` (the mingw-w64 default), `ucrtbase.dll` for
    ///   `*-windows-msvc` and `*-windows-gnullvm` — then `kernel32.dll`.
    ///
    /// A C library the process has mapped (libc, libSystem, the Windows C runtime and kernel32
    /// always are) is taken with `RTLD_NOLOAD` (`GetModuleHandleExW` on Windows); one it has
    /// not (glibc's libm, when nothing linked it) is loaded (`dlopen`, running its
    /// initialisers). Created once per process and cloned after; never fails (a
    /// library that cannot be opened is left out).
    ///
    /// ```
    /// use gatun::linker::SymbolLookup;
    /// let libc = SymbolLookup::default_lookup();
    /// assert!(libc.find("strlen").is_ok() && libc.find("malloc").is_ok());
    /// ```
    pub fn default_lookup() -> SymbolLookup {
        static DEFAULT: OnceLock<SymbolLookup> = OnceLock::new();
        DEFAULT
            .get_or_init(|| {
                let libraries = os::default_libraries()
                    .into_iter()
                    .map(|(name, native)| Library::new(name, native))
                    .collect();
                SymbolLookup { libraries }
            })
            .clone()
    }

    /// A lookup that searches `self` first, then `other` (JDK `SymbolLookup.or`).
    ///
    /// ```
    /// use gatun::linker::SymbolLookup;
    /// let name = if cfg!(target_vendor = "apple") {
    ///     "libm.dylib"
    /// } else if cfg!(windows) {
    ///     "msvcrt.dll"
    /// } else {
    ///     "libm.so.6"
    /// };
    /// // SAFETY: loading the C math library runs no initialisers with preconditions.
    /// let libm = unsafe { SymbolLookup::library(name) }.unwrap();
    /// let both = libm.or(SymbolLookup::default_lookup());
    /// let cos = both.find("cos").unwrap();
    /// assert_eq!(cos.library(), Some(name)); // searched first
    /// assert!(both.find("getenv").is_ok());
    /// ```
    pub fn or(mut self, other: SymbolLookup) -> SymbolLookup {
        self.libraries.extend(other.libraries);
        self
    }

    /// The address of `name` (`dlsym`; `GetProcAddress` on Windows) in the first library that defines it, as a [`Symbol`] that
    /// keeps that library loaded. A null address counts as absent, as in the JDK.
    ///
    /// # Errors
    /// [`Error::SymbolNotFound`] naming the symbol and the libraries searched;
    /// [`Error::InteriorNul`] if `name` contains a NUL byte.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::linker::SymbolLookup;
    /// use gatun::Error;
    /// let libc = SymbolLookup::default_lookup();
    /// let strlen = libc.find("strlen").unwrap();
    /// assert_eq!(strlen.name(), Some("strlen"));
    /// assert!(matches!(libc.find("gatun_no_such_symbol"), Err(Error::SymbolNotFound { .. })));
    /// assert_eq!(libc.find("str\0len").unwrap_err(), Error::InteriorNul { index: 3 });
    /// ```
    pub fn find(&self, name: &str) -> Result<Symbol> {
        self.find_impl(name, None)
    }

    /// The address of `name` at symbol version `version` (glibc `dlvsym`): on glibc x86-64,
    /// `find_versioned("realpath", "GLIBC_2.3")` and `("realpath", "GLIBC_2.2.5")` are two
    /// different functions, while [`SymbolLookup::find`] gives the default version. The
    /// returned symbol's name is `name@version`.
    ///
    /// # Errors
    /// [`Error::SymbolNotFound`] (symbol `name@version`) when absent, and always off glibc,
    /// which has no symbol versions (Windows included); [`Error::InteriorNul`] as [`SymbolLookup::find`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::linker::SymbolLookup;
    /// let libc = SymbolLookup::default_lookup();
    /// if cfg!(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64")) {
    ///     let new = libc.find_versioned("realpath", "GLIBC_2.3").unwrap();
    ///     let old = libc.find_versioned("realpath", "GLIBC_2.2.5").unwrap();
    ///     assert_eq!(new.name(), Some("realpath@GLIBC_2.3"));
    ///     assert_ne!(new.address(), old.address());
    /// }
    /// assert!(libc.find_versioned("strlen", "GATUN_NO_SUCH_VERSION").is_err());
    /// ```
    pub fn find_versioned(&self, name: &str, version: &str) -> Result<Symbol> {
        self.find_impl(name, Some(version))
    }

    fn find_impl(&self, name: &str, version: Option<&str>) -> Result<Symbol> {
        let c_name = c_string(name)?;
        let c_version = version.map(c_string).transpose()?;
        let full_name = match version {
            Some(v) => format!("{name}@{v}"),
            None => name.to_owned(),
        };
        for library in &self.libraries {
            let address = library.native.lookup(&c_name, c_version.as_deref());
            if !address.is_null() {
                return Ok(Symbol {
                    address: address.cast_const(),
                    name: Some(full_name.into()),
                    library: Some(Arc::clone(library)),
                });
            }
        }
        Err(Error::SymbolNotFound {
            symbol: full_name,
            library: Some(self.describe()),
        })
    }

    /// The libraries' names, `a or b or c`.
    fn describe(&self) -> String {
        let names: Vec<&str> = self.libraries.iter().map(|l| l.name.as_str()).collect();
        names.join(" or ")
    }
}

impl fmt::Debug for SymbolLookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.libraries.iter().map(|l| &l.name))
            .finish()
    }
}

/// The address of a native function or variable, and the library it lives in (JDK: the
/// zero-length `MemorySegment` that `SymbolLookup.find` returns).
///
/// A `Symbol` found through a [`SymbolLookup`] holds a reference to its library: the library is
/// never unloaded while the `Symbol`, a clone, or anything holding one (such as a downcall
/// handle) lives. `Clone + Send + Sync`; the address is plain data and may be used from any
/// thread.
///
/// ```
/// use gatun::linker::SymbolLookup;
/// let strlen = SymbolLookup::default_lookup().find("strlen").unwrap();
/// assert_eq!(strlen.name(), Some("strlen"));
/// assert!(!strlen.address().is_null());
/// ```
#[derive(Clone)]
pub struct Symbol {
    /// The address (never dereferenced here).
    address: *const c_void,
    /// `name` or `name@version`; `None` for [`Symbol::from_address`].
    name: Option<Arc<str>>,
    /// Keeps the code mapped; `None` for [`Symbol::from_address`].
    library: Option<Arc<Library>>,
}

// SAFETY: `address` is plain data that `Symbol` never dereferences; it names process-global
// code or data, kept mapped by `library` (Send + Sync) when found by a lookup, or by the caller
// of `from_address`, whose contract covers every thread the symbol reaches.
unsafe impl Send for Symbol {}
// SAFETY: as above; `Symbol` is immutable.
unsafe impl Sync for Symbol {}

impl Symbol {
    /// A symbol for an address obtained elsewhere (a C callback table, `dlsym` done by hand, a
    /// function pointer from Rust). It has no name and keeps no library loaded.
    ///
    /// # Safety
    /// `address` must stay the address of code (or data) of the kind the symbol is used for —
    /// e.g. a function matching the descriptor it is linked with — for as long as this symbol and
    /// anything linked from it are used; in particular its library must not be unloaded
    /// meanwhile. A null address is allowed here but must never be called.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::ffi::c_void;
    /// use gatun::linker::Symbol;
    /// extern "C" fn seven() -> i32 {
    ///     7
    /// }
    /// // SAFETY: `seven` is part of this program, so its code is never unloaded.
    /// let s = unsafe { Symbol::from_address(seven as *const c_void) };
    /// assert_eq!(s.address(), seven as *const c_void);
    /// assert_eq!((s.name(), s.library()), (None, None));
    /// ```
    pub unsafe fn from_address(address: *const c_void) -> Symbol {
        Symbol {
            address,
            name: None,
            library: None,
        }
    }

    /// The symbol's address (never null for a symbol found by a [`SymbolLookup`]).
    ///
    /// ```
    /// use gatun::linker::SymbolLookup;
    /// let libc = SymbolLookup::default_lookup();
    /// let a = libc.find("strlen").unwrap();
    /// assert!(!a.address().is_null());
    /// assert_eq!(a.address(), libc.find("strlen").unwrap().address());
    /// ```
    pub fn address(&self) -> *const c_void {
        self.address
    }

    /// The name it was found by (`name@version` for a versioned symbol); `None` for
    /// [`Symbol::from_address`].
    ///
    /// ```
    /// use gatun::linker::SymbolLookup;
    /// let getenv = SymbolLookup::default_lookup().find("getenv").unwrap();
    /// assert_eq!(getenv.name(), Some("getenv"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The name or path of the library it was found in, as given to [`SymbolLookup::library`]
    /// (`the process` for the process's global scope); `None` for [`Symbol::from_address`].
    ///
    /// ```
    /// use gatun::linker::SymbolLookup;
    /// let strlen = SymbolLookup::default_lookup().find("strlen").unwrap();
    /// assert!(strlen.library().is_some()); // the process, or the C library that defines it
    /// ```
    pub fn library(&self) -> Option<&str> {
        self.library.as_deref().map(|l| l.name.as_str())
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Symbol {
    /// `strlen at 0x7f3a1c2b4560 in libc.so.6`, or `0x1234` for a bare address.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = self.name() {
            write!(f, "{name} at ")?;
        }
        write!(f, "{:p}", self.address)?;
        if let Some(library) = self.library() {
            write!(f, " in {library}")?;
        }
        Ok(())
    }
}

/// A C string for the loader, or [`Error::InteriorNul`].
fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|e| Error::InteriorNul {
        index: e.nul_position(),
    })
}

#[cfg(test)]
mod tests;
