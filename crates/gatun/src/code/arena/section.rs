//! The arena's chunks on Windows: a pagefile-backed section (`CreateFileMappingW` with no
//! file, `PAGE_EXECUTE_READWRITE`, committed whole) mapped twice with `MapViewOfFile` — a
//! read-write view (`FILE_MAP_WRITE`) through which code is written, and an execute-read view
//! (`FILE_MAP_READ | FILE_MAP_EXECUTE`) that callers jump into. As on Linux, W^X holds per
//! view and no view ever changes protection, so freeing or writing granules never touches the
//! protection of a live neighbour. The section handle is closed once both views exist (the
//! views keep the section alive); unmapping both views frees it. Each view reserves its size
//! rounded up to the 64 KiB allocation granularity, so a 64 KiB chunk takes 128 KiB of address
//! space and 64 KiB of committed memory.
//!
//! Where the section or its execute-read view is refused for a reason that will not go away
//! (anything but a shortage of memory or commit: an access-denied dynamic-code policy, or a
//! system that does not support executable views), [`ARENA_OFF`] is set and code goes to
//! regions of its own (the parent module's `windows` module).
//!
//! Nothing is done when granules are reused: x86-64 keeps instruction fetch coherent with the
//! stores through the read-write view, and on other architectures the arena calls
//! `FlushInstructionCache` over the new code before its address is handed out.
//!
//! # Invariants
//! - A chunk's two views map the same section, `len` bytes each, made by [`map_chunk`] and
//!   unmapped only by [`unmap_chunk`].

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use super::{Chunk, ARENA_OFF};

/// What a Windows chunk keeps besides its views: nothing (the section handle is closed once
/// both views are mapped).
pub(super) struct ChunkState;

const PAGE_EXECUTE_READWRITE: u32 = 0x40;
const FILE_MAP_WRITE: u32 = 0x2;
const FILE_MAP_READ: u32 = 0x4;
const FILE_MAP_EXECUTE: u32 = 0x20;
/// `INVALID_HANDLE_VALUE`: a section backed by the paging file.
const NO_FILE: *mut c_void = -1isize as *mut c_void;

/// System errors (winerror.h) that say memory or commit is short for now, not that sections
/// or executable views are refused: `ERROR_NOT_ENOUGH_MEMORY`, `ERROR_OUTOFMEMORY`,
/// `ERROR_NO_SYSTEM_RESOURCES`, `ERROR_WORKING_SET_QUOTA`, `ERROR_COMMITMENT_LIMIT`,
/// `ERROR_NOT_ENOUGH_QUOTA`.
const TRANSIENT: [i32; 6] = [8, 14, 1450, 1453, 1455, 1816];

#[link(name = "kernel32")]
extern "system" {
    fn CreateFileMappingW(
        file: *mut c_void,
        attributes: *mut c_void,
        protect: u32,
        size_high: u32,
        size_low: u32,
        name: *const u16,
    ) -> *mut c_void;
    fn MapViewOfFile(
        section: *mut c_void,
        access: u32,
        offset_high: u32,
        offset_low: u32,
        size: usize,
    ) -> *mut c_void;
    fn UnmapViewOfFile(base: *const c_void) -> i32;
    fn CloseHandle(handle: *mut c_void) -> i32;
}

/// Sets [`ARENA_OFF`] unless the error just reported by the system is a shortage that may go
/// away ([`TRANSIENT`]).
fn off_unless_transient(error: &std::io::Error) {
    if !error.raw_os_error().is_some_and(|e| TRANSIENT.contains(&e)) {
        ARENA_OFF.store(true, Ordering::Relaxed);
    }
}

/// Maps a new chunk of `len` bytes (a multiple of the page size, zero-filled): `(rx, rw,
/// state)`, or `None` if the system refuses (for good: [`ARENA_OFF`] is set).
pub(super) fn map_chunk(len: usize) -> Option<(*mut u8, *mut u8, ChunkState)> {
    let size = len as u64;
    // SAFETY: a new unnamed section backed by the paging file, default security; no memory
    // of ours is touched.
    let section = unsafe {
        CreateFileMappingW(
            NO_FILE,
            std::ptr::null_mut(),
            PAGE_EXECUTE_READWRITE,
            (size >> 32) as u32,
            size as u32,
            std::ptr::null(),
        )
    };
    if section.is_null() {
        off_unless_transient(&std::io::Error::last_os_error());
        return None;
    }
    // SAFETY: two new views of the section just made, at addresses of the system's choosing.
    let (rw, rx) = unsafe {
        let rw = MapViewOfFile(section, FILE_MAP_WRITE, 0, 0, len);
        let rx = if rw.is_null() {
            rw
        } else {
            MapViewOfFile(section, FILE_MAP_READ | FILE_MAP_EXECUTE, 0, 0, len)
        };
        (rw, rx)
    };
    let error = std::io::Error::last_os_error();
    // SAFETY: our section handle; the views (if any) keep the section alive.
    unsafe { CloseHandle(section) };
    if rx.is_null() {
        if !rw.is_null() {
            // SAFETY: the view mapped above; nothing refers to it.
            unsafe { UnmapViewOfFile(rw) };
        }
        off_unless_transient(&error);
        return None;
    }
    Some((rx.cast(), rw.cast(), ChunkState))
}

/// Called under the arena lock when granules are taken for new code: nothing to do on
/// Windows (see the module documentation); always `true`.
pub(super) fn claim(_rx: usize, _c: &mut Chunk, _i: usize, _n: usize) -> bool {
    true
}

/// Unmaps both views of a chunk removed from the arena (which frees its section).
pub(super) fn unmap_chunk(rx: usize, c: &Chunk) {
    // SAFETY: both views belong to a chunk that has been removed from the arena and owns no
    // granule: nothing refers to them any more.
    unsafe {
        UnmapViewOfFile(rx as *const c_void);
        UnmapViewOfFile(c.rw.cast());
    }
}
