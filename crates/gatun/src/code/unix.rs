//! Mappings of their own on Unix targets: code that does not go into the Linux code arena (other
//! Unix targets, or Linux when the arena is refused) gets a private mapping, made executable
//! in the way of the target ([`OwnMapping`]; Apple's `MAP_JIT` in the `jit` module). Also the
//! placement of mappings near gatun's own machine code ([`map_near_text`], used by the arena's
//! chunks too) and the instruction-cache flush after code is written ([`flush_icache`]).
//!
//! # Invariants
//! - An own mapping ([`Own`]) is a whole mapping of `map_len` bytes owned by its
//!   `ExecutableCode`, written only before its address is handed out: through a read-write
//!   mapping later made read-execute, or (Apple) a `MAP_JIT` mapping inside the `jit` module's
//!   write window. It is unmapped without being written again.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Backing, ExecutableCode, MAPPED};
use crate::error::{Error, Result};

/// A mapping of its own: `map_len` bytes made by [`map_near_text`] (or `jit::map`).
#[derive(Debug)]
pub(super) struct Own {
    /// The mapping's length in bytes (whole pages).
    pub(super) map_len: usize,
}

/// Unmaps an own mapping at `ptr`.
///
/// # Safety
/// `ptr` and `own` describe an own mapping (see the module invariants) that nothing may call
/// into any more.
pub(super) unsafe fn unmap(ptr: *mut u8, own: &Own) {
    // SAFETY: a whole mapping made by map_near_text or jit::map (unmap_near_text unmaps it and
    // at most keeps its range as a hint), that nobody may call into any more (caller).
    unsafe { unmap_near_text(ptr, own.map_len) };
    MAPPED.fetch_sub(own.map_len, Ordering::Relaxed);
}

pub(super) fn os_error(what: &str) -> Error {
    Error::Unsupported {
        type_name: "executable memory".into(),
        reason: format!("{what} failed: {}", std::io::Error::last_os_error()),
    }
}

/// A mapping of its own for `code` (see the module documentation), in the way of the running
/// system ([`OwnMapping::native`]).
///
/// # Errors
/// [`Error::SizeOverflow`] for code too large to map; [`Error::Unsupported`] when the OS
/// refuses the mapping or the protection change.
pub(super) fn map_own(code: &[u8]) -> Result<ExecutableCode> {
    let page = page_size();
    let map_len = code
        .len()
        .checked_next_multiple_of(page)
        .ok_or_else(|| Error::SizeOverflow {
            what: format!("code mapping for {} bytes", code.len()),
        })?;
    match OwnMapping::native() {
        OwnMapping::WriteThenProtect => map_write_then_protect(code, map_len),
        way @ OwnMapping::Jit { toggle } => map_jit(code, map_len, way, toggle),
    }
}

/// The `OwnMapping::Jit` way (see the `jit` module), falling back to
/// `OwnMapping::WriteThenProtect` when `MAP_JIT` is refused (a Hardened Runtime without the
/// allow-jit entitlement); the error reports both failures.
#[cfg(target_vendor = "apple")]
fn map_jit(code: &[u8], map_len: usize, way: OwnMapping, toggle: bool) -> Result<ExecutableCode> {
    match super::jit::map(code, map_len, way.map_prot(), way.map_flags(), toggle) {
        Ok(ptr) => Ok(own(ptr, code.len(), map_len)),
        Err(jit_error) => map_write_then_protect(code, map_len).map_err(|e| {
            let then = match e {
                Error::Unsupported { reason, .. } => reason,
                other => other.to_string(),
            };
            Error::Unsupported {
                type_name: "executable memory".into(),
                reason: format!("mmap(MAP_JIT) failed: {jit_error}; then {then}"),
            }
        }),
    }
}

/// `MAP_JIT` is Apple's: never chosen elsewhere (`OwnMapping::for_target`).
#[cfg(not(target_vendor = "apple"))]
fn map_jit(_: &[u8], _: usize, way: OwnMapping, _: bool) -> Result<ExecutableCode> {
    Err(Error::Unsupported {
        type_name: "executable memory".into(),
        reason: format!("{way:?} (MAP_JIT) exists on Apple targets only"),
    })
}

/// The `OwnMapping::WriteThenProtect` way: `map_len` bytes mapped read-write, filled, then
/// switched to read-execute.
fn map_write_then_protect(code: &[u8], map_len: usize) -> Result<ExecutableCode> {
    let way = OwnMapping::WriteThenProtect;
    let ptr = map_near_text(map_len, way.map_prot(), way.map_flags(), -1);
    if ptr == libc::MAP_FAILED {
        return Err(os_error("mmap"));
    }
    let ptr = ptr.cast::<u8>();
    // SAFETY: the mapping is map_len >= code.len() bytes, read-write, and ours alone.
    unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), ptr, code.len()) };
    let exec = way
        .final_prot()
        .unwrap_or(libc::PROT_READ | libc::PROT_EXEC);
    // SAFETY: ptr/map_len describe the mapping created above.
    if unsafe { libc::mprotect(ptr.cast(), map_len, exec) } != 0 {
        let err = os_error("mprotect(PROT_READ|PROT_EXEC)");
        // SAFETY: unmapping the mapping we created; nothing else refers to it.
        unsafe { libc::munmap(ptr.cast(), map_len) };
        return Err(err);
    }
    Ok(own(ptr, code.len(), map_len))
}

