//! The code arena (Linux and Windows): 64 KiB chunks ([`CHUNK_BYTES`]), each one block of
//! shared memory mapped twice — a read-execute view that callers jump into and a read-write
//! view, elsewhere, through which code is written (see the parent module's documentation) —
//! allocated in 16-byte granules ([`GRANULE`]) tracked by one bitmap per chunk, behind one
//! mutex. The allocation, the `int3` fill of freed granules and the unmapping of empty chunks
//! (one spare kept) are written once, here; what differs between the systems is behind a small
//! module per system, `sys`:
//! - `memfd` (Linux): a chunk is a `memfd`, its read-execute view placed near gatun's text; on
//!   targets other than x86, granules reused for new code get their page of the read-execute
//!   view mapped again first (see "Reused granules" there). The `fork` handlers, which give a
//!   child its own copy of every chunk, are in `fork`.
//! - `section` (Windows): a chunk is a pagefile-backed section (`CreateFileMappingW`) with two
//!   views (`MapViewOfFile`). Windows has no `fork`.
//!
//! Each `sys` module provides `ChunkState` (what it keeps per chunk), `map_chunk(len)` (a new
//! chunk's read-execute and read-write views, or `None`, setting [`ARENA_OFF`] when the
//! refusal is for good), `claim(rx, chunk, i, n)` (called under the lock when granules
//! `i..i + n` are taken for new code, before it is written; `false` retires the chunk) and
//! `unmap_chunk(rx, chunk)`.
//!
//! # Invariants
//! - Every chunk in `ARENA` is `len` bytes of shared memory mapped read-execute at `rx` and
//!   read-write at `rw`, both owned by the arena; its bitmap has one bit per granule, set while
//!   an `ExecutableCode` owns the granule. A granule is written only through `rw`, and only
//!   while it is owned by exactly one `ExecutableCode` that has not yet handed out its address,
//!   or when that owner drops (nothing may call it any more), or (all of it) by the fork
//!   handler in the child, with the same bytes.
//! - A chunk is unmapped only when no granule is owned, i.e. no `ExecutableCode` points into it.
//! - A `retired` chunk may be shared with another process (or, on Linux targets other than
//!   x86, could not have a page mapped again): it is never allocated from nor written again.
//! - The `sys` module's own invariants (`memfd`: the chunk's file descriptor and dirty bits)
//!   hold for every chunk's `os` state.

#[cfg(target_os = "linux")]
mod fork;
#[cfg(target_os = "linux")]
mod memfd;
#[cfg(windows)]
mod section;
#[cfg(all(test, gatun_executes))]
mod tests;

#[cfg(target_os = "linux")]
use memfd as sys;
#[cfg(windows)]
use section as sys;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::bitmap::{find_clear_run, set_bits};
use super::os::{flush_icache, page_size};
use super::{Backing, ExecutableCode, CHUNK_BYTES, GRANULE, MAPPED};
#[cfg(target_os = "linux")]
pub(super) use fork::register_fork_handlers;

/// What freed granules are filled with, so that a call through a stale address traps:
/// `int3` on x86-64; elsewhere zeros (`udf #0` on AArch64, an illegal instruction on RISC-V,
/// whose all-zero parcel is defined so). Granules never used hold the
/// zeros of the fresh chunk, not `TRAP`: filling a new chunk up front costs the page faults
/// of all of its pages at the first link that maps it, so only freed granules are filled.
const TRAP: u8 = if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
    0xCC
} else {
    0
};

struct Chunk {
    rw: *mut u8,
    len: usize,
    bits: Vec<u64>,
    used: usize,
    /// Possibly shared with another process, or a page of it could not be mapped again
    /// (see the module invariants): never allocated from nor written again.
    retired: bool,
    /// What the system's module keeps for the chunk (nothing on Windows).
    #[cfg_attr(windows, allow(dead_code))]
    os: sys::ChunkState,
}

struct Arena {
    /// Chunks by the address of their read-execute view.
    chunks: BTreeMap<usize, Chunk>,
    /// An empty chunk kept mapped (its key).
    spare: Option<usize>,
    /// The chunk allocated from last (tried first).
    last: usize,
}

// SAFETY: the raw pointers are addresses of mappings the arena owns; access to them is
// serialised by the mutex (bitmaps) or by granule ownership (code bytes).
unsafe impl Send for Arena {}

static ARENA: Mutex<Arena> = Mutex::new(Arena {
    chunks: BTreeMap::new(),
    spare: None,
    last: 0,
});

/// Set once the OS has refused the arena for good (no `memfd_create`, a policy that forbids
/// executing the shared memory, or a system without executable views): code then goes
/// straight to its own mapping.
static ARENA_OFF: AtomicBool = AtomicBool::new(false);

/// Chunks mapped since the process started (for tests).
static CHUNKS_MAPPED: AtomicUsize = AtomicUsize::new(0);

pub(super) fn chunks_mapped() -> usize {
    CHUNKS_MAPPED.load(Ordering::Relaxed)
}

fn lock() -> MutexGuard<'static, Arena> {
    ARENA.lock().unwrap_or_else(|e| e.into_inner())
}

