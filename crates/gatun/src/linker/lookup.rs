//! Symbol lookup: the addresses of native functions and variables in shared libraries
//! (JDK FFM `SymbolLookup`: `libraryLookup`, `Linker.defaultLookup`, `find`, `or`).
//!
//! A [`SymbolLookup`] is an ordered list of loaded libraries; [`SymbolLookup::find`] asks each in
//! turn (`dlsym`, or `dlvsym` for [`SymbolLookup::find_versioned`]) and returns the first
//! non-null address as a [`Symbol`]. Libraries are opened through `libloading`
//! (`dlopen(3)`) and closed (`dlclose(3)`) when the last `SymbolLookup` or [`Symbol`] that
//! refers to them is dropped, so a symbol, and any downcall handle linked from it, never
//! outlives its code. (`dlclose` only drops a reference: whether the code is then unmapped is
//! the loader's decision — other handles, `RTLD_NODELETE` or dependants keep it mapped.)
//!
//! # Thread rules
//! [`SymbolLookup`] and [`Symbol`] are `Clone + Send + Sync`: lookups may run from any number of
//! threads at once (glibc, musl and Apple's dyld serialise `dlopen`/`dlsym`/`dlclose` with
//! the loader lock).
//!
//! # Unsafe invariants
//! - `Library::handle` is the handle `dlopen` returned for `Library::owner`, which owns it:
//!   the handle is valid until `Library` drops (`dlclose` in libloading's `Drop`), and a
//!   `Library` is only ever reached through an `Arc`, held by every `SymbolLookup` that lists it
//!   and by every `Symbol` found in it. An address found in a library is therefore mapped for as
//!   long as a `Symbol` carrying it exists.
//! - `dlsym`, `dlvsym` and `dladdr` only read the loader's tables under its lock; they are called
//!   with NUL-terminated strings that live across the call.

use std::ffi::{c_int, c_void, CStr, CString, OsStr};
use std::fmt;
use std::sync::{Arc, OnceLock};

use libloading::os::unix::{Library as DlLibrary, RTLD_GLOBAL, RTLD_LAZY, RTLD_LOCAL, RTLD_NOW};

use crate::error::{Error, Result};

/// How [`SymbolLookup::library_with`] asks `dlopen(3)` to load a library. The default
/// (`LoadFlags::default()`, both `false`) is `RTLD_NOW | RTLD_LOCAL`, what
/// [`SymbolLookup::library`] uses.
///
/// ```
/// use gatun::linker::{LoadFlags, SymbolLookup};
/// // dlopen("libm.so.6", RTLD_LAZY | RTLD_GLOBAL); on Apple targets libm is part of libSystem
/// let name = if cfg!(target_vendor = "apple") { "libm.dylib" } else { "libm.so.6" };
/// let flags = LoadFlags { global: true, lazy: true };
/// // SAFETY: loading the C math library runs no initialisers with preconditions.
/// let libm = unsafe { SymbolLookup::library_with(name, flags) }.unwrap();
/// assert!(libm.find("cos").is_ok());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct LoadFlags {
    /// `RTLD_GLOBAL`: the library's symbols also resolve references of libraries loaded after it
    /// (and are seen by [`SymbolLookup::default_lookup`]). `false`: `RTLD_LOCAL`.
    pub global: bool,
    /// `RTLD_LAZY`: function references are bound at their first call instead of at load time,
    /// so a missing dependency symbol aborts the process at that call rather than failing the
    /// load. `false`: `RTLD_NOW`, every reference is bound before `dlopen` returns.
    pub lazy: bool,
}

impl LoadFlags {
    /// The `dlopen` mode bits.
    fn mode(self) -> c_int {
        (if self.lazy { RTLD_LAZY } else { RTLD_NOW })
            | (if self.global { RTLD_GLOBAL } else { RTLD_LOCAL })
    }
}

/// One open `dlopen` handle and the name it was opened by.
struct Library {
    /// The name or path given by the user (or a description such as `the process`).
    name: String,
    /// The raw handle, borrowed from `owner` (see the module's invariants).
    handle: *mut c_void,
    /// Owns the handle; closes it on drop.
    owner: DlLibrary,
}

// SAFETY: the handle is a process-global loader handle owned by `owner` (itself Send + Sync);
// the only operations done through it (dlsym, dlvsym) are thread-safe, see the module's
// invariants.
unsafe impl Send for Library {}
// SAFETY: as above; `Library` has no interior mutability.
unsafe impl Sync for Library {}

