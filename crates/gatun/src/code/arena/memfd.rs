//! The arena's chunks on Linux as `memfd`s: a new memfd, a chunk's two views of it (the
//! read-execute one near gatun's text, `map_near_text`), their unmapping, and the mapping
//! again of reused granules' pages.
//!
//! **Reused granules** (every target but x86). An emulator that translates guest code, such as
//! `qemu-aarch64` in user mode, notices self-modifying code only through writes to the guest
//! page it translated and treats `ic ivau` / `__clear_cache` as no-ops, so new code written
//! through the read-write view into granules that held older code would run the old code's
//! translation. Real AArch64 hardware needs nothing more than the cache flush (its data caches
//! are physically indexed, and `__clear_cache` on the read-execute range cleans and
//! invalidates by virtual address). So when granules that may have been executed since their
//! page was last mapped (a per-granule *dirty* bitmap, set while owned and kept after the
//! free) are allocated again, the arena maps the page(s) covering them again, under its lock
//! and before the new code is written: `mmap(MAP_FIXED | MAP_SHARED, PROT_READ | PROT_EXEC)`
//! of the same memfd offset. qemu's `target_mmap` drops every translation of the range
//! (`tb_invalidate_phys_range`, or `page_set_flags` with `PAGE_RESET` in newer versions), and
//! nothing executes the new granules before their address is handed out, so the first call
//! translates the new bytes. Remapping before the write (rather than after it) lets the
//! remap and the dirty-bit update happen together under the lock, with the copy outside it as
//! before; either order is correct, since nothing runs the granules in between. The page's
//! other granules keep running throughout: Linux performs a `MAP_FIXED` replacement under
//! the mmap write lock (the old mapping is detached and the new one inserted in one
//! operation; a fault on the range waits for the lock and then finds the new mapping, never a
//! hole), and the new mapping maps the same memfd pages, so every address reads the same
//! bytes before and after (and the mapping merges back with its neighbours, so
//! `/proc/self/maps` keeps one line per view). On hardware the remap
//! costs one system call per reuse of a dirty page and nothing else. For it, each chunk keeps
//! its memfd open (one file descriptor per chunk). If the `mmap` fails twice (an out-of-memory
//! kernel), the chunk is retired (see the `fork` module): no new code goes into it. A failing `MAP_FIXED` can
//! leave the range unmapped on some kernels, which the second try repairs when it succeeds;
//! if both fail and the pages are gone while other granules on them hold live code (checked
//! with `madvise`), the process aborts with a message rather than fault in a later call.
//! On x86 (coherent instruction fetch) no memfd stays open and no extra system call is made;
//! x86 code run under a user-mode emulator on another architecture (`qemu-x86_64`) would need
//! the same remap, which is not done.
//!
//! # Invariants
//! - On targets other than x86 ([`REMAP_REUSED`]), a chunk's `fd` is its memfd, open for as
//!   long as the chunk is mapped; a granule's `dirty` bit is set whenever it is owned, and may
//!   be cleared only when its page of the read-execute view is mapped again (under the arena
//!   lock, before new code is written into the granules that caused it). A granule handed out
//!   for new code whose dirty bit was set has had its page mapped again since its last owner
//!   was freed.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::fork::register_fork_handlers;
use super::{Chunk, ARENA_OFF, GRANULE};
use crate::code::bitmap::set_bits;
use crate::code::unix::{map_near_text, page_size, unmap_near_text};

/// Whether granules that held code before get their read-execute page(s) mapped again
/// before new code goes into them (see "Reused granules" in the module documentation):
/// every target but x86, whose instruction fetch is coherent with the stores through the
/// read-write view. On x86 no memfd stays open and no extra system call is made.
pub(super) const REMAP_REUSED: bool = !cfg!(any(target_arch = "x86_64", target_arch = "x86"));

