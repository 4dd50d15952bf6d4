//! Executable memory for generated machine code (compiled downcall stubs, upcall stubs).
//!
//! **The code arena.** Code lives in 64 KiB chunks ([`CHUNK_BYTES`]; a chunk is larger when one
//! piece of code needs more) allocated in 16-byte granules ([`GRANULE`]), so a 27-byte upcall
//! stub takes 32 bytes and a 230-byte downcall stub 240. On Linux a chunk is a `memfd` mapped
//! twice: a read-execute view placed near gatun's own text (see `map_near_text`) that
//! callers jump into, and a read-write view, elsewhere, through which code is written. W^X holds
//! per mapping: no address is ever both writable and executable, and no mapping ever changes
//! protection, so a live piece of code never becomes non-executable while a neighbour in the same
//! chunk is written or freed. Dropping an [`ExecutableCode`] fills its granules with `int3` (a
//! call through a stale address traps) and returns them to the chunk; a chunk whose granules are all free is unmapped (one empty chunk
//! is kept as a spare so that linking and dropping one signature in a loop does not map and
//! unmap every time). Where `memfd_create` or the mapping fails (and on Unix targets other
//! than Linux), each piece of code gets its own private mapping instead, mapped read-write,
//! filled, switched to read-execute and never made writable again.
//!
//! The arena's bookkeeping (one bitmap per chunk) is behind one mutex, held only for bitmap
//! work: chunks are mapped and unmapped, and code is copied, outside it.
//!
//! **fork.** A chunk is shared memory, so after `fork` parent and child see each other's writes
//! to it. A `pthread_atfork` handler therefore retires every chunk that exists at the fork, in
//! both processes: a retired chunk's free granules are never handed out again and its freed
//! code is not overwritten (the other process may still run it); only new chunks are
//! allocated from. The handler also takes the arena lock around the fork, so the child never
//! inherits it locked.
//!
//! # Invariants
//! - Every chunk in `ARENA` is a `len`-byte `memfd` mapped read-execute at `rx` and read-write at
//!   `rw`, both owned by the arena; its bitmap has one bit per granule, set while an
//!   `ExecutableCode` owns the granule. A granule is written only through `rw`, and only while
//!   it is owned by exactly one `ExecutableCode` that has not yet handed out its address, or
//!   when that owner drops (nothing may call it any more).
//! - A chunk is unmapped only when no granule is owned, i.e. no `ExecutableCode` points into it.
//! - An `ExecutableCode`'s first `len` bytes at `ptr` are the code it was given, readable and
//!   executable for as long as it lives.
//! - A chunk whose generation differs from `GENERATION` is shared with another process
//!   (created before a fork): it is never allocated from nor written again.

use crate::error::{Error, Result};

/// Allocation unit of the code arena, in bytes (and the alignment of every piece of code).
pub const GRANULE: usize = 16;

/// Size of a code arena chunk, in bytes (larger for code that does not fit).
pub const CHUNK_BYTES: usize = 64 << 10;

/// A block of machine code, read-execute, in the code arena (or in its own mapping where the
/// arena is unavailable; see the [module documentation](self)).
///
/// `Send + Sync` (the code is immutable). Dropping it frees the code, so whoever calls into
/// it must keep it alive. The address is [`GRANULE`]-aligned (16 bytes); the memory taken is
/// the code's length rounded up to 16 bytes.
///
/// ```
/// # #[cfg(all(target_arch = "x86_64", unix))] {
/// use gatun::code::ExecutableCode;
/// let code = ExecutableCode::new(&[0xB8, 42, 0, 0, 0, 0xC3]).unwrap(); // mov eax, 42; ret
/// // SAFETY: the bytes are a complete `extern "C" fn() -> i32`.
/// let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(code.entry()) };
/// assert_eq!(f(), 42);
/// # }
/// ```
#[derive(Debug)]
pub struct ExecutableCode {
    ptr: *mut u8,
    code_len: usize,
    backing: Backing,
}