/// Takes ownership of a mapping of its own, `map_len` bytes at `ptr` with `code_len` bytes
/// of code just written: flushes the instruction cache over them and counts the mapping.
fn own(ptr: *mut u8, code_len: usize, map_len: usize) -> ExecutableCode {
    flush_icache(ptr, code_len);
    MAPPED.fetch_add(map_len, Ordering::Relaxed);
    ExecutableCode {
        ptr,
        code_len,
        backing: Backing::Own(Own { map_len }),
    }
}

/// How a piece of code that gets a mapping of its own (see the module documentation) is made
/// executable on a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OwnMapping {
    /// Mapped `PROT_READ | PROT_WRITE`, filled, then `mprotect`ed to `PROT_READ | PROT_EXEC`
    /// and never writable again (Linux and every other non-Apple Unix).
    WriteThenProtect,
    /// Apple: mapped `PROT_READ | PROT_WRITE | PROT_EXEC` with `MAP_JIT`; with `toggle` (Apple
    /// silicon) the copy is bracketed by `pthread_jit_write_protect_np(0)` / `(1)`, without it
    /// (x86-64 Macs) the pages are writable and executable at once. Falls back to
    /// [`OwnMapping::WriteThenProtect`] when `MAP_JIT` is refused.
    Jit {
        /// Whether writes toggle the calling thread's `MAP_JIT` write protection.
        toggle: bool,
    },
}

/// `MAP_JIT` from Apple's `<sys/mman.h>` (checked against the libc crate's value when compiled
/// for Apple).
const APPLE_MAP_JIT: i32 = 0x0800;
#[cfg(target_vendor = "apple")]
const _: () = assert!(APPLE_MAP_JIT == libc::MAP_JIT);

/// The first Darwin kernel major version with `MAP_JIT`: 18, macOS 10.14 (Mojave), which
/// introduced the flag with the Hardened Runtime. JIT compilers that pass it on older kernels
/// report crashes there, so x86-64 Macs before 10.14 (which Rust's `x86_64-apple-darwin`
/// still targets) map read-write then read-execute instead.
const MAP_JIT_DARWIN_MAJOR: u32 = 18;

/// The major version in a kernel release string (`uname -r`, e.g. `18.7.0`): its leading
/// decimal digits (at most 4), followed by `.` or the end. `None` for anything else.
#[cfg(any(all(target_vendor = "apple", not(target_arch = "aarch64")), test))]
fn darwin_major(release: &[u8]) -> Option<u32> {
    let digits = release.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 4 || !matches!(release.get(digits), None | Some(b'.')) {
        return None;
    }
    release[..digits]
        .iter()
        .try_fold(0u32, |n, &b| Some(n * 10 + u32::from(b - b'0')))
}

impl OwnMapping {
    /// The way of the running system (Apple x86-64: asks the kernel's version once).
    fn native() -> OwnMapping {
        #[cfg(all(target_vendor = "apple", not(target_arch = "aarch64")))]
        let major = {
            static MAJOR: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
            *MAJOR.get_or_init(|| super::jit::kernel_release().and_then(|r| darwin_major(&r)))
        };
        #[cfg(not(all(target_vendor = "apple", not(target_arch = "aarch64"))))]
        let major = None;
        OwnMapping::for_target(
            cfg!(target_vendor = "apple"),
            cfg!(target_arch = "aarch64"),
            major,
        )
    }

    /// The way of a target: `Jit` on Apple targets (`target_vendor = "apple"`), toggling on
    /// AArch64 (Apple silicon, macOS 11 and later); on x86-64 Macs only from Darwin
    /// [`MAP_JIT_DARWIN_MAJOR`] (macOS 10.14), when `darwin_major` (the kernel's release) is
    /// known; `WriteThenProtect` elsewhere.
    const fn for_target(apple: bool, aarch64: bool, darwin_major: Option<u32>) -> OwnMapping {
        let map_jit = aarch64
            || match darwin_major {
                Some(major) => major >= MAP_JIT_DARWIN_MAJOR,
                None => false,
            };
        if apple && map_jit {
            OwnMapping::Jit { toggle: aarch64 }
        } else {
            OwnMapping::WriteThenProtect
        }
    }

