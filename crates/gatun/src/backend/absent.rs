//! The executor pieces a backend without compiled stubs lacks: no image entries, no struct
//! entries, no uncaptured entries (all uninhabited), no stub cache to lock around `fork`, and
//! the fast-path methods that report "no stub" ([`no_fast_paths`]). Used by `unsupported`; the AArch64 and Win64
//! backends (which have stubs, but no image entries; Win64 no uncaptured entries either) use the
//! uninhabited types.
//! Compiled on every target except x86-64 Linux outside Miri (whose backend has all of them).
//!
//! No value of [`ImageEntry`], [`StructEntry`] or [`Uncaptured`] can exist, so their methods
//! are never called: each body is an empty `match` on the uninhabited value. The `unsafe fn`s keep the
//! signatures of the x86-64 SysV entries they stand in for, so the handle layer calls both
//! the same way.

/// No image entries exist (uninhabited).
#[derive(Debug, Clone, Copy)]
pub(crate) enum ImageEntry {}

impl ImageEntry {
    /// The image's `(size, align)` in bytes. Never called: uninhabited.
    pub(crate) fn size_align(&self) -> (usize, usize) {
        match *self {}
    }

    /// Calls the image entry with the raw arguments at `_args`. Never called: uninhabited.
    ///
    /// # Safety
    /// As the x86-64 SysV image entry's `call`: `_args` points to the descriptor's argument
    /// pointers and `_target` is a function of the linked signature. (No value exists, so
    /// no call happens.)
    pub(crate) unsafe fn call(
        &self,
        _args: *const u8,
        _target: *const std::ffi::c_void,
    ) -> Option<[u64; 2]> {
        match *self {}
    }

    /// Stores the register image at `_ret`. Never called: uninhabited.
    ///
    /// # Safety
    /// As the x86-64 SysV image entry's `store`: `_ret` is writable for the returned struct's
    /// size. (No value exists, so no call happens.)
    pub(crate) unsafe fn store(&self, _ret: *mut u8, _image: [u64; 2]) {
        match *self {}
    }
}

/// No struct entries exist (uninhabited): the stand-in for a backend's entry of a struct
/// return written through the return destination (`Executor::struct_entry`).
// The AArch64 and Win64 backends have their own.
#[cfg(not(any(
    all(
        target_arch = "aarch64",
        any(target_os = "linux", target_vendor = "apple"),
        not(miri)
    ),
    all(target_arch = "x86_64", target_os = "windows", not(miri))
)))]
#[derive(Debug, Clone, Copy)]
pub(crate) enum StructEntry {}

#[cfg(not(any(
    all(
        target_arch = "aarch64",
        any(target_os = "linux", target_vendor = "apple"),
        not(miri)
    ),
    all(target_arch = "x86_64", target_os = "windows", not(miri))
)))]
impl StructEntry {
    /// Calls the struct entry. Never called: uninhabited.
    ///
    /// # Safety
    /// As the x86-64 SysV struct entry's `call`: `_args` holds one `Value` per descriptor
    /// argument, `_ret` is writable and aligned for the return layout and `_target` is a
    /// function of the linked signature. (No value exists, so no call happens.)
    pub(crate) unsafe fn call(
        self,
        _args: &[crate::value::Value<'_>],
        _ret: *mut u8,
        _target: *const std::ffi::c_void,
    ) -> bool {
        match self {}
    }
}

/// No uncaptured entries exist (uninhabited). (The AArch64 executor has its own; this one
/// serves `unsupported` there, e.g. under Miri.)
#[derive(Clone, Copy)]
#[cfg_attr(target_arch = "aarch64", allow(dead_code))]
pub(crate) enum Uncaptured<'a> {
    /// The only variant, holding an `Infallible`: never constructed.
    #[allow(dead_code)]
    Never(std::convert::Infallible, std::marker::PhantomData<&'a ()>),
}

impl Uncaptured<'_> {
    /// Calls the signature's stub without capture. Never called: uninhabited.
    ///
    /// # Safety
    /// As the x86-64 SysV uncaptured entry's `call`: the first pointer holds the raw
    /// arguments, the second is a function of the linked signature. (No value exists, so no
    /// call happens.)
    #[cfg_attr(target_arch = "aarch64", allow(dead_code))]
    pub(crate) unsafe fn call(self, _: *const u8, _: *const std::ffi::c_void) -> Option<u64> {
        match self {
            Uncaptured::Never(never, _) => match never {},
        }
    }
}

/// The stub cache's fork lock: nothing to lock without a stub compiler.
// Only Linux's code-arena fork handler takes it.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[cfg(not(all(
    target_arch = "aarch64",
    any(target_os = "linux", target_vendor = "apple"),
    not(miri)
)))]
pub(crate) struct CacheLock;

#[cfg(not(all(
    target_arch = "aarch64",
    any(target_os = "linux", target_vendor = "apple"),
    not(miri)
)))]
impl Drop for CacheLock {
    /// Releases nothing (the native backend's lock releases the stub cache here).
    fn drop(&mut self) {}
}

/// As `x86_64_sysv::stub::lock_cache_for_fork`: no cache to lock.
#[cfg(all(target_os = "linux", not(all(target_arch = "aarch64", not(miri)))))]
pub(crate) fn lock_cache_for_fork() -> CacheLock {
    CacheLock
}