#[derive(Debug)]
enum Backing {
    /// Granules of an arena chunk: `granules` of them, written through `rw`.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Arena { rw: *mut u8, granules: usize },
    /// A private mapping of its own, `map_len` bytes.
    #[cfg_attr(not(unix), allow(dead_code))]
    Own { map_len: usize },
}

// SAFETY: the code is immutable while this value lives (only its drop writes, through the
// arena's read-write view, after which nothing may call it) and owned by this value; sharing
// its address between threads is sound.
unsafe impl Send for ExecutableCode {}
// SAFETY: as above; no method mutates the code.
unsafe impl Sync for ExecutableCode {}

fn os_error(what: &str) -> Error {
    Error::Unsupported {
        type_name: "executable memory".into(),
        reason: format!("{what} failed: {}", std::io::Error::last_os_error()),
    }
}

/// Bytes of executable mappings gatun currently holds (arena chunks and own mappings), for
/// tests of the memory behaviour. Not part of the stable API.
#[doc(hidden)]
pub fn mapped_code_bytes() -> usize {
    MAPPED.load(std::sync::atomic::Ordering::Relaxed)
}

static MAPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl ExecutableCode {
    /// Copies `code` into the code arena (or a fresh mapping of its own) and returns it
    /// read-execute.
    ///
    /// # Errors
    /// [`Error::InvalidSize`] for empty code; [`Error::SizeOverflow`] for code too large to map;
    /// [`Error::Unsupported`] when the OS refuses the mapping or the protection change (e.g. a
    /// W^X policy that forbids `PROT_EXEC`), or on targets other than Unix.
    pub fn new(code: &[u8]) -> Result<ExecutableCode> {
        if code.is_empty() {
            return Err(Error::InvalidSize {
                size: 0,
                expected: "at least one byte of machine code".into(),
            });
        }
        #[cfg(target_os = "linux")]
        if let Some(c) = arena::allocate(code) {
            return Ok(c);
        }
        Self::map_own(code)
    }

    #[cfg(unix)]
    fn map_own(code: &[u8]) -> Result<ExecutableCode> {
        let page = page_size();
        let map_len =
            code.len()
                .checked_next_multiple_of(page)
                .ok_or_else(|| Error::SizeOverflow {
                    what: format!("code mapping for {} bytes", code.len()),
                })?;
        let ptr = map_near_text(
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
        );
        if ptr == libc::MAP_FAILED {
            return Err(os_error("mmap"));
        }
        let ptr = ptr.cast::<u8>();
        // SAFETY: the mapping is map_len >= code.len() bytes, read-write, and ours alone.
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), ptr, code.len()) };
        // SAFETY: ptr/map_len describe the mapping created above.
        if unsafe { libc::mprotect(ptr.cast(), map_len, libc::PROT_READ | libc::PROT_EXEC) } != 0 {
            let err = os_error("mprotect(PROT_READ|PROT_EXEC)");
            // SAFETY: unmapping the mapping we created; nothing else refers to it.
            unsafe { libc::munmap(ptr.cast(), map_len) };
            return Err(err);
        }
        MAPPED.fetch_add(map_len, std::sync::atomic::Ordering::Relaxed);
        Ok(ExecutableCode {
            ptr,
            code_len: code.len(),
            backing: Backing::Own { map_len },
        })
    }

    #[cfg(not(unix))]
    fn map_own(_code: &[u8]) -> Result<ExecutableCode> {
        Err(Error::Unsupported {
            type_name: "executable memory".into(),
            reason: "generated code is only supported on Unix targets".into(),
        })
    }

    /// The address of the first instruction (16-byte aligned).
    pub fn entry(&self) -> *const u8 {
        self.ptr
    }

    /// The code's length in bytes (without the rounding to granules or pages).
    pub fn len(&self) -> usize {
        self.code_len
    }

    /// Always `false`: empty code is rejected at construction.
    pub fn is_empty(&self) -> bool {
        self.code_len == 0
    }

    /// A copy of the code bytes (for disassembly in tests and tools).
    pub fn bytes(&self) -> Vec<u8> {
        // SAFETY: the code is readable for code_len bytes and not written while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.code_len).to_vec() }
    }
}

