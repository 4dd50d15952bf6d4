//! The arena's chunks as `memfd`s: a new memfd, a chunk's two views of it, and their unmapping.

use std::sync::atomic::{AtomicBool, Ordering};

use super::fork::register_fork_handlers;
use super::{Chunk, ARENA_OFF, CHUNKS_MAPPED, REMAP_REUSED};
use crate::code::unix::{map_near_text, unmap_near_text};
use crate::code::MAPPED;

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
/// faulted in as code is written): `(rx, rw, fd)`, `fd` the memfd kept open with
/// [`REMAP_REUSED`] (else closed, -1), or `None` if the OS refuses (for good:
/// [`ARENA_OFF`] is set).
pub(super) fn map_chunk(len: usize) -> Option<(*mut u8, *mut u8, i32)> {
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
    let kept = if REMAP_REUSED {
        fd
    } else {
        close();
        -1
    };
    MAPPED.fetch_add(len, Ordering::Relaxed);
    CHUNKS_MAPPED.fetch_add(1, Ordering::Relaxed);
    Some((rx.cast(), rw.cast(), kept))
}

/// Unmaps both views of a chunk removed from the arena and closes its memfd (if kept).
pub(super) fn unmap_chunk(rx: usize, c: &Chunk) {
    // SAFETY: both views belong to a chunk that has been removed from the arena and owns
    // no granule: nothing refers to them any more. The read-execute view was made by
    // map_near_text.
    unsafe {
        unmap_near_text(rx as *mut u8, c.len);
        libc::munmap(c.rw.cast(), c.len);
        if c.fd >= 0 {
            libc::close(c.fd);
        }
    }
    MAPPED.fetch_sub(c.len, Ordering::Relaxed);
}