/// What a Linux chunk keeps besides its views.
pub(super) struct ChunkState {
    /// With [`REMAP_REUSED`]: one bit per granule, set while the granule may have been
    /// executed since its page of the read-execute view was last mapped (every owned
    /// granule is dirty; a freed one stays dirty until its page is mapped again). Empty
    /// otherwise.
    pub(super) dirty: Vec<u64>,
    /// With [`REMAP_REUSED`]: the chunk's memfd, kept open to map pages of the
    /// read-execute view again (-1 otherwise).
    pub(super) fd: i32,
    /// Between the fork handlers: the memfd holding the child's copy (-1 otherwise).
    pub(super) fork_fd: i32,
}

/// Page ranges of read-execute views mapped again for reused granules (for tests).
static REMAPS: AtomicUsize = AtomicUsize::new(0);

/// Page ranges of read-execute views mapped again since the process started (0 without
/// [`REMAP_REUSED`]).
#[cfg(all(test, gatun_executes))]
pub(super) fn remaps() -> usize {
    REMAPS.load(Ordering::Relaxed)
}

/// Cleared once `memfd_create` has rejected `MFD_EXEC` (kernels before 6.3).
static USE_MFD_EXEC: AtomicBool = AtomicBool::new(true);

/// Whether the error just reported by the OS will not go away by retrying (a missing
/// system call, or a policy refusing it).
fn permanent_error() -> bool {
    matches!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::ENOSYS | libc::EPERM | libc::EACCES)
    )
}

/// A new `memfd` of `len` bytes, close-on-exec and (where the kernel knows the flag)
/// explicitly executable; -1 on failure.
pub(super) fn new_memfd(len: usize) -> i32 {
    let mut flags = libc::MFD_CLOEXEC;
    if USE_MFD_EXEC.load(Ordering::Relaxed) {
        flags |= libc::MFD_EXEC;
    }
    // SAFETY: a NUL-terminated name; no other preconditions.
    let mut fd = unsafe { libc::memfd_create(c"gatun-code".as_ptr(), flags) };
    if fd < 0
        && flags & libc::MFD_EXEC != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL)
    {
        USE_MFD_EXEC.store(false, Ordering::Relaxed);
        // SAFETY: as above.
        fd = unsafe { libc::memfd_create(c"gatun-code".as_ptr(), libc::MFD_CLOEXEC) };
    }
    if fd < 0 {
        return -1;
    }
    // SAFETY: `fd` is a fresh memfd.
    if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
        // SAFETY: our fd.
        unsafe { libc::close(fd) };
        return -1;
    }
    fd
}

/// Maps a new chunk of `len` bytes (a multiple of the page size, zero-filled; its pages are
/// faulted in as code is written): `(rx, rw, state)`, the state's `fd` the memfd kept open
/// with [`REMAP_REUSED`] (else closed, -1) and no granule dirty, or `None` if the OS refuses
/// (for good: [`ARENA_OFF`] is set).
pub(super) fn map_chunk(len: usize) -> Option<(*mut u8, *mut u8, ChunkState)> {
    register_fork_handlers();
    let fd = new_memfd(len);
    if fd < 0 {
        if permanent_error() {
            ARENA_OFF.store(true, Ordering::Relaxed);
        }
        return None;
    }
    let close = || {
        // SAFETY: `fd` is ours; the mappings keep the memory alive.
        unsafe { libc::close(fd) };
    };
    // SAFETY: a new shared mapping of the memfd, no address hint.
    let rw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if rw == libc::MAP_FAILED {
        close();
        return None;
    }
    let rx = map_near_text(len, libc::PROT_READ | libc::PROT_EXEC, libc::MAP_SHARED, fd);
    if rx == libc::MAP_FAILED {
        if permanent_error() {
            ARENA_OFF.store(true, Ordering::Relaxed);
        }
        close();
        // SAFETY: the mapping created above; nothing refers to it.
        unsafe { libc::munmap(rw, len) };
        return None;
    }
    let state = if REMAP_REUSED {
        ChunkState {
            dirty: vec![0; len / GRANULE / 64],
            fd,
            fork_fd: -1,
        }
    } else {
        close();
        ChunkState {
            dirty: Vec::new(),
            fd: -1,
            fork_fd: -1,
        }
    };
    Some((rx.cast(), rw.cast(), state))
}