#[cfg(unix)]
fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 {
        page as usize
    } else {
        4096
    }
}

/// How far (bytes) generated code may lie from gatun's own machine code to count as near.
#[cfg(unix)]
const NEAR: usize = 1 << 31;

/// The next address hint for [`map_near_text`]: it walks down from just below gatun's own code,
/// one mapping at a time (0 = not started). Only a hint: races between threads cost at most a
/// retry.
#[cfg(unix)]
static NEXT_HINT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A fresh mapping of `map_len` bytes (`prot`, `flags` and `fd` as for `mmap`, offset 0),
/// placed within 2 GiB of gatun's own machine code when the address space allows (address
/// hints below the executable's text, never `MAP_FIXED`, so nothing existing is ever
/// replaced), else wherever the kernel puts it. Returns `MAP_FAILED` on failure.
///
/// Why: calls from Rust into a stub and the stub's jump back into code of the executable were
/// measured ~1.6 ns slower per call when the stub sat in the far `mmap` region (0x7f...)
/// than when the same instructions sat next to the executable's text (x86-64 branch target
/// prediction for branches whose target is more than 2/4 GiB away; JITs such as LuaJIT place
/// their machine code near the executable for the same reason).
#[cfg(unix)]
fn map_near_text(map_len: usize, prot: i32, flags: i32, fd: i32) -> *mut libc::c_void {
    use std::sync::atomic::Ordering;
    let page = page_size();
    let anchor = map_near_text as *const () as usize;
    let near = |p: usize| p.abs_diff(anchor) < NEAR;
    for _ in 0..4 {
        let mut cursor = NEXT_HINT.load(Ordering::Relaxed);
        if cursor == 0 {
            // start 64 MiB below the page holding this function
            cursor = (anchor & !(page - 1)).saturating_sub(64 << 20);
        }
        let Some(hint) = cursor
            .checked_sub(map_len)
            .filter(|&h| h >= page && near(h))
        else {
            break;
        };
        NEXT_HINT.store(hint, Ordering::Relaxed);
        // SAFETY: a new mapping; the address is only a hint (no MAP_FIXED), so no existing
        // mapping is touched.
        let p = unsafe { libc::mmap(hint as *mut libc::c_void, map_len, prot, flags, fd, 0) };
        if p == libc::MAP_FAILED {
            break;
        }
        if near(p as usize) {
            return p;
        }
        // SAFETY: the mapping just created, referred to by nothing else.
        unsafe { libc::munmap(p, map_len) };
    }
    // SAFETY: a new mapping with no address hint has no preconditions.
    unsafe { libc::mmap(std::ptr::null_mut(), map_len, prot, flags, fd, 0) }
}