    /// The `mmap` protection (`PROT_*` bits) the mapping is created with.
    fn map_prot(self) -> i32 {
        match self {
            OwnMapping::WriteThenProtect => libc::PROT_READ | libc::PROT_WRITE,
            OwnMapping::Jit { .. } => libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
        }
    }

    /// The `mmap` flags (`MAP_*` bits) the mapping is created with.
    fn map_flags(self) -> i32 {
        let private_anon = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        match self {
            OwnMapping::WriteThenProtect => private_anon,
            OwnMapping::Jit { .. } => private_anon | APPLE_MAP_JIT,
        }
    }

    /// The protection the mapping is switched to after the copy (`mprotect`), if any.
    fn final_prot(self) -> Option<i32> {
        match self {
            OwnMapping::WriteThenProtect => Some(libc::PROT_READ | libc::PROT_EXEC),
            OwnMapping::Jit { .. } => None,
        }
    }
}

pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 {
        page as usize
    } else {
        4096
    }
}

/// How far (bytes) generated code may lie from gatun's own machine code to count as near.
pub(super) const NEAR: usize = 1 << 31;

/// The next address hint for [`map_near_text`]: it walks down from just below gatun's own code,
/// one mapping at a time (0 = not started, or restarted after the walk left the near window).
/// Only a hint: races between threads cost at most a retry.
static NEXT_HINT: AtomicUsize = AtomicUsize::new(0);

/// Near-text ranges unmapped by [`unmap_near_text`], reused as hints before walking further
/// down: each slot is 0 (empty) or a page-aligned address plus the range's length in pages
/// (lengths under one page of pages only). Lock-free, so that a fork never inherits it locked.
static FREED_NEAR: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];

/// A fresh mapping of `map_len` bytes (`prot`, `flags` and `fd` as for `mmap`, offset 0),
/// placed within [`NEAR`] (2 GiB) of gatun's own machine code when the address space allows
/// (address hints, never `MAP_FIXED`, so nothing existing is ever replaced), else wherever the
/// kernel puts it. Returns `MAP_FAILED` on failure. The hints are, first, a range of the same
/// length that [`unmap_near_text`] gave back, then a walk down from 64 MiB below gatun's text;
/// when the walk would leave the near window it restarts from the top (ranges freed since
/// are found again), so map/unmap cycles never exhaust the window.
///
/// Why: calls from Rust into a stub and the stub's jump back into code of the executable were
/// measured ~1.6 ns slower per call when the stub sat in the far `mmap` region (0x7f...)
/// than when the same instructions sat next to the executable's text (x86-64 branch target
/// prediction for branches whose target is more than 2/4 GiB away; JITs such as LuaJIT place
/// their machine code near the executable for the same reason).
pub(super) fn map_near_text(map_len: usize, prot: i32, flags: i32, fd: i32) -> *mut libc::c_void {
    let page = page_size();
    let anchor = map_near_text as *const () as usize;
    let near = |p: usize| p.abs_diff(anchor) < NEAR;
    let try_at = |hint: usize| {
        // SAFETY: a new mapping; the address is only a hint (no MAP_FIXED), so no existing
        // mapping is touched.
        let p = unsafe { libc::mmap(hint as *mut libc::c_void, map_len, prot, flags, fd, 0) };
        if p == libc::MAP_FAILED || near(p as usize) {
            return Some(p);
        }
        // SAFETY: the mapping just created, referred to by nothing else.
        unsafe { libc::munmap(p, map_len) };
        None
    };
    if let Some(hint) = take_freed_near(map_len, page) {
        if let Some(p) = try_at(hint) {
            if p != libc::MAP_FAILED {
                return p;
            }
        }
    }
    let top = (anchor & !(page - 1)).saturating_sub(64 << 20);
    let mut restarted = false;
    let mut tries = 0;
    while tries < 4 {
        let cursor = match NEXT_HINT.load(Ordering::Relaxed) {
            0 => top,
            c => c,
        };
        let Some(hint) = cursor
            .checked_sub(map_len)
            .filter(|&h| h >= page && near(h))
        else {
            if restarted || cursor == top {
                break;
            }
            // the walk left the near window: start again from the top
            restarted = true;
            NEXT_HINT.store(0, Ordering::Relaxed);
            continue;
        };
        tries += 1;
        NEXT_HINT.store(hint, Ordering::Relaxed);
        match try_at(hint) {
            Some(p) if p == libc::MAP_FAILED => break,
            Some(p) => return p,
            None => {}
        }
    }
    // SAFETY: a new mapping with no address hint has no preconditions.
    unsafe { libc::mmap(std::ptr::null_mut(), map_len, prot, flags, fd, 0) }
}

