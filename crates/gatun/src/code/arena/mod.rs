//! The Linux code arena: 64 KiB chunks ([`CHUNK_BYTES`]), each a `memfd` mapped twice — a
//! read-execute view near gatun's text and a read-write view elsewhere (see the parent
//! module's documentation) — allocated in 16-byte granules ([`GRANULE`]) tracked by one bitmap
//! per chunk, behind one mutex. The chunks' mapping is in `memfd`, the `fork` handlers in
//! `fork`.
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
//! bytes before and after (measured natively: 200,000 remaps of a page while two threads
//! called code in it 1.8 billion times, no fault or wrong result; and the mapping merges back
//! with its neighbours, so `/proc/self/maps` keeps one line per view). On hardware the remap
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
//! - Every chunk in `ARENA` is a `len`-byte `memfd` mapped read-execute at `rx` and read-write at
//!   `rw`, both owned by the arena; its bitmap has one bit per granule, set while an
//!   `ExecutableCode` owns the granule. A granule is written only through `rw`, and only while
//!   it is owned by exactly one `ExecutableCode` that has not yet handed out its address, or
//!   when that owner drops (nothing may call it any more), or (all of it) by the fork handler
//!   in the child, with the same bytes.
//! - A chunk is unmapped only when no granule is owned, i.e. no `ExecutableCode` points into it.
//! - A `retired` chunk may be shared with another process (or, on targets other than x86, could
//!   not have a page mapped again): it is never allocated from nor written again.
//! - On targets other than x86, a chunk's `fd` is its memfd, open for as long as the chunk is
//!   mapped; a granule's `dirty` bit is set whenever it is owned, and may be cleared only when
//!   its page of the read-execute view is mapped again (under the arena lock, before new code
//!   is written into the granules that caused it). A granule handed out for new code whose
//!   dirty bit was set has had its page mapped again since its last owner was freed.

mod fork;
mod memfd;
#[cfg(all(test, gatun_executes))]
mod tests;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::bitmap::{find_clear_run, set_bits};
use super::unix::{flush_icache, page_size};
use super::{Backing, ExecutableCode, CHUNK_BYTES, GRANULE};
pub(super) use fork::register_fork_handlers;
use memfd::{map_chunk, unmap_chunk};

/// What freed granules are filled with, so that a call through a stale address traps:
/// `int3` on x86-64; elsewhere zeros (`udf #0` on AArch64). Granules never used are the
/// memfd's zeros: filling a new chunk up front costs the page faults of all of its pages at
/// the first link that maps it, so only freed granules are filled.
const TRAP: u8 = if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
    0xCC
} else {
    0
};

/// Whether granules that held code before get their read-execute page(s) mapped again
/// before new code goes into them (see "Reused granules" in the module documentation):
/// every target but x86, whose instruction fetch is coherent with the stores through the
/// read-write view. On x86 no memfd stays open and no extra system call is made.
const REMAP_REUSED: bool = !cfg!(any(target_arch = "x86_64", target_arch = "x86"));

struct Chunk {
    rw: *mut u8,
    len: usize,
    bits: Vec<u64>,
    /// With [`REMAP_REUSED`]: one bit per granule, set while the granule may have been
    /// executed since its page of the read-execute view was last mapped (every owned
    /// granule is dirty; a freed one stays dirty until its page is mapped again). Empty
    /// otherwise.
    dirty: Vec<u64>,
    /// With [`REMAP_REUSED`]: the chunk's memfd, kept open to map pages of the
    /// read-execute view again (-1 otherwise).
    fd: i32,
    used: usize,
    /// Possibly shared with another process, or a page of it could not be mapped again
    /// (see the module documentation): never allocated from nor written again.
    retired: bool,
    /// Between the fork handlers: the memfd holding the child's copy (-1 otherwise).
    fork_fd: i32,
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

/// Set once the OS has refused the arena for good (no `memfd_create`, or a policy that
/// forbids executing it): code then goes straight to its own mapping.
static ARENA_OFF: AtomicBool = AtomicBool::new(false);

/// Chunks mapped since the process started (for tests).
static CHUNKS_MAPPED: AtomicUsize = AtomicUsize::new(0);

pub(super) fn chunks_mapped() -> usize {
    CHUNKS_MAPPED.load(Ordering::Relaxed)
}

/// Page ranges of read-execute views mapped again for reused granules (for tests).
static REMAPS: AtomicUsize = AtomicUsize::new(0);

/// Page ranges of read-execute views mapped again since the process started (0 without
/// [`REMAP_REUSED`]).
#[cfg(test)]
pub(super) fn remaps() -> usize {
    REMAPS.load(Ordering::Relaxed)
}

fn lock() -> MutexGuard<'static, Arena> {
    ARENA.lock().unwrap_or_else(|e| e.into_inner())
}

/// With [`REMAP_REUSED`], called under the arena lock when granules `i..i + n` of chunk
/// `c` (read-execute view at `rx`) have just been taken for new code, before it is
/// written: if any of them may have been executed since its page was last mapped, maps
/// the page(s) covering them again (`MAP_FIXED`, same memfd offset, same protection and
/// flags), so that an emulator drops its translations of the old code; the granules
/// then marked dirty are the pages' owned ones plus the new ones. `false` if the `mmap`
/// failed twice (the second try restores the pages should the failed call have left
/// them unmapped); if after that the pages are unmapped while other granules on them hold
/// live code, the process aborts with a message (see `lost_live_code`).
fn fresh_view(rx: usize, c: &mut Chunk, i: usize, n: usize) -> bool {
    if any_set(&c.dirty, i, n) {
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
                    c.fd,
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
            set_bits(&mut c.dirty, g, 1, owned);
        }
    }
    set_bits(&mut c.dirty, i, n, true);
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

/// Takes `n` granules from chunk `rx` of `a`, if it has them: `(code address, rw address)`.
fn take(a: &mut Arena, rx: usize, n: usize) -> Option<(usize, *mut u8)> {
    let c = a.chunks.get_mut(&rx)?;
    if c.retired || c.used + n > c.len / GRANULE {
        return None;
    }
    let i = find_clear_run(&c.bits, n)?;
    set_bits(&mut c.bits, i, n, true);
    if REMAP_REUSED && !fresh_view(rx, c, i, n) {
        // the page(s) could not be mapped again: the old code may still be what runs
        // there, so the chunk takes no new code
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
        unmap_chunk(rx, &c);
    }
    let (rx, rw) = match found {
        Some(f) => f,
        None => {
            // Map outside the lock, then insert the chunk with its first `n` granules
            // already taken (so nothing can fail between mapping and allocating).
            let len = (n * GRANULE)
                .max(CHUNK_BYTES)
                .checked_next_multiple_of(page_size().max(GRANULE * 64))?;
            let (rx, rw, fd) = map_chunk(len)?;
            let mut bits = vec![0; len / GRANULE / 64];
            set_bits(&mut bits, 0, n, true);
            let dirty = if REMAP_REUSED {
                bits.clone()
            } else {
                Vec::new()
            };
            let mut a = lock();
            a.chunks.insert(
                rx as usize,
                Chunk {
                    rw,
                    len,
                    bits,
                    dirty,
                    fd,
                    used: n,
                    retired: false,
                    fork_fd: -1,
                },
            );
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
        unmap_chunk(rx, &c);
    }
}

/// Number of chunks mapped (for the x86-64 tests, which run code).
#[cfg(all(test, gatun_backend = "x86_64_sysv"))]
pub(super) fn chunks() -> usize {
    lock().chunks.len()
}