/// The fast-path methods of an executor without compiled stubs, for its `impl Executor`
/// block: the handle layer's fast paths all report "no stub" (`None`, `false`,
/// `usize::MAX` arities), so every call takes `Executor::interpret`; `interpreted` (the
/// internals test hook) is the executor itself. Requires `Executor: Clone`.
#[cfg(not(any(
    all(
        target_arch = "aarch64",
        any(target_os = "linux", target_vendor = "apple"),
        not(miri)
    ),
    all(target_arch = "x86_64", target_os = "windows", not(miri))
)))]
macro_rules! no_fast_paths {
    () => {
        /// The executor itself (every call is interpreted already).
        #[cfg(feature = "internals")]
        pub(crate) fn interpreted(&self) -> Executor {
            self.clone()
        }
        /// Whether calls run a compiled stub: never.
        pub(crate) fn is_compiled(&self) -> bool {
            false
        }
        /// `usize::MAX`: no integer fast path.
        pub(crate) fn int_arity(&self, _nargs: usize) -> usize {
            usize::MAX
        }
        /// `usize::MAX`: no float fast path.
        pub(crate) fn float_arity(&self, _nargs: usize) -> usize {
            usize::MAX
        }
        /// Never called (`int_arity` is `usize::MAX`): `None`.
        ///
        /// # Safety
        /// Nothing is read or called; the signature matches the compiled executors'.
        pub(crate) unsafe fn call_int(
            &self,
            _: *const u8,
            _: *const std::ffi::c_void,
        ) -> Option<u64> {
            None
        }
        /// Never called (`float_arity` is `usize::MAX`): `None`.
        ///
        /// # Safety
        /// Nothing is read or called; the signature matches the compiled executors'.
        pub(crate) unsafe fn call_float(
            &self,
            _: *const u8,
            _: *const std::ffi::c_void,
        ) -> Option<u64> {
            None
        }
        /// No image entry.
        pub(crate) fn image(&self) -> Option<$crate::backend::absent::ImageEntry> {
            None
        }
        /// No struct entry (the handle interprets struct returns).
        pub(crate) fn struct_entry(&self) -> Option<$crate::backend::absent::StructEntry> {
            None
        }
        /// No stub: `None` (the handle interprets).
        ///
        /// # Safety
        /// Nothing is read or called; the signature matches the compiled executors'.
        pub(crate) unsafe fn call_values(
            &self,
            _: *const u8,
            _: *mut u8,
            _: *mut i32,
            _: *const std::ffi::c_void,
        ) -> Option<u64> {
            None
        }
        /// No stub: `None` (the system-call adapter interprets).
        ///
        /// # Safety
        /// Nothing is read or called; the signature matches the compiled executors'.
        pub(crate) unsafe fn call_capture(
            &self,
            _: *const u8,
            _: *mut i32,
            _: *const std::ffi::c_void,
        ) -> Option<u64> {
            None
        }
        /// No stub without capture.
        pub(crate) fn uncaptured(&self) -> Option<$crate::backend::absent::Uncaptured<'_>> {
            None
        }
        /// No stub: `None` (the raw path interprets).
        ///
        /// # Safety
        /// Nothing is read or called; the signature matches the compiled executors'.
        pub(crate) unsafe fn call_raw(
            &self,
            _: *const *const u8,
            _: *mut u8,
            _: *mut i32,
            _: *const std::ffi::c_void,
        ) -> Option<u64> {
            None
        }
    };
}
#[cfg(not(any(
    all(
        target_arch = "aarch64",
        any(target_os = "linux", target_vendor = "apple"),
        not(miri)
    ),
    all(target_arch = "x86_64", target_os = "windows", not(miri))
)))]
pub(crate) use no_fast_paths;

/// The slots fast path (`linker::Arguments`) of an executor without one (`unsupported`), for
/// its `impl Executor` block: `slots_path` is always `None`, so the
/// handle converts the arguments to `Value`s and takes the `Value` path; the two calls are
/// never made.
// AArch64 and Win64 have their own slots paths, so there only `unsupported` could use it.
#[cfg_attr(
    any(target_arch = "aarch64", all(target_arch = "x86_64", windows)),
    allow(unused_macros)
)]
macro_rules! no_slots_path {
    () => {
        /// No slots entry: the `Value` path serves `linker::Arguments`.
        pub(crate) fn slots_path(&self) -> $crate::backend::SlotsPath {
            $crate::backend::SlotsPath::None
        }
        /// Never called (`slots_path` is `None`).
        ///
        /// # Safety
        /// Nothing is read or called; the signature matches the x86-64 SysV executor's.
        pub(crate) unsafe fn call_slots_int(
            &self,
            _: u64,
            _: &$crate::backend::Slots,
            _: *const std::ffi::c_void,
        ) -> u64 {
            0
        }
        /// Never called (`slots_path` is `None`).
        ///
        /// # Safety
        /// Nothing is read or called; the signature matches the x86-64 SysV executor's.
        pub(crate) unsafe fn call_slots_float(
            &self,
            _: u64,
            _: &$crate::backend::Slots,
            _: *const std::ffi::c_void,
        ) -> u64 {
            0
        }
    };
}
#[cfg_attr(
    any(target_arch = "aarch64", all(target_arch = "x86_64", windows)),
    allow(unused_imports)
)]
pub(crate) use no_slots_path;