/// Unmaps `map_len` bytes at `p` (a mapping made by [`map_near_text`]) and, if they were near
/// gatun's text, remembers the range as a hint for the next mapping of that length.
///
/// # Safety
/// `p`/`map_len` describe a whole mapping made by [`map_near_text`] that nothing refers to any
/// more.
pub(super) unsafe fn unmap_near_text(p: *mut u8, map_len: usize) {
    // SAFETY: forwarded to the caller.
    unsafe { libc::munmap(p.cast(), map_len) };
    let page = page_size();
    let (addr, pages) = (p as usize, map_len / page);
    let anchor = map_near_text as *const () as usize;
    if addr.abs_diff(anchor) >= NEAR || pages >= page || addr % page != 0 {
        return;
    }
    for slot in &FREED_NEAR {
        if slot
            .compare_exchange(0, addr | pages, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

/// A range of `map_len` bytes given back by [`unmap_near_text`], removed from the list.
fn take_freed_near(map_len: usize, page: usize) -> Option<usize> {
    let pages = map_len / page;
    FREED_NEAR.iter().find_map(|slot| {
        let v = slot.load(Ordering::Relaxed);
        (v != 0 && v % page == pages && map_len % page == 0)
            .then(|| slot.compare_exchange(v, 0, Ordering::Relaxed, Ordering::Relaxed))
            .and_then(|r| r.ok())
            .map(|v| v - pages)
    })
}

/// Makes code just written at `start..start + len` (its executable address) visible to
/// instruction fetch. Nothing to do on x86/x86-64 (coherent instruction caches); on Apple
/// targets `sys_icache_invalidate` (libSystem, as Apple documents for JIT compilers); on
/// RISC-V Linux glibc's `__riscv_flush_icache` (the `riscv_flush_icache` system call, which
/// makes the range coherent on every hart the process runs on: a `fence.i` alone covers only
/// the current hart, and libgcc's `__clear_cache` does nothing there); on 64-bit PowerPC the
/// sequence of Power ISA Book II, "Instruction Storage" (`dcbst` over every data cache block,
/// `sync`, `icbi` over every instruction cache block, `isync`), written here because libgcc's
/// `__clear_cache` does nothing there either; elsewhere `__clear_cache` (libgcc / compiler-rt),
/// which cleans the data cache to the point of unification and invalidates the instruction
/// cache over the range (`dc cvau` / `ic ivau` on AArch64).
#[inline]
pub(super) fn flush_icache(start: *const u8, len: usize) {
    #[cfg(all(
        target_vendor = "apple",
        not(any(target_arch = "x86_64", target_arch = "x86"))
    ))]
    super::jit::invalidate_icache(start, len);
    #[cfg(all(target_arch = "riscv64", target_os = "linux"))]
    {
        extern "C" {
            fn __riscv_flush_icache(
                start: *mut libc::c_void,
                end: *mut libc::c_void,
                flags: libc::c_ulong,
            ) -> libc::c_int;
        }
        // SAFETY: the range is mapped (the code just written); the call only makes the
        // instruction caches of the process's harts coherent with it (flags 0: all harts).
        // It cannot fail for a mapped range with valid flags.
        unsafe {
            __riscv_flush_icache(start as *mut _, start.add(len) as *mut _, 0);
        }
    }
    #[cfg(target_arch = "powerpc64")]
    {
        // The smallest cache block of any 64-bit Power processor: a block size that is too
        // small only repeats an operation on the same block.
        const BLOCK: usize = 32;
        let first = start as usize & !(BLOCK - 1);
        let end = start as usize + len;
        for block in (first..end).step_by(BLOCK) {
            // SAFETY: `block` lies in the mapped range just written (rounded down to its
            // block); `dcbst` writes the block back to memory and changes no data.
            unsafe { std::arch::asm!("dcbst 0, {0}", in(reg) block, options(nostack)) };
        }
        // SAFETY: a barrier: the write-backs complete before the invalidations below.
        unsafe { std::arch::asm!("sync", options(nostack)) };
        for block in (first..end).step_by(BLOCK) {
            // SAFETY: as above; `icbi` drops the block from the instruction cache.
            unsafe { std::arch::asm!("icbi 0, {0}", in(reg) block, options(nostack)) };
        }
        // SAFETY: discards instructions this thread fetched before the invalidations.
        unsafe { std::arch::asm!("isync", options(nostack)) };
    }
    #[cfg(not(any(
        target_vendor = "apple",
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "powerpc64",
        all(target_arch = "riscv64", target_os = "linux")
    )))]
    {
        extern "C" {
            fn __clear_cache(start: *mut libc::c_char, end: *mut libc::c_char);
        }
        // SAFETY: the range is mapped and readable (the code just written); the call only
        // performs cache maintenance over it.
        unsafe {
            __clear_cache(
                start as *mut libc::c_char,
                start.add(len) as *mut libc::c_char,
            )
        };
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    let _ = (start, len);
}

#[cfg(test)]
mod tests;