impl Drop for ExecutableCode {
    fn drop(&mut self) {
        match self.backing {
            #[cfg(target_os = "linux")]
            Backing::Arena { rw, granules } => arena::free(self.ptr, rw, granules),
            #[cfg(unix)]
            Backing::Own { map_len } => {
                // SAFETY: the mapping is ours (invariant) and nobody may call into it any more:
                // the owner of this value guarantees callers keep it alive while the code can
                // run.
                unsafe { libc::munmap(self.ptr.cast(), map_len) };
                MAPPED.fetch_sub(map_len, std::sync::atomic::Ordering::Relaxed);
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }
}

/// First-fit search for `n` consecutive clear bits in `bits` (bit `i` is `bits[i / 64] >> (i %
/// 64) & 1`); returns the index of the first bit of the run.
fn find_clear_run(bits: &[u64], n: usize) -> Option<usize> {
    let total = bits.len() * 64;
    let mut i = 0;
    while i + n <= total {
        let b = i % 64;
        let word = bits[i / 64] >> b;
        if word & 1 != 0 {
            // skip the set bits from i (at most to the end of this word)
            i += (!word).trailing_zeros() as usize;
            continue;
        }
        // clear bits from i: to the next set bit of this word, then whole words
        let mut j = i + if word == 0 {
            64 - b
        } else {
            word.trailing_zeros() as usize
        };
        if j % 64 == 0 {
            while j - i < n && j < total {
                let w = bits[j / 64];
                if w == 0 {
                    j += 64;
                } else {
                    j += w.trailing_zeros() as usize;
                    break;
                }
            }
        }
        if j - i >= n {
            return Some(i);
        }
        i = j;
    }
    None
}

/// Sets (`on`) or clears bits `start..start + n`.
fn set_bits(bits: &mut [u64], start: usize, n: usize, on: bool) {
    for i in start..start + n {
        let (w, m) = (i / 64, 1u64 << (i % 64));
        if on {
            bits[w] |= m;
        } else {
            bits[w] &= !m;
        }
    }
}

/// The Linux code arena (see the module documentation).
#[cfg(target_os = "linux")]
mod arena {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Mutex, MutexGuard};

    use super::{find_clear_run, map_near_text, page_size, set_bits, ExecutableCode, MAPPED};
    use super::{Backing, CHUNK_BYTES, GRANULE};

    /// `int3`: what freed granules are filled with, so a call through a stale address traps.
    /// (Granules never used are the memfd's zeros: filling a new chunk up front cost 35 µs of
    /// page faults per chunk, more than the 20 µs a link may take.)
    const TRAP: u8 = 0xCC;

    struct Chunk {
        rw: *mut u8,
        len: usize,
        bits: Vec<u64>,
        used: usize,
        generation: u64,
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

    /// Incremented at every fork, in parent and child (see the module documentation).
    static GENERATION: AtomicU64 = AtomicU64::new(0);

    fn lock() -> MutexGuard<'static, Arena> {
        ARENA.lock().unwrap_or_else(|e| e.into_inner())
    }

    thread_local! {
        /// The arena lock held across a fork by the forking thread.
        static FORK_GUARD: std::cell::RefCell<Option<MutexGuard<'static, Arena>>> =
            const { std::cell::RefCell::new(None) };
    }

    unsafe extern "C" fn before_fork() {
        let g = lock();
        FORK_GUARD.with(|f| *f.borrow_mut() = Some(g));
    }

    unsafe extern "C" fn after_fork() {
        GENERATION.fetch_add(1, Ordering::Relaxed);
        FORK_GUARD.with(|f| drop(f.borrow_mut().take()));
    }

    fn register_fork_handlers() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: the handlers are `extern "C"` functions that live for the process; they
            // only lock/unlock the arena mutex and bump an atomic.
            unsafe { libc::pthread_atfork(Some(before_fork), Some(after_fork), Some(after_fork)) };
        });
    }

    /// Maps a new chunk of `len` bytes (a multiple of the page size, zero-filled; its pages are
    /// faulted in as code is written): `(rx, rw)`, or `None` if the OS refuses.
    fn map_chunk(len: usize) -> Option<(*mut u8, *mut u8)> {
        register_fork_handlers();
        // SAFETY: a NUL-terminated name; no other preconditions.
        let fd = unsafe { libc::memfd_create(c"gatun-code".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        let close = || {
            // SAFETY: `fd` is ours; the mappings keep the memory alive.
            unsafe { libc::close(fd) };
        };
        // SAFETY: `fd` is a fresh memfd.
        if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
            close();
            return None;
        }
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
        close();
        if rx == libc::MAP_FAILED {
            // SAFETY: the mapping created above; nothing refers to it.
            unsafe { libc::munmap(rw, len) };
            return None;
        }
        MAPPED.fetch_add(len, Ordering::Relaxed);
        Some((rx.cast(), rw.cast()))
    }

    fn unmap_chunk(rx: usize, c: &Chunk) {
        // SAFETY: both views belong to a chunk that has been removed from the arena and owns
        // no granule: nothing refers to them any more.
        unsafe {
            libc::munmap(rx as *mut libc::c_void, c.len);
            libc::munmap(c.rw.cast(), c.len);
        }
        MAPPED.fetch_sub(c.len, Ordering::Relaxed);
    }

    /// Takes `n` granules from chunk `rx` of `a`, if it has them: `(code address, rw address)`.
    fn take(a: &mut Arena, rx: usize, n: usize, generation: u64) -> Option<(usize, *mut u8)> {
        let c = a.chunks.get_mut(&rx)?;
        if c.generation != generation || c.used + n > c.len / GRANULE {
            return None;
        }
        let i = find_clear_run(&c.bits, n)?;
        set_bits(&mut c.bits, i, n, true);
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
        let n = code.len().div_ceil(GRANULE);
        let found = {
            let mut a = lock();
            let generation = GENERATION.load(Ordering::Relaxed);
            let last = a.last;
            take(&mut a, last, n, generation).or_else(|| {
                let keys: Vec<usize> = a.chunks.keys().copied().collect();
                keys.into_iter()
                    .find_map(|rx| take(&mut a, rx, n, generation))
            })
        };
        let (rx, rw) = match found {
            Some(f) => f,
            None => {
                // Map outside the lock, then insert and allocate in one critical section.
                let len = (n * GRANULE)
                    .max(CHUNK_BYTES)
                    .checked_next_multiple_of(page_size().max(GRANULE * 64))?;
                let (rx, rw) = map_chunk(len)?;
                let mut a = lock();
                let generation = GENERATION.load(Ordering::Relaxed);
                a.chunks.insert(
                    rx as usize,
                    Chunk {
                        rw,
                        len,
                        bits: vec![0; len / GRANULE / 64],
                        used: 0,
                        generation,
                    },
                );
                match take(&mut a, rx as usize, n, generation) {
                    Some(f) => f,
                    None => {
                        // only if a fork happened in between: give the chunk back
                        let c = a.chunks.remove(&(rx as usize))?;
                        drop(a);
                        unmap_chunk(rx as usize, &c);
                        return None;
                    }
                }
            }
        };
        // SAFETY: the n granules at `rw` are owned by the code being built and nothing calls
        // them yet (invariant); code.len() <= n * GRANULE.
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), rw, code.len()) };
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
        let generation = GENERATION.load(Ordering::Relaxed);
        let Some((&rx, c)) = a.chunks.range_mut(..=addr).next_back() else {
            return;
        };
        let i = (addr - rx) / GRANULE;
        if c.generation == generation {
            // SAFETY: the granules are still owned by the code being dropped, which nothing
            // may call any more; the chunk is not shared with another process.
            unsafe { std::ptr::write_bytes(rw, TRAP, n * GRANULE) };
        }
        set_bits(&mut c.bits, i, n, false);
        c.used -= n;
        if c.used != 0 {
            return;
        }
        if c.generation == generation && c.len == CHUNK_BYTES && a.spare.is_none() {
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

    /// Number of chunks mapped (for tests).
    #[cfg(test)]
    pub(super) fn chunks() -> usize {
        lock().chunks.len()
    }
}

