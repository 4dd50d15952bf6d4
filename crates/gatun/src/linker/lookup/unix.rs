//! The Unix loader behind [`SymbolLookup`](super::SymbolLookup): `dlopen(3)` through
//! libloading's `os::unix`, `dlsym`/`dlvsym`, and the C libraries of the default lookup (found
//! with `dladdr`).
//!
//! # Unsafe invariants
//! - `Native::handle` is the handle `dlopen` returned for `Native::owner`, which owns it: the
//!   handle is valid until `Native` drops (`dlclose` in libloading's `Drop`).
//! - `dlsym`, `dlvsym` and `dladdr` only read the loader's tables under its lock (glibc, musl
//!   and Apple's dyld serialise `dlopen`/`dlsym`/`dlclose`); they are called with
//!   NUL-terminated strings that live across the call.

use std::ffi::{c_int, c_void, CStr, OsStr};
use std::fmt;

use libloading::os::unix::{Library as DlLibrary, RTLD_GLOBAL, RTLD_LAZY, RTLD_LOCAL, RTLD_NOW};

use super::LoadFlags;
use crate::error::{Error, Result};

impl LoadFlags {
    /// The `dlopen` mode bits.
    pub(super) fn mode(self) -> c_int {
        (if self.lazy { RTLD_LAZY } else { RTLD_NOW })
            | (if self.global { RTLD_GLOBAL } else { RTLD_LOCAL })
    }
}

/// One open `dlopen` handle.
pub(super) struct Native {
    /// The raw handle, borrowed from `owner` (see the module's invariants).
    handle: *mut c_void,
    /// Owns the handle; closes it on drop.
    owner: DlLibrary,
}

// SAFETY: the handle is a process-global loader handle owned by `owner` (itself Send + Sync);
// the only operations done through it (dlsym, dlvsym) are thread-safe, see the module's
// invariants.
unsafe impl Send for Native {}
// SAFETY: as above; `Native` has no interior mutability.
unsafe impl Sync for Native {}

impl fmt::Debug for Native {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.owner, f)
    }
}

impl Native {
    /// Wraps an open libloading library, keeping its raw handle beside it.
    fn new(lib: DlLibrary) -> Native {
        let handle = lib.into_raw();
        // SAFETY: `handle` was just released by `into_raw` from a successful `dlopen`;
        // ownership goes straight back into a `DlLibrary`.
        let owner = unsafe { DlLibrary::from_raw(handle) };
        Native { handle, owner }
    }

    /// Opens `name` with `flags`; on failure, explains GNU ld scripts.
    ///
    /// # Safety
    /// As [`SymbolLookup::library`](super::SymbolLookup::library).
    pub(super) unsafe fn open(name: &OsStr, flags: LoadFlags) -> Result<Native> {
        // SAFETY: forwarded to the caller.
        unsafe { Native::open_mode(name, flags.mode()) }
    }

    /// [`Native::open`] with raw `dlopen` mode bits.
    ///
    /// # Safety
    /// As [`SymbolLookup::library`](super::SymbolLookup::library).
    unsafe fn open_mode(name: &OsStr, mode: c_int) -> Result<Native> {
        let shown = name.to_string_lossy().into_owned();
        // SAFETY: the caller accepts the library's initialisers and finalisers.
        match unsafe { DlLibrary::open(Some(name), mode) } {
            Ok(lib) => Ok(Native::new(lib)),
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
    pub(super) fn lookup(&self, name: &CStr, version: Option<&CStr>) -> *mut c_void {
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

/// The libraries of [`SymbolLookup::default_lookup`](super::SymbolLookup::default_lookup),
/// each with the name it is shown by: the process's global scope (`dlopen(NULL)`, `the
/// process`), then the C libraries; a C library that cannot be opened is left out.
///
/// A library the process has mapped (libc and libSystem always are) is taken with
/// `RTLD_NOLOAD`; one it has not (glibc's libm, when nothing linked it) is loaded.
pub(super) fn default_libraries() -> Vec<(String, Native)> {
    let mut libraries = vec![("the process".to_string(), Native::new(DlLibrary::this()))];
    let mut add = |name: &OsStr| {
        // SAFETY: with RTLD_NOLOAD, dlopen only takes a reference to a library that is already
        // mapped (libc always is, libm when something linked it) and runs no initialiser.
        let loaded = unsafe { Native::open_mode(name, RTLD_NOW | RTLD_LOCAL | libc::RTLD_NOLOAD) };
        // SAFETY: not yet mapped (glibc's libm, when nothing in the process uses it; libc and
        // libSystem always are): load it, which runs its initialisers and IFUNC resolvers. Both
        // are the C library's own (libm is part of glibc) and run no user code: what linking
        // `-lm` does.
        let lib = loaded.or_else(|_| unsafe { Native::open_mode(name, RTLD_NOW | RTLD_LOCAL) });
        if let Ok(lib) = lib {
            libraries.push((name.to_string_lossy().into_owned(), lib));
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
    libraries
}

/// The C libraries [`SymbolLookup::default_lookup`] searches after the process, by target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SystemLibraries {
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
    pub(super) const NATIVE: SystemLibraries = SystemLibraries::for_target(
        cfg!(target_vendor = "apple"),
        cfg!(all(target_os = "linux", target_env = "gnu")),
    );

    /// The libraries of an Apple (`target_vendor = "apple"`) or glibc target, or of another.
    pub(super) const fn for_target(apple: bool, glibc: bool) -> SystemLibraries {
        if apple {
            SystemLibraries::LibSystem
        } else if glibc {
            SystemLibraries::GlibcAndLibm
        } else {
            SystemLibraries::Libc
        }
    }

    /// Whether the libc found by `dladdr` ([`libc_path`]) comes first.
    pub(super) fn libc_by_dladdr(self) -> bool {
        !matches!(self, SystemLibraries::LibSystem)
    }

    /// The libraries opened by name, after that libc.
    pub(super) fn named(self) -> &'static [&'static str] {
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
pub(super) fn ld_script_hint(dlerror: &str) -> Option<String> {
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
pub(super) struct ScriptInput {
    /// As written (`-lfoo` becomes `libfoo.so`).
    pub(super) path: String,
    /// Inside `AS_NEEDED ( ... )`.
    pub(super) as_needed: bool,
}

impl ScriptInput {
    /// The file name: for the system's scripts, the library's soname (`libm.so.6`).
    pub(super) fn soname(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// The shared libraries named by the `GROUP ( ... )` and `INPUT ( ... )` commands of a GNU ld
/// script (GNU ld manual, "File Commands"), in order; static archives (`.a`) are left out, since
/// `dlopen` cannot load them. Comments are skipped; other commands are ignored.
pub(super) fn parse_ld_script(text: &str) -> Vec<ScriptInput> {
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
