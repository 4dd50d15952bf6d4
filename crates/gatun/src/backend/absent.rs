//! The executor pieces a backend without compiled stubs lacks: no image entries, no uncaptured
//! entries (both uninhabited), no stub cache to lock around `fork`. Used by `unsupported` and
//! by the AArch64 backend (whose executor interprets every call).

/// No image entries exist (uninhabited).
#[derive(Debug, Clone, Copy)]
pub(crate) enum ImageEntry {}

impl ImageEntry {
    pub(crate) fn size_align(&self) -> (usize, usize) {
        match *self {}
    }

    pub(crate) unsafe fn call(
        &self,
        _args: *const u8,
        _target: *const std::ffi::c_void,
    ) -> Option<[u64; 2]> {
        match *self {}
    }

    pub(crate) unsafe fn store(&self, _ret: *mut u8, _image: [u64; 2]) {
        match *self {}
    }
}

/// No uncaptured entries exist (uninhabited).
#[derive(Clone, Copy)]
pub(crate) enum Uncaptured<'a> {
    #[allow(dead_code)]
    Never(std::convert::Infallible, std::marker::PhantomData<&'a ()>),
}

#[allow(clippy::missing_safety_doc)]
impl Uncaptured<'_> {
    pub(crate) unsafe fn call(self, _: *const u8, _: *const std::ffi::c_void) -> Option<u64> {
        match self {
            Uncaptured::Never(never, _) => match never {},
        }
    }
}

/// The stub cache's fork lock: nothing to lock without a stub compiler.
pub(crate) struct CacheLock;

impl Drop for CacheLock {
    /// Releases nothing (the native backend's lock releases the stub cache here).
    fn drop(&mut self) {}
}

/// As `x86_64_sysv::stub::lock_cache_for_fork`: no cache to lock.
#[cfg(target_os = "linux")]
pub(crate) fn lock_cache_for_fork() -> CacheLock {
    CacheLock
}