/// Maps a new chunk of `len` bytes and counts it: `(rx, rw, state)`, or `None` (see
/// `sys::map_chunk`).
fn map(len: usize) -> Option<(*mut u8, *mut u8, sys::ChunkState)> {
    let mapped = sys::map_chunk(len)?;
    MAPPED.fetch_add(len, Ordering::Relaxed);
    CHUNKS_MAPPED.fetch_add(1, Ordering::Relaxed);
    Some(mapped)
}

/// Unmaps a chunk removed from the arena (no granule owned).
fn unmap(rx: usize, c: &Chunk) {
    sys::unmap_chunk(rx, c);
    MAPPED.fetch_sub(c.len, Ordering::Relaxed);
}

/// Takes `n` granules from chunk `rx` of `a`, if it has them: `(code address, rw address)`.
fn take(a: &mut Arena, rx: usize, n: usize) -> Option<(usize, *mut u8)> {
    let c = a.chunks.get_mut(&rx)?;
    if c.retired || c.used + n > c.len / GRANULE {
        return None;
    }
    let i = find_clear_run(&c.bits, n)?;
    set_bits(&mut c.bits, i, n, true);
    if !sys::claim(rx, c, i, n) {
        // the system cannot make the granules safe for new code (on Linux: the old code may
        // still be what runs there), so the chunk takes no new code
        set_bits(&mut c.bits, i, n, false);
        c.retired = true;
        return None;
    }
    c.used += n;
    a.last = rx;
    if a.spare == Some(rx) {
        a.spare = None;
    }
    // SAFETY: i + n granules lie inside the chunk's read-write view.
    Some((rx + i * GRANULE, unsafe { c.rw.add(i * GRANULE) }))
}

/// Copies `code` into free granules, mapping a new chunk if none has room. `None` if no
/// chunk can be mapped (the caller falls back to a mapping of its own).
pub(super) fn allocate(code: &[u8]) -> Option<ExecutableCode> {
    if ARENA_OFF.load(Ordering::Relaxed) {
        return None;
    }
    let n = code.len().div_ceil(GRANULE);
    let (found, stale) = {
        let mut a = lock();
        // A spare retired at a fork (its copy for the child failed) is never allocated
        // from again: unmap it, so that the spare mechanism works again.
        let stale = match a.spare {
            Some(rx) if a.chunks.get(&rx).is_some_and(|c| c.retired) => {
                a.spare = None;
                a.chunks.remove(&rx).map(|c| (rx, c))
            }
            _ => None,
        };
        let last = a.last;
        let found = take(&mut a, last, n).or_else(|| {
            let keys: Vec<usize> = a.chunks.keys().copied().collect();
            keys.into_iter().find_map(|rx| take(&mut a, rx, n))
        });
        (found, stale)
    };
    if let Some((rx, c)) = stale {
        unmap(rx, &c);
    }
    let (rx, rw) = match found {
        Some(f) => f,
        None => {
            // Map outside the lock, then insert the chunk with its first `n` granules
            // already taken (so nothing can fail between mapping and allocating).
            let len = (n * GRANULE)
                .max(CHUNK_BYTES)
                .checked_next_multiple_of(page_size().max(GRANULE * 64))?;
            let (rx, rw, os) = map(len)?;
            let mut bits = vec![0; len / GRANULE / 64];
            set_bits(&mut bits, 0, n, true);
            let mut chunk = Chunk {
                rw,
                len,
                bits,
                used: n,
                retired: false,
                os,
            };
            if !sys::claim(rx as usize, &mut chunk, 0, n) {
                unmap(rx as usize, &chunk);
                return None;
            }
            let mut a = lock();
            a.chunks.insert(rx as usize, chunk);
            a.last = rx as usize;
            (rx as usize, rw)
        }
    };
    // SAFETY: the n granules at `rw` are owned by the code being built and nothing calls
    // them yet (invariant); code.len() <= n * GRANULE.
    unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), rw, code.len()) };
    flush_icache(rx as *const u8, code.len());
    Some(ExecutableCode {
        ptr: rx as *mut u8,
        code_len: code.len(),
        backing: Backing::Arena { rw, granules: n },
        #[cfg(windows)]
        function_table: None,
    })
}

/// Returns the `n` granules at `ptr` (written through `rw`) to their chunk.
pub(super) fn free(ptr: *mut u8, rw: *mut u8, n: usize) {
    let addr = ptr as usize;
    let mut a = lock();
    let Some((&rx, c)) = a.chunks.range_mut(..=addr).next_back() else {
        return;
    };
    let i = (addr - rx) / GRANULE;
    if !c.retired {
        // SAFETY: the granules are still owned by the code being dropped, which nothing
        // may call any more; the chunk is not shared with another process. Under the lock,
        // so that a fork's copy sees the granules either live or filled.
        unsafe { std::ptr::write_bytes(rw, TRAP, n * GRANULE) };
    }
    set_bits(&mut c.bits, i, n, false);
    c.used -= n;
    if c.used != 0 {
        return;
    }
    if !c.retired && c.len == CHUNK_BYTES && a.spare.is_none() {
        a.spare = Some(rx);
        return;
    }
    let c = a.chunks.remove(&rx);
    if a.spare == Some(rx) {
        a.spare = None;
    }
    drop(a);
    if let Some(c) = c {
        unmap(rx, &c);
    }
}

/// Number of chunks mapped (for the tests, which run code).
#[cfg(all(test, gatun_executes))]
pub(super) fn chunks() -> usize {
    lock().chunks.len()
}
