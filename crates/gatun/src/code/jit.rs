//! Apple's JIT memory (`MAP_JIT`): how a piece of generated code gets its own executable
//! mapping on Apple targets (`target_vendor = "apple"`).
//!
//! The rules, from Apple's documentation ("Porting just-in-time compilers to Apple silicon",
//! the `pthread_jit_write_protect_np(3)` manual page and `<libkern/OSCacheControl.h>`):
//! - Memory that is written and then executed is mapped `PROT_READ | PROT_WRITE | PROT_EXEC`
//!   with `MAP_PRIVATE | MAP_ANON | MAP_JIT`. Under the Hardened Runtime this needs the
//!   `com.apple.security.cs.allow-jit` entitlement; without it the `mmap` fails, and the caller
//!   falls back to a read-write mapping switched to read-execute by `mprotect` (which the
//!   Hardened Runtime allows only with `com.apple.security.cs.allow-unsigned-executable-memory`).
//! - On Apple silicon a `MAP_JIT` page is, for each thread, either writable or executable, never
//!   both: `pthread_jit_write_protect_np(0)` makes every `MAP_JIT` page writable (and not
//!   executable) for the calling thread only, `pthread_jit_write_protect_np(1)` makes them
//!   executable again. Other threads keep executing code in the same pages meanwhile. A thread
//!   starts in the executable state.
//! - Newly written instructions are made visible to instruction fetch with
//!   `sys_icache_invalidate(start, len)` before they run (done by the caller,
//!   `flush_icache`).
//! - On x86-64 Macs `pthread_jit_write_protect_supported_np()` is false: `MAP_JIT` pages are
//!   writable and executable at once and nothing is toggled. (`pthread_jit_write_protect_np`
//!   exists from macOS 11, older than every arm64 Mac but newer than the oldest macOS the
//!   x86-64 target supports, so it is not called there at all.) `MAP_JIT` itself exists from
//!   macOS 10.14 (Darwin 18); the caller maps without it on older kernels (`kernel_release`).
//!
//! Freed code is unmapped (`munmap`) without being overwritten first, so freeing needs no
//! write window.
//!
//! This path is compiled (`cargo check --target aarch64-apple-darwin` and
//! `--target x86_64-apple-darwin`) but not executed by gatun's tests: they run on Linux only.
//!
//! # Invariants
//! - A [`WriteWindow`] is open only around plain memory copies into a `MAP_JIT` mapping that
//!   was just created and whose address has not been handed out yet; the copies call no code
//!   in `MAP_JIT` memory, so this thread executes none while its pages are writable. The
//!   window closes (`pthread_jit_write_protect_np(1)`) when the guard drops, on every path.
//!   Not covered: a signal handler that interrupts the copy and calls code in `MAP_JIT` memory
//!   (an upcall stub, another JIT's code) faults, as it would under any JIT on Apple silicon;
//!   the window spans one `memcpy`.
//! - [`map`] returns a whole mapping of `map_len` bytes that nothing else refers to; the caller
//!   owns it and unmaps it with `munmap`.

/// Maps `map_len` bytes (a multiple of the page size) with `prot` and `flags` (from
/// `OwnMapping::Jit`: read-write-execute, `MAP_PRIVATE | MAP_ANON | MAP_JIT`) and copies `code`
/// (at most `map_len` bytes) to its start, opening a [`WriteWindow`] around the copy when
/// `toggle` is set (Apple silicon). Returns the mapping's address, or the `mmap` error. The
/// instruction cache is not invalidated here.
pub(super) fn map(
    code: &[u8],
    map_len: usize,
    prot: i32,
    flags: i32,
    toggle: bool,
) -> std::io::Result<*mut u8> {
    debug_assert!(code.len() <= map_len && flags & libc::MAP_JIT != 0);
    // SAFETY: a new anonymous private mapping (no file, no MAP_FIXED) without an address hint:
    // no existing mapping is touched.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), map_len, prot, flags, -1, 0) };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let p = p.cast::<u8>();
    let window = toggle.then(WriteWindow::open);
    // SAFETY: the mapping is map_len >= code.len() bytes, ours alone, and writable for this
    // thread (the window is open on Apple silicon; x86-64 pages are always writable).
    unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), p, code.len()) };
    drop(window);
    Ok(p)
}

/// This thread's `MAP_JIT` pages made writable (and not executable) while the guard lives
/// (Apple silicon only; see the module's rules and invariants).
struct WriteWindow(());

impl WriteWindow {
    /// `pthread_jit_write_protect_np(0)`.
    fn open() -> WriteWindow {
        #[cfg(target_arch = "aarch64")]
        // SAFETY: changes this thread's view of MAP_JIT pages only; nothing on this thread runs
        // JIT code until the guard drops (module invariants).
        unsafe {
            libc::pthread_jit_write_protect_np(0)
        };
        WriteWindow(())
    }
}

impl Drop for WriteWindow {
    /// `pthread_jit_write_protect_np(1)`: this thread's `MAP_JIT` pages executable again.
    fn drop(&mut self) {
        #[cfg(target_arch = "aarch64")]
        // SAFETY: makes this thread's MAP_JIT pages executable again, the state threads start
        // in and the one every user of the window leaves behind.
        unsafe {
            libc::pthread_jit_write_protect_np(1)
        };
    }
}

#[cfg(target_arch = "aarch64")]
extern "C" {
    /// `<libkern/OSCacheControl.h>` (libSystem): makes `len` bytes of new instructions at
    /// `start` visible to instruction fetch on every core.
    fn sys_icache_invalidate(start: *mut std::ffi::c_void, len: usize);
}

/// `sys_icache_invalidate` over `start .. start + len` (Apple silicon; x86-64 keeps instruction
/// fetch coherent with stores, so the caller skips it there).
#[cfg(target_arch = "aarch64")]
pub(super) fn invalidate_icache(start: *const u8, len: usize) {
    // SAFETY: the range is mapped (the code just written); the call performs cache maintenance
    // only and writes no memory.
    unsafe { sys_icache_invalidate(start as *mut std::ffi::c_void, len) };
}

/// The running kernel's release (`uname -r`, e.g. `23.4.0`), without its NUL; `None` if
/// `uname` fails. Read on x86-64 Macs, where `MAP_JIT` depends on the macOS version.
#[cfg(not(target_arch = "aarch64"))]
pub(super) fn kernel_release() -> Option<Vec<u8>> {
    let mut names = std::mem::MaybeUninit::<libc::utsname>::zeroed();
    // SAFETY: uname only writes the struct it is given.
    if unsafe { libc::uname(names.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: zero-initialised, then filled by a successful uname.
    let names = unsafe { names.assume_init() };
    Some(
        names
            .release
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect(),
    )
}
