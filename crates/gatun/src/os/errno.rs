//! This thread's `errno` address, found once per thread and cached.

#[cfg(any(target_os = "linux", target_os = "android"))]
use libc::__errno_location as errno_location;

#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
use libc::__error as errno_location;

// The Windows C runtime's `_errno` (msvcrt.dll and ucrtbase.dll alike), which the `libc` crate
// does not declare: `<errno.h>`'s `errno` is `(*_errno())`.
#[cfg(windows)]
extern "C" {
    #[link_name = "_errno"]
    fn errno_location() -> *mut std::ffi::c_int;
}

/// No `errno` address on other targets (which have no executor, so no handle reads it).
///
/// # Safety
/// Always safe; `unsafe` only to match the C functions it stands in for.
#[cfg(not(any(
    target_os = "linux",
    target_os = "android",
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    windows
)))]
unsafe fn errno_location() -> *mut i32 {
    std::ptr::null_mut()
}

/// This thread's `errno` address (`__errno_location()` on Linux and Android, `__error()` on
/// Apple targets and FreeBSD, the C runtime's `_errno()` on Windows), cached in a thread-local
/// after the first call: a TLS load instead of a call into libc per captured call (the
/// `errno_location` parameter of capture stubs, the system-call adapter). The address is fixed
/// for a thread's lifetime and valid until the thread exits. Null on other targets (which have
/// no executor, so no handle reads it).
#[inline(always)]
pub(crate) fn thread_errno() -> *mut i32 {
    thread_local! {
        static ERRNO: std::cell::Cell<*mut i32> = const { std::cell::Cell::new(std::ptr::null_mut()) };
    }
    ERRNO.with(|c| {
        let p = c.get();
        if p.is_null() {
            init_thread_errno(c)
        } else {
            p
        }
    })
}

/// Asks the C library for this thread's `errno` address and caches it in `c`.
#[cold]
#[inline(never)]
fn init_thread_errno(c: &std::cell::Cell<*mut i32>) -> *mut i32 {
    // SAFETY: `__errno_location`, `__error` and `_errno` are always safe to call and return
    // this thread's errno address, valid for the thread's lifetime; the fallback returns null.
    let p = unsafe { errno_location() };
    c.set(p);
    p
}

#[cfg(test)]
mod tests {
    use super::thread_errno;

    #[test]
    #[cfg_attr(miri, ignore)]
    fn cached_address_is_this_threads_errno() {
        let p = thread_errno();
        assert_eq!(p, thread_errno(), "the cached address is returned again");
        if p.is_null() {
            return; // a target without an errno address
        }
        // SAFETY: this thread's errno address, valid for the thread's life.
        unsafe { p.write(7) };
        if cfg!(unix) {
            // The standard library reads the same `errno` (Windows: `GetLastError` instead).
            assert_eq!(std::io::Error::last_os_error().raw_os_error(), Some(7));
        }
        let other = std::thread::spawn(|| thread_errno() as usize)
            .join()
            .unwrap();
        assert_ne!(other, p as usize, "each thread has its own errno");
    }
}