#[cfg(test)]
mod bitmap_tests {
    use super::*;

    #[test]
    fn finds_first_fitting_run() {
        let mut bits = vec![0u64; 2];
        assert_eq!(find_clear_run(&bits, 128), Some(0));
        assert_eq!(find_clear_run(&bits, 129), None);
        set_bits(&mut bits, 0, 3, true);
        assert_eq!(find_clear_run(&bits, 1), Some(3));
        set_bits(&mut bits, 10, 1, true);
        assert_eq!(find_clear_run(&bits, 7), Some(3));
        assert_eq!(find_clear_run(&bits, 8), Some(11));
        // a run crossing the word boundary
        set_bits(&mut bits, 11, 50, true);
        assert_eq!(find_clear_run(&bits, 20), Some(61));
        set_bits(&mut bits, 61, 67, true);
        assert_eq!(find_clear_run(&bits, 1), Some(3));
        set_bits(&mut bits, 3, 7, true);
        assert_eq!(find_clear_run(&bits, 1), None);
        set_bits(&mut bits, 64, 1, false);
        assert_eq!(find_clear_run(&bits, 1), Some(64));
        assert_eq!(find_clear_run(&bits, 2), None);
    }

    #[test]
    fn agrees_with_a_naive_search() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..if cfg!(miri) { 10 } else { 200 } {
            let mut bits = vec![0u64; 3];
            for w in bits.iter_mut() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // sparse or dense patterns
                *w = if seed >> 63 == 0 {
                    seed & (seed >> 7) & (seed >> 13)
                } else {
                    seed | (seed >> 3)
                };
            }
            for n in [1, 2, 5, 17, 64, 65, 100] {
                let naive =
                    (0..=192 - n).find(|&i| (i..i + n).all(|j| bits[j / 64] >> (j % 64) & 1 == 0));
                assert_eq!(find_clear_run(&bits, n), naive, "{bits:x?} n={n}");
            }
        }
    }
}

