//! [`Library`]: a symbol lookup with the declarations of its functions, linking each function
//! once and keeping the handle.

use std::collections::HashMap;
use std::fmt;
use std::sync::{PoisonError, RwLock};

use super::Declarations;
use crate::error::Result;
use crate::linker::{DowncallHandle, LinkerOption, SymbolLookup};

/// The handles linked so far: per function name, one handle per list of options.
type Handles = HashMap<String, Vec<(Box<[LinkerOption]>, DowncallHandle)>>;

/// A C library as its header describes it: a [`SymbolLookup`] (the loaded library, or several
/// searched in order) and the [`Declarations`] of its functions, with each function linked
/// the first time it is asked for and its [`DowncallHandle`] kept for later calls.
///
/// Linking costs a symbol lookup, classification and a stub-cache lookup (microseconds); a
/// call through the handle costs nanoseconds. [`Declarations::link`] links anew every time;
/// a `Library` links a function once per list of options and then hands out clones of that
/// handle (an `Arc` clone under a read lock, no allocation). Code that calls a function in a
/// loop does best to keep the handle itself; a `Library` is for code that names functions as
/// it goes, like a script binding or the examples.
///
/// A handle is kept for `(name, options)`: the same options in the same order give the same
/// handle (see [`DowncallHandle::ptr_eq`]). Handles are never evicted; they and the library
/// stay loaded while the `Library` lives (each handle also keeps its library loaded on its
/// own). A failed link is not kept: asking again tries again.
///
/// `Send + Sync` (share it with an `Arc`); not `Clone`.
///
/// ```
/// use gatun::cdecl::{Declarations, Library};
/// use gatun::linker::SymbolLookup;
/// use gatun::Value;
///
/// # #[cfg(gatun_executes)] {
/// let decls = Declarations::parse("int abs(int); size_t strlen(const char *);").unwrap();
/// let libc = Library::new(SymbolLookup::default_lookup(), decls);
/// let abs = libc.function("abs")?; // linked here
/// assert!(abs.ptr_eq(&libc.function("abs")?)); // and kept
/// // SAFETY: abs has no preconditions.
/// assert_eq!(unsafe { abs.invoke(&[(-3).into()]) }?, Value::I32(3));
/// assert!(libc.function("no_such_function").is_err());
/// # }
/// # Ok::<(), gatun::Error>(())
/// ```
pub struct Library {
    lookup: SymbolLookup,
    declarations: Declarations,
    handles: RwLock<Handles>,
}

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let handles = self.handles.read().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Library")
            .field("lookup", &self.lookup)
            .field("functions", &self.declarations.functions().count())
            .field("linked", &handles.values().map(Vec::len).sum::<usize>())
            .finish()
    }
}

impl Library {
    /// A library of the functions `declarations` declares, found in `lookup`. Links nothing
    /// yet.
    ///
    /// ```
    /// use gatun::cdecl::{Declarations, Library};
    /// use gatun::linker::SymbolLookup;
    /// let decls = Declarations::parse("double cos(double);").unwrap();
    /// let libm = Library::new(SymbolLookup::default_lookup(), decls);
    /// assert!(libm.declarations().function("cos").is_some());
    /// ```
    pub fn new(lookup: SymbolLookup, declarations: Declarations) -> Library {
        Library {
            lookup,
            declarations,
            handles: RwLock::new(HashMap::new()),
        }
    }

    /// The declarations (for layouts, constants, callback descriptors and variadic functions,
    /// which [`Declarations::link_variadic`] links per call shape).
    ///
    /// ```
    /// use gatun::cdecl::{Declarations, Library};
    /// use gatun::linker::SymbolLookup;
    /// let decls = Declarations::parse("struct point { int x, y; };").unwrap();
    /// let lib = Library::new(SymbolLookup::default_lookup(), decls);
    /// assert_eq!(lib.declarations().layout("struct point").unwrap().byte_size(), 8);
    /// ```
    pub fn declarations(&self) -> &Declarations {
        &self.declarations
    }

    /// The symbol lookup functions are found in.
    ///
    /// ```
    /// use gatun::cdecl::{Declarations, Library};
    /// use gatun::linker::SymbolLookup;
    /// let lib = Library::new(SymbolLookup::default_lookup(), Declarations::new());
    /// assert!(lib.lookup().find("strlen").is_ok());
    /// ```
    pub fn lookup(&self) -> &SymbolLookup {
        &self.lookup
    }

    /// The declared function `name`, linked on first use ([`Declarations::link`]) and the same
    /// handle after that.
    ///
    /// ```
    /// use gatun::cdecl::{Declarations, Library};
    /// use gatun::linker::SymbolLookup;
    /// # #[cfg(gatun_executes)] {
    /// let decls = Declarations::parse("size_t strlen(const char *);").unwrap();
    /// let libc = Library::new(SymbolLookup::default_lookup(), decls);
    /// let a = libc.function("strlen").unwrap();
    /// assert!(a.ptr_eq(&libc.function("strlen").unwrap()));
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`Declarations::link`]: not declared, a type gatun cannot pass, a variadic function,
    /// a symbol `lookup` does not find, or what [`Linker::downcall`](crate::Linker::downcall)
    /// rejects.
    pub fn function(&self, name: &str) -> Result<DowncallHandle> {
        self.function_with(name, &[])
    }

    /// [`Library::function`] with linker options ([`Declarations::link_with`]): one handle per
    /// function and list of options, linked on first use.
    ///
    /// ```
    /// use gatun::cdecl::{Declarations, Library};
    /// use gatun::linker::{LinkerOption, SymbolLookup};
    /// # #[cfg(gatun_executes)] {
    /// let decls = Declarations::parse("int abs(int);").unwrap();
    /// let libc = Library::new(SymbolLookup::default_lookup(), decls);
    /// let errno = [LinkerOption::CaptureCallState(&["errno"])];
    /// let captured = libc.function_with("abs", &errno).unwrap();
    /// assert!(captured.captures_call_state());
    /// assert!(captured.ptr_eq(&libc.function_with("abs", &errno).unwrap()));
    /// assert!(!captured.ptr_eq(&libc.function("abs").unwrap())); // other options
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`Declarations::link_with`].
    pub fn function_with(&self, name: &str, options: &[LinkerOption]) -> Result<DowncallHandle> {
        if let Some(h) = self.linked(name, options) {
            return Ok(h);
        }
        // Linked without the lock held; a thread that linked the same function meanwhile
        // wins, so every caller gets the one kept handle.
        let handle = self.declarations.link_with(&self.lookup, name, options)?;
        let mut handles = self.handles.write().unwrap_or_else(PoisonError::into_inner);
        let kept = handles.entry(name.to_string()).or_default();
        if let Some((_, h)) = kept.iter().find(|(o, _)| **o == *options) {
            return Ok(h.clone());
        }
        kept.push((options.into(), handle.clone()));
        Ok(handle)
    }

    /// The handle kept for `(name, options)`, if any. (The map is never left half-updated, so
    /// a poisoned lock is read as it is.)
    fn linked(&self, name: &str, options: &[LinkerOption]) -> Option<DowncallHandle> {
        let handles = self.handles.read().unwrap_or_else(PoisonError::into_inner);
        handles
            .get(name)?
            .iter()
            .find(|(o, _)| **o == *options)
            .map(|(_, h)| h.clone())
    }
}

// A library is shared between threads; keep that a compile-time fact.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Library>();
};