impl Library {
    /// Wraps an open libloading library, keeping its raw handle beside it.
    fn new(name: String, lib: DlLibrary) -> Arc<Self> {
        let handle = lib.into_raw();
        // SAFETY: `handle` was just released by `into_raw` from a successful `dlopen`;
        // ownership goes straight back into a `DlLibrary`.
        let owner = unsafe { DlLibrary::from_raw(handle) };
        Arc::new(Library {
            name,
            handle,
            owner,
        })
    }

    /// Opens `name` with `mode`; on failure, explains GNU ld scripts.
    ///
    /// # Safety
    /// As [`SymbolLookup::library`].
    unsafe fn open(name: &OsStr, mode: c_int) -> Result<Arc<Self>> {
        let shown = name.to_string_lossy().into_owned();
        // SAFETY: the caller accepts the library's initialisers and finalisers.
        match unsafe { DlLibrary::open(Some(name), mode) } {
            Ok(lib) => Ok(Library::new(shown, lib)),
            Err(e) => {
                let message = e.to_string();
                // dlerror(3) starts with the name (`/x.so: cannot open shared object file: ...`);
                // the error's Display already shows it (`cannot load library /x.so: ...`).
                let reason = ld_script_hint(&message).unwrap_or_else(|| {
                    message
                        .strip_prefix(shown.as_str())
                        .and_then(|rest| rest.strip_prefix(": "))
                        .map_or_else(|| message.clone(), str::to_string)
                });
                Err(Error::LibraryLoad {
                    library: shown,
                    reason,
                })
            }
        }
    }

    /// `dlsym`/`dlvsym` on this library; null when absent.
    fn lookup(&self, name: &CStr, version: Option<&CStr>) -> *mut c_void {
        match version {
            // SAFETY: a valid handle (module invariants) and NUL-terminated strings.
            None => unsafe { libc::dlsym(self.handle, name.as_ptr()) },
            #[cfg(all(target_os = "linux", target_env = "gnu"))]
            // SAFETY: as above.
            Some(v) => unsafe { libc::dlvsym(self.handle, name.as_ptr(), v.as_ptr()) },
            #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
            Some(_) => std::ptr::null_mut(),
        }
    }
}

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:?})", self.name, self.owner)
    }
}