#[cfg(all(test, not(miri), unix, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn runs_generated_code() {
        // mov eax, 42 ; ret
        let code = ExecutableCode::new(&[0xB8, 42, 0, 0, 0, 0xC3]).unwrap();
        // SAFETY: the bytes are a complete `extern "C" fn() -> i32`.
        let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(code.entry()) };
        assert_eq!(f(), 42);
        assert_eq!(code.len(), 6);
        assert_eq!(code.bytes(), vec![0xB8, 42, 0, 0, 0, 0xC3]);
        assert_eq!(code.entry() as usize % GRANULE, 0);
    }

    #[test]
    fn mapping_is_not_writable() {
        let code = ExecutableCode::new(&[0xC3]).unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let addr = code.entry() as usize;
        let line = maps
            .lines()
            .find(|l| {
                let (range, _) = l.split_once(' ').unwrap();
                let (s, e) = range.split_once('-').unwrap();
                let (s, e) = (
                    usize::from_str_radix(s, 16).unwrap(),
                    usize::from_str_radix(e, 16).unwrap(),
                );
                (s..e).contains(&addr)
            })
            .unwrap();
        assert!(line.contains(" r-xs ") || line.contains(" r-xp "), "{line}");
    }

    #[test]
    fn neighbours_share_a_chunk_and_survive_each_other() {
        // mov eax, imm32 ; ret
        let make = |v: u8| ExecutableCode::new(&[0xB8, v, 0, 0, 0, 0xC3]).unwrap();
        let call = |c: &ExecutableCode| {
            // SAFETY: the bytes are a complete `extern "C" fn() -> i32`.
            let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(c.entry()) };
            f()
        };
        let codes: Vec<ExecutableCode> = (0..100).map(make).collect();
        #[cfg(target_os = "linux")]
        {
            // other tests allocate concurrently, but 100 pieces of 16 bytes fit in few chunks
            assert!(arena::chunks() < 20);
            let near = codes
                .windows(2)
                .filter(|w| (w[1].entry() as usize).abs_diff(w[0].entry() as usize) < CHUNK_BYTES)
                .count();
            assert!(near > 50, "{near}");
        }
        let (even, odd): (Vec<_>, Vec<_>) =
            codes.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
        drop(odd);
        for (i, c) in &even {
            assert_eq!(call(c), *i as i32);
        }
        // freed granules are reused
        let again: Vec<ExecutableCode> = (0..50).map(|v| make(v + 100)).collect();
        for (i, c) in again.iter().enumerate() {
            assert_eq!(call(c), i as i32 + 100);
        }
        for (i, c) in &even {
            assert_eq!(call(c), *i as i32);
        }
    }

    #[test]
    fn large_code_gets_its_own_chunk() {
        let mut bytes = vec![0x90u8; CHUNK_BYTES + 100]; // nops
        bytes.extend([0xB8, 7, 0, 0, 0, 0xC3]);
        let code = ExecutableCode::new(&bytes).unwrap();
        // SAFETY: nops followed by `mov eax, 7; ret`.
        let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(code.entry()) };
        assert_eq!(f(), 7);
        assert_eq!(code.bytes(), bytes);
    }

    #[test]
    fn empty_code_is_an_error() {
        assert!(matches!(
            ExecutableCode::new(&[]),
            Err(Error::InvalidSize { size: 0, .. })
        ));
    }
}