/// Unmaps both views of a chunk removed from the arena and closes its memfd (if kept).
pub(super) fn unmap_chunk(rx: usize, c: &Chunk) {
    // SAFETY: both views belong to a chunk that has been removed from the arena and owns
    // no granule: nothing refers to them any more. The read-execute view was made by
    // map_near_text.
    unsafe {
        unmap_near_text(rx as *mut u8, c.len);
        libc::munmap(c.rw.cast(), c.len);
        if c.os.fd >= 0 {
            libc::close(c.os.fd);
        }
    }
}

/// Called under the arena lock (or before a new chunk is added to the arena) when granules
/// `i..i + n` of chunk `c` (read-execute view at `rx`) have just been taken for new code,
/// before it is written. With [`REMAP_REUSED`]: if any of them may have been executed since
/// its page was last mapped, maps the page(s) covering them again (`MAP_FIXED`, same memfd
/// offset, same protection and flags), so that an emulator drops its translations of the old
/// code; the granules then marked dirty are the pages' owned ones plus the new ones. `false` if the `mmap`
/// failed twice (the second try restores the pages should the failed call have left
/// them unmapped); if after that the pages are unmapped while other granules on them hold
/// live code, the process aborts with a message (see `lost_live_code`).
pub(super) fn claim(rx: usize, c: &mut Chunk, i: usize, n: usize) -> bool {
    if !REMAP_REUSED {
        return true;
    }
    if any_set(&c.os.dirty, i, n) {
        let page = page_size();
        let start = (i * GRANULE) / page * page;
        let end = ((i + n) * GRANULE).next_multiple_of(page).min(c.len);
        let map = || {
            // SAFETY: replaces whole pages of this chunk's read-execute view by a mapping
            // of the same memfd pages with the same protection and flags: the bytes at
            // every address stay the same, and the kernel swaps the mappings under its
            // mmap lock (see "Reused granules" in the module documentation), so code
            // running in other granules of those pages is not disturbed.
            let p = unsafe {
                libc::mmap(
                    (rx + start) as *mut libc::c_void,
                    end - start,
                    libc::PROT_READ | libc::PROT_EXEC,
                    libc::MAP_SHARED | libc::MAP_FIXED,
                    c.os.fd,
                    start as libc::off_t,
                )
            };
            p != libc::MAP_FAILED
        };
        if !map() && !map() {
            // A failed MAP_FIXED may have left the range unmapped; other granules of these
            // pages may hold live code, whose next call would then fault. `madvise` fails
            // with ENOMEM when part of the range is not mapped.
            // SAFETY: MADV_NORMAL only resets the paging advice; it changes no mapping.
            let mapped = unsafe {
                libc::madvise(
                    (rx + start) as *mut libc::c_void,
                    end - start,
                    libc::MADV_NORMAL,
                )
            } == 0;
            let live =
                (start / GRANULE..end / GRANULE).any(|g| c.bits[g / 64] >> (g % 64) & 1 != 0);
            if !mapped && live {
                lost_live_code(rx + start, end - start);
            }
            return false;
        }
        REMAPS.fetch_add(1, Ordering::Relaxed);
        for g in start / GRANULE..end / GRANULE {
            let owned = c.bits[g / 64] >> (g % 64) & 1 != 0;
            set_bits(&mut c.os.dirty, g, 1, owned);
        }
    }
    set_bits(&mut c.os.dirty, i, n, true);
    true
}

/// Whether any of bits `start..start + n` is set.
fn any_set(bits: &[u64], start: usize, n: usize) -> bool {
    (start..start + n).any(|g| bits[g / 64] >> (g % 64) & 1 != 0)
}

/// The kernel failed to restore pages of a read-execute view that still hold live code:
/// no call into it can be made safe any more, so the process stops with a message (as an
/// upcall that cannot return does) instead of faulting later in foreign code.
#[cold]
#[inline(never)]
fn lost_live_code(address: usize, len: usize) -> ! {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "gatun: the code arena could not map {len} bytes of generated code at {address:#x} \
         again ({}); aborting the process (live stubs there can no longer run)",
        std::io::Error::last_os_error()
    );
    std::process::abort()
}