/// An ordered set of loaded libraries to find [`Symbol`]s in (JDK FFM `SymbolLookup`).
///
/// Cloning is cheap (reference counts). Every library in a lookup stays loaded while the lookup,
/// a clone of it, or any [`Symbol`] found through it lives; it is closed (`dlclose`) when the
/// last of them drops. `Send + Sync`: see the module's thread rules.
///
/// ```
/// # if !cfg!(all(target_arch = "x86_64", target_os = "linux")) { return; } // calls C
/// use gatun::linker::SymbolLookup;
/// let name = if cfg!(target_vendor = "apple") { "libz.1.dylib" } else { "libz.so.1" };
/// // SAFETY: loading zlib runs no initialisers with preconditions.
/// let z = unsafe { SymbolLookup::library(name) }.unwrap();
/// let lookup = z.or(SymbolLookup::default_lookup());
/// assert!(lookup.find("crc32").is_ok()); // from libz
/// assert!(lookup.find("strlen").is_ok()); // from libc, searched next
/// assert!(lookup.find("gatun_no_such_symbol").is_err());
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
    /// even though their files are absent from disk (macOS 11 and later).
    ///
    /// # Errors
    /// [`Error::LibraryLoad`] with the loader's message. When the file is a GNU ld script (as
    /// Debian's `/usr/lib/x86_64-linux-gnu/libm.so`), the reason names the real libraries it
    /// points to, e.g. `libm.so.6`.
    ///
    /// # Safety
    /// Loading runs the library's initialisers (ELF `.init_array`, C++ static constructors) and
    /// unloading runs its finalisers: as with calling any foreign function, the caller asserts
    /// that running them here is sound. System libraries such as libc, libm or libz are.
    pub unsafe fn library(name_or_path: impl AsRef<OsStr>) -> Result<SymbolLookup> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::library_with(name_or_path, LoadFlags::default()) }
    }

    /// [`SymbolLookup::library`] with explicit `dlopen` flags (`RTLD_GLOBAL`, `RTLD_LAZY`).
    ///
    /// # Errors
    /// As [`SymbolLookup::library`].
    ///
    /// # Safety
    /// As [`SymbolLookup::library`].
    pub unsafe fn library_with(
        name_or_path: impl AsRef<OsStr>,
        flags: LoadFlags,
    ) -> Result<SymbolLookup> {
        // SAFETY: forwarded to the caller.
        let library = unsafe { Library::open(name_or_path.as_ref(), flags.mode()) }?;
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
    ///   most of libc).
    ///
    /// A C library the process has mapped (libc and libSystem always are) is taken with
    /// `RTLD_NOLOAD`; one it has not (glibc's libm, when nothing linked it) is loaded (`dlopen`,
    /// running its initialisers). Created once per process and cloned after; never fails (a
    /// library that cannot be opened is left out).
    pub fn default_lookup() -> SymbolLookup {
        static DEFAULT: OnceLock<SymbolLookup> = OnceLock::new();
        DEFAULT
            .get_or_init(|| {
                let mut libraries = vec![Library::new("the process".into(), DlLibrary::this())];
                let mut add = |name: &OsStr| {
                    // SAFETY: with RTLD_NOLOAD, dlopen only takes a reference to a library that
                    // is already mapped (libc always is, libm when something linked it) and
                    // runs no initialiser.
                    let loaded =
                        unsafe { Library::open(name, RTLD_NOW | RTLD_LOCAL | libc::RTLD_NOLOAD) };
                    // SAFETY: not yet mapped (glibc's libm, when nothing in the process uses it;
                    // libc and libSystem always are): load it, which runs its initialisers and
                    // IFUNC resolvers. Both are the C library's own (libm is part of glibc) and
                    // run no user code: what linking `-lm` does.
                    let lib =
                        loaded.or_else(|_| unsafe { Library::open(name, RTLD_NOW | RTLD_LOCAL) });
                    if let Ok(lib) = lib {
                        libraries.push(lib);
                    }
                };
                let system = SystemLibraries::NATIVE;
                if system.libc_by_dladdr() {
                    if let Some(libc_path) = libc_path() {
                        add(&libc_path);
                    }
                }
                for name in system.named() {
                    add(OsStr::new(name));
                }
                SymbolLookup { libraries }
            })
            .clone()
    }

    /// A lookup that searches `self` first, then `other` (JDK `SymbolLookup.or`).
    pub fn or(mut self, other: SymbolLookup) -> SymbolLookup {
        self.libraries.extend(other.libraries);
        self
    }

    /// The address of `name` (`dlsym`) in the first library that defines it, as a [`Symbol`] that
    /// keeps that library loaded. A null address counts as absent, as in the JDK.
    ///
    /// # Errors
    /// [`Error::SymbolNotFound`] naming the symbol and the libraries searched;
    /// [`Error::InteriorNul`] if `name` contains a NUL byte.
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
    /// which has no symbol versions; [`Error::InteriorNul`] as [`SymbolLookup::find`].
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
            let address = library.lookup(&c_name, c_version.as_deref());
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
    pub unsafe fn from_address(address: *const c_void) -> Symbol {
        Symbol {
            address,
            name: None,
            library: None,
        }
    }

    /// The symbol's address (never null for a symbol found by a [`SymbolLookup`]).
    pub fn address(&self) -> *const c_void {
        self.address
    }

    /// The name it was found by (`name@version` for a versioned symbol); `None` for
    /// [`Symbol::from_address`].
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The name or path of the library it was found in, as given to [`SymbolLookup::library`]
    /// (`the process` for the process's global scope); `None` for [`Symbol::from_address`].
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

/// The C libraries [`SymbolLookup::default_lookup`] searches after the process, by target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SystemLibraries {
    /// Apple targets: libSystem, which re-exports libc, libm and libpthread.
    LibSystem,
    /// glibc: the libc found by `dladdr`, then `libm.so.6` (a library of its own there).
    GlibcAndLibm,
    /// Other Unix C libraries (musl, the BSDs): the libc found by `dladdr`, which holds libm's
    /// functions too (musl) or is all that is known to be mapped.
    Libc,
}

impl SystemLibraries {
    /// The libraries of the target gatun is compiled for.
    const NATIVE: SystemLibraries = SystemLibraries::for_target(
        cfg!(target_vendor = "apple"),
        cfg!(all(target_os = "linux", target_env = "gnu")),
    );

    /// The libraries of an Apple (`target_vendor = "apple"`) or glibc target, or of another.
    const fn for_target(apple: bool, glibc: bool) -> SystemLibraries {
        if apple {
            SystemLibraries::LibSystem
        } else if glibc {
            SystemLibraries::GlibcAndLibm
        } else {
            SystemLibraries::Libc
        }
    }

    /// Whether the libc found by `dladdr` ([`libc_path`]) comes first.
    fn libc_by_dladdr(self) -> bool {
        !matches!(self, SystemLibraries::LibSystem)
    }

    /// The libraries opened by name, after that libc.
    fn named(self) -> &'static [&'static str] {
        match self {
            SystemLibraries::LibSystem => &["/usr/lib/libSystem.B.dylib"],
            SystemLibraries::GlibcAndLibm => &["libm.so.6"],
            SystemLibraries::Libc => &[],
        }
    }
}

/// The path of the libc this process runs on: the object `dladdr` says defines `getpid`.
fn libc_path() -> Option<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt;
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::uninit();
    // SAFETY: `dladdr` only writes `info`; the address is libc's `getpid`.
    let found = unsafe { libc::dladdr(libc::getpid as *const c_void, info.as_mut_ptr()) };
    if found == 0 {
        return None;
    }
    // SAFETY: `dladdr` returned non-zero, so it filled `info`.
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: `dli_fname` is a NUL-terminated string owned by the loader, valid while libc is
    // loaded (always); it is copied at once.
    let path = unsafe { CStr::from_ptr(info.dli_fname) };
    Some(OsStr::from_bytes(path.to_bytes()).to_owned())
}

/// The message for a `dlopen` failure on a GNU ld script (`<path>: invalid ELF header`): reads
/// the script and names the libraries of its `GROUP`/`INPUT` commands. `None` when the failure is
/// something else or the file is not a readable ld script.
fn ld_script_hint(dlerror: &str) -> Option<String> {
    /// Larger files are not linker scripts (Debian's are under 300 bytes).
    const MAX_SCRIPT_BYTES: u64 = 64 * 1024;
    let path = dlerror.strip_suffix(": invalid ELF header")?;
    if std::fs::metadata(path).ok()?.len() > MAX_SCRIPT_BYTES {
        return None;
    }
    let text = String::from_utf8(std::fs::read(path).ok()?).ok()?;
    let inputs = parse_ld_script(&text);
    let first = inputs.iter().find(|i| !i.as_needed)?;
    let listed: Vec<String> = inputs
        .iter()
        .map(|i| {
            let needed = if i.as_needed { ", as needed" } else { "" };
            format!("{} ({}{needed})", i.soname(), i.path)
        })
        .collect();
    Some(format!(
        "{path} is a GNU ld script, not an ELF shared library (dlopen: invalid ELF header); \
         it points to {}: load `{}` instead",
        listed.join(", "),
        first.soname()
    ))
}

/// A shared library named by an ld script's `GROUP` or `INPUT` command.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ScriptInput {
    /// As written (`-lfoo` becomes `libfoo.so`).
    path: String,
    /// Inside `AS_NEEDED ( ... )`.
    as_needed: bool,
}

impl ScriptInput {
    /// The file name: for the system's scripts, the library's soname (`libm.so.6`).
    fn soname(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// The shared libraries named by the `GROUP ( ... )` and `INPUT ( ... )` commands of a GNU ld
/// script (GNU ld manual, "File Commands"), in order; static archives (`.a`) are left out, since
/// `dlopen` cannot load them. Comments are skipped; other commands are ignored.
fn parse_ld_script(text: &str) -> Vec<ScriptInput> {
    let mut without_comments = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        without_comments.push_str(&rest[..start]);
        without_comments.push(' ');
        rest = rest[start + 2..]
            .find("*/")
            .map_or("", |end| &rest[start + 2 + end + 2..]);
    }
    without_comments.push_str(rest);

    let spaced = without_comments
        .replace('(', " ( ")
        .replace(')', " ) ")
        .replace(',', " ");
    let mut inputs = Vec::new();
    // Parenthesis depth inside GROUP/INPUT (0: outside), and the depth of an open AS_NEEDED.
    let mut depth = 0usize;
    let mut as_needed_depth = None;
    let mut previous = "";
    for token in spaced.split_whitespace() {
        match token {
            "(" if depth > 0 => {
                depth += 1;
                if previous == "AS_NEEDED" {
                    as_needed_depth = Some(depth);
                }
            }
            "(" if matches!(previous, "GROUP" | "INPUT") => depth = 1,
            ")" if depth > 0 => {
                if as_needed_depth == Some(depth) {
                    as_needed_depth = None;
                }
                depth -= 1;
            }
            "AS_NEEDED" => {}
            _ if depth > 0 => {
                let path = match token.strip_prefix("-l") {
                    Some(lib) => format!("lib{lib}.so"),
                    None => token.to_owned(),
                };
                if !path.ends_with(".a") {
                    inputs.push(ScriptInput {
                        path,
                        as_needed: as_needed_depth.is_some(),
                    });
                }
            }
            _ => {}
        }
        previous = token;
    }
    inputs
}

#[cfg(test)]
mod tests;
