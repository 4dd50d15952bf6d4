//! Executable memory for generated machine code (compiled downcall stubs, upcall stubs).
//!
//! **The code arena.** Code lives in 64 KiB chunks ([`CHUNK_BYTES`]; a chunk is larger when one
//! piece of code needs more) allocated in 16-byte granules ([`GRANULE`]), so a 27-byte upcall
//! stub takes 32 bytes and a 230-byte downcall stub 240. On Linux a chunk is a `memfd` mapped
//! twice: a read-execute view placed near gatun's own text (see `map_near_text`) that
//! callers jump into, and a read-write view, elsewhere, through which code is written. W^X holds
//! per mapping: no address is ever both writable and executable, and no mapping ever changes
//! protection, so a live piece of code never becomes non-executable while a neighbour in the same
//! chunk is written or freed. The physical pages stay writable through the read-write view for
//! as long as the chunk is mapped (a weaker guarantee than "never writable again": a stray
//! write through that view would change live code). Dropping an [`ExecutableCode`] fills its
//! granules with `int3` (on x86-64, a call through a stale address traps) and returns them to
//! the chunk; granules never used are the memfd's zeros, not `int3`. A chunk whose granules are
//! all free is unmapped (one empty chunk is kept as a spare so that linking and dropping one
//! signature in a loop does not map and unmap every time). Where `memfd_create` or the mapping
//! fails (and on Unix targets other than Linux), each piece of code gets its own private
//! mapping instead, mapped read-write, filled, switched to read-execute and never made writable
//! again; a failure that will not go away (the kernel or a security policy refusing the memfd
//! or its executable mapping) is remembered, so later code goes straight to its own mapping.
//!
//! **Apple targets** (`target_vendor = "apple"`; checked for macOS) have no arena: each piece
//! of code gets its own `MAP_JIT` mapping (read-write-execute; on Apple silicon writable or
//! executable per thread, with `pthread_jit_write_protect_np` bracketing the copy), the way
//! Apple documents for JIT compilers; see the `jit` module. It takes whole pages (16 KiB on
//! Apple silicon) per piece of code. Where `MAP_JIT` is refused (a Hardened Runtime without the
//! `allow-jit` entitlement), the read-write then read-execute mapping above is tried instead;
//! x86-64 Macs older than macOS 10.14, which lack `MAP_JIT`, take that mapping directly.
//! `OwnMapping` names the way each target takes. This path is compiled for
//! `aarch64-apple-darwin` and `x86_64-apple-darwin` but not executed by gatun's tests, which
//! run on Linux.
//!
//! **Windows** has no arena either: each piece of code gets its own `VirtualAlloc` region,
//! written read-write, switched to execute-read (`VirtualProtect`) and never writable again;
//! see the `windows` module. Code that carries its unwind information (a compiled stub with a
//! frame) is placed with `ExecutableCode::with_function_table` (Windows only), which registers its
//! `RUNTIME_FUNCTION` table with `RtlAddFunctionTable` and deletes it before the region is
//! freed. Tested for `x86_64-pc-windows-gnu` under Wine.
//!
//! The arena's bookkeeping (one bitmap per chunk) is behind one mutex, held for the bitmap work
//! and for the `int3` fill of freed granules (so that a fork sees a granule either live or
//! filled, never half-filled): chunks are mapped and unmapped, and new code is copied, outside
//! it.
//!
//! **Instruction caches.** Code is written through the read-write view (or before the
//! protection change of an own mapping) and then executed through another address. x86-64
//! keeps instruction fetch coherent with such stores; on other architectures every write of
//! new code is followed by a cache flush over its read-execute range before the address is
//! handed out (`flush_icache`): `sys_icache_invalidate` on Apple targets, `__clear_cache`
//! elsewhere.
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
//! kernel), the chunk is retired (below): no new code goes into it. A failing `MAP_FIXED` can
//! leave the range unmapped on some kernels, which the second try repairs when it succeeds;
//! if both fail and the pages are gone while other granules on them hold live code (checked
//! with `madvise`), the process aborts with a message rather than fault in a later call.
//! On x86 (coherent instruction fetch) no memfd stays open and no extra system call is made;
//! x86 code run under a user-mode emulator on another architecture (`qemu-x86_64`) would need
//! the same remap, which is not done.
//!
//! **fork.** A chunk is shared memory, so after `fork` parent and child would see each other's
//! writes to it (a free in one process filling with `int3` code the other still runs). A
//! `pthread_atfork` handler therefore gives the child its own copy of every chunk: before the
//! fork (arena lock held, so no code is being freed) it copies each chunk into a new memfd; in
//! the child it maps that memfd over both of the chunk's views (`MAP_FIXED`, same addresses,
//! same contents), and the parent closes it (where chunks keep their memfd open, the child
//! keeps the copy's as its chunk's memfd and closes the parent's). Both processes then go on
//! allocating from and freeing into all their chunks: repeated forks neither retire nor add
//! chunks. The cost is paid per `fork` (not by `posix_spawn`/`vfork`, which run no handlers):
//! in the parent one memfd and a copy per chunk (64 KiB for most), in the child two `mmap`s
//! per chunk. Where the copy cannot be made (out of file descriptors or memory), that chunk is
//! *retired* in both processes instead: never allocated from nor written again (an empty
//! retired chunk is unmapped at the next allocation), and only new chunks serve new code. In
//! the child, a failure of the `MAP_FIXED` mappings (which replace mappings of the same size,
//! so only a kernel out of memory fails them) retires the chunk there; the parent, which
//! cannot know, keeps using it, so freed code in it may then change under the child.
//! The handler takes the stub cache's lock and then the arena lock around the fork (the same
//! order as everywhere else; no code path holds both otherwise), so the child inherits neither
//! locked. Not covered: a `fork` from a signal handler that interrupted this thread inside an
//! arena or stub-cache critical section deadlocks in the handler (the lock is not reentrant);
//! `_Fork`, `vfork` and raw `clone` run no handlers, so after them the child shares the chunks
//! and must only `exec` or `_exit`.
//!
//! # Invariants
//! - Every chunk in `ARENA` is a `len`-byte `memfd` mapped read-execute at `rx` and read-write at
//!   `rw`, both owned by the arena; its bitmap has one bit per granule, set while an
//!   `ExecutableCode` owns the granule. A granule is written only through `rw`, and only while
//!   it is owned by exactly one `ExecutableCode` that has not yet handed out its address, or
//!   when that owner drops (nothing may call it any more), or (all of it) by the fork handler
//!   in the child, with the same bytes.
//! - A chunk is unmapped only when no granule is owned, i.e. no `ExecutableCode` points into it.
//! - An own mapping (`Backing::Own`) is a whole mapping of `map_len` bytes owned by its
//!   `ExecutableCode`, written only before its address is handed out: through a read-write
//!   mapping later made read-execute, or (Apple) a `MAP_JIT` mapping inside the `jit` module's
//!   write window. It is unmapped without being written again.
//! - An `ExecutableCode`'s first `len` bytes at `ptr` are the code it was given, readable and
//!   executable for as long as it lives; on targets other than x86, the instruction cache has
//!   been cleared over them before `ptr` is handed out.
//! - A `retired` chunk may be shared with another process (or, on targets other than x86, could
//!   not have a page mapped again): it is never allocated from nor written again.
//! - On targets other than x86, a chunk's `fd` is its memfd, open for as long as the chunk is
//!   mapped; a granule's `dirty` bit is set whenever it is owned, and may be cleared only when
//!   its page of the read-execute view is mapped again (under the arena lock, before new code
//!   is written into the granules that caused it). A granule handed out for new code whose
//!   dirty bit was set has had its page mapped again since its last owner was freed.

use crate::error::{Error, Result};

#[cfg(target_vendor = "apple")]
mod jit;
#[cfg(windows)]
mod windows;

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
/// # #[cfg(all(target_arch = "x86_64", unix, feature = "internals"))] {
/// use gatun::code::ExecutableCode;
/// // SAFETY: `mov eax, 42; ret`, called below as the `extern "C" fn() -> i32` it is.
/// let code = unsafe { ExecutableCode::new(&[0xB8, 42, 0, 0, 0, 0xC3]) }.unwrap();
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
    /// Windows: the offset of the registered `RUNTIME_FUNCTION` table, if any (deleted before
    /// the region is released).
    #[cfg(windows)]
    function_table: Option<usize>,
}

#[derive(Debug)]
enum Backing {
    /// Granules of an arena chunk: `granules` of them, written through `rw`.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Arena { rw: *mut u8, granules: usize },
    /// A private mapping of its own, `map_len` bytes.
    #[cfg_attr(not(any(unix, windows)), allow(dead_code))]
    Own { map_len: usize },
}

// SAFETY: the code is immutable while this value lives (only its drop writes, through the
// arena's read-write view, after which nothing may call it) and owned by this value; sharing
// its address between threads is sound.
unsafe impl Send for ExecutableCode {}
// SAFETY: as above; no method mutates the code.
unsafe impl Sync for ExecutableCode {}

#[cfg(unix)]
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

/// Code arena chunks mapped since the process started (0 where there is no arena), for tests
/// of the memory behaviour. Not part of the stable API.
#[doc(hidden)]
pub fn chunks_mapped() -> usize {
    #[cfg(target_os = "linux")]
    return arena::chunks_mapped();
    #[cfg(not(target_os = "linux"))]
    0
}

/// Registers the fork handlers that protect the code arena and the stub cache (see the module
/// documentation); idempotent.
#[cfg(target_os = "linux")]
#[allow(unused_imports)] // used by the native stub compiler only
pub(crate) use arena::register_fork_handlers;

static MAPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl ExecutableCode {
    /// Copies `code` into the code arena (or a fresh mapping of its own) and returns it
    /// read-execute.
    ///
    /// # Errors
    /// [`Error::InvalidSize`] for empty code; [`Error::SizeOverflow`] for code too large to map;
    /// [`Error::Unsupported`] when the OS refuses the mapping or the protection change (e.g. a
    /// W^X policy that forbids `PROT_EXEC`), or on targets other than Unix.
    ///
    /// # Safety
    /// `code` must be machine code for this target that is sound to run through
    /// [`ExecutableCode::entry`] as its callers will call it (the arena only copies and maps the
    /// bytes; it cannot tell code from data, and any safe caller could otherwise run arbitrary
    /// bytes).
    pub unsafe fn new(code: &[u8]) -> Result<ExecutableCode> {
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
        match OwnMapping::native() {
            OwnMapping::WriteThenProtect => Self::map_write_then_protect(code, map_len),
            way @ OwnMapping::Jit { toggle } => Self::map_jit(code, map_len, way, toggle),
        }
    }

    /// The `OwnMapping::Jit` way (see the `jit` module), falling back to
    /// `OwnMapping::WriteThenProtect` when `MAP_JIT` is refused (a Hardened Runtime without the
    /// allow-jit entitlement); the error reports both failures.
    #[cfg(target_vendor = "apple")]
    fn map_jit(
        code: &[u8],
        map_len: usize,
        way: OwnMapping,
        toggle: bool,
    ) -> Result<ExecutableCode> {
        match jit::map(code, map_len, way.map_prot(), way.map_flags(), toggle) {
            Ok(ptr) => Ok(Self::own(ptr, code.len(), map_len)),
            Err(jit_error) => Self::map_write_then_protect(code, map_len).map_err(|e| {
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
    #[cfg(all(unix, not(target_vendor = "apple")))]
    fn map_jit(_: &[u8], _: usize, way: OwnMapping, _: bool) -> Result<ExecutableCode> {
        Err(Error::Unsupported {
            type_name: "executable memory".into(),
            reason: format!("{way:?} (MAP_JIT) exists on Apple targets only"),
        })
    }

    /// The `OwnMapping::WriteThenProtect` way: `map_len` bytes mapped read-write, filled, then
    /// switched to read-execute.
    #[cfg(unix)]
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
        Ok(Self::own(ptr, code.len(), map_len))
    }

    /// Takes ownership of a mapping of its own, `map_len` bytes at `ptr` with `code_len` bytes
    /// of code just written: flushes the instruction cache over them and counts the mapping.
    #[cfg(unix)]
    fn own(ptr: *mut u8, code_len: usize, map_len: usize) -> ExecutableCode {
        flush_icache(ptr, code_len);
        MAPPED.fetch_add(map_len, std::sync::atomic::Ordering::Relaxed);
        ExecutableCode {
            ptr,
            code_len,
            backing: Backing::Own { map_len },
        }
    }

    /// Windows: a `VirtualAlloc` region of its own (see the `windows` module).
    #[cfg(windows)]
    fn map_own(code: &[u8]) -> Result<ExecutableCode> {
        let map_len = code
            .len()
            .checked_next_multiple_of(windows::PAGE)
            .ok_or_else(|| Error::SizeOverflow {
                what: format!("code mapping for {} bytes", code.len()),
            })?;
        let ptr = windows::map(code, map_len)?;
        MAPPED.fetch_add(map_len, std::sync::atomic::Ordering::Relaxed);
        Ok(ExecutableCode {
            ptr,
            code_len: code.len(),
            backing: Backing::Own { map_len },
            function_table: None,
        })
    }

    /// Windows: as [`ExecutableCode::new`], for code that carries its unwind information: the
    /// `count` `RUNTIME_FUNCTION`s (12 bytes each: begin, end and `UNWIND_INFO` offsets from the
    /// start of `code`) at byte `offset` of `code` are registered with `RtlAddFunctionTable`
    /// once the region is execute-read, and deleted before it is released. Every range and
    /// `UNWIND_INFO` offset is checked to lie inside `code`.
    ///
    /// # Errors
    /// As [`ExecutableCode::new`]; [`Error::InvalidSize`] when the table is empty, not 4-aligned
    /// or not inside `code`, or an entry names bytes outside `code`; [`Error::Unsupported`]
    /// when the system refuses the table.
    ///
    /// # Safety
    /// As [`ExecutableCode::new`]; in addition each `UNWIND_INFO` must describe its range's
    /// prologue truthfully (the unwinder trusts it).
    #[cfg(windows)]
    pub unsafe fn with_function_table(
        code: &[u8],
        offset: usize,
        count: usize,
    ) -> Result<ExecutableCode> {
        check_function_table(code, offset, count)?;
        // SAFETY: forwarded to the caller.
        let mut exec = unsafe { ExecutableCode::new(code) }?;
        // SAFETY: `exec` owns its region (made by windows::map: Windows has no arena); the
        // table and everything it names are inside the code (checked above); the table is
        // deleted in `drop` before the region is released.
        unsafe { windows::add_function_table(exec.ptr, offset, count) }?;
        exec.function_table = Some(offset);
        Ok(exec)
    }

    #[cfg(not(any(unix, windows)))]
    fn map_own(_code: &[u8]) -> Result<ExecutableCode> {
        Err(Error::Unsupported {
            type_name: "executable memory".into(),
            reason: "generated code is only supported on Unix and Windows targets".into(),
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

/// How a piece of code that gets a mapping of its own (see the module documentation) is made
/// executable on a target.
#[cfg(unix)]
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
#[cfg(unix)]
const APPLE_MAP_JIT: i32 = 0x0800;
#[cfg(target_vendor = "apple")]
const _: () = assert!(APPLE_MAP_JIT == libc::MAP_JIT);

/// The first Darwin kernel major version with `MAP_JIT`: 18, macOS 10.14 (Mojave), which
/// introduced the flag with the Hardened Runtime. JIT compilers that pass it on older kernels
/// report crashes there, so x86-64 Macs before 10.14 (which Rust's `x86_64-apple-darwin`
/// still targets) map read-write then read-execute instead.
#[cfg(unix)]
const MAP_JIT_DARWIN_MAJOR: u32 = 18;

/// The major version in a kernel release string (`uname -r`, e.g. `18.7.0`): its leading
/// decimal digits (at most 4), followed by `.` or the end. `None` for anything else.
#[cfg(any(
    all(target_vendor = "apple", not(target_arch = "aarch64")),
    all(test, unix)
))]
fn darwin_major(release: &[u8]) -> Option<u32> {
    let digits = release.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 4 || !matches!(release.get(digits), None | Some(b'.')) {
        return None;
    }
    release[..digits]
        .iter()
        .try_fold(0u32, |n, &b| Some(n * 10 + u32::from(b - b'0')))
}

#[cfg(unix)]
impl OwnMapping {
    /// The way of the running system (Apple x86-64: asks the kernel's version once).
    fn native() -> OwnMapping {
        #[cfg(all(target_vendor = "apple", not(target_arch = "aarch64")))]
        let major = {
            static MAJOR: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
            *MAJOR.get_or_init(|| jit::kernel_release().and_then(|r| darwin_major(&r)))
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
/// one mapping at a time (0 = not started, or restarted after the walk left the near window).
/// Only a hint: races between threads cost at most a retry.
#[cfg(unix)]
static NEXT_HINT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Near-text ranges unmapped by [`unmap_near_text`], reused as hints before walking further
/// down: each slot is 0 (empty) or a page-aligned address plus the range's length in pages
/// (lengths under one page of pages only). Lock-free, so that a fork never inherits it locked.
#[cfg(unix)]
static FREED_NEAR: [std::sync::atomic::AtomicUsize; 8] =
    [const { std::sync::atomic::AtomicUsize::new(0) }; 8];

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
#[cfg(unix)]
fn map_near_text(map_len: usize, prot: i32, flags: i32, fd: i32) -> *mut libc::c_void {
    use std::sync::atomic::Ordering;
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
#[cfg(unix)]
unsafe fn unmap_near_text(p: *mut u8, map_len: usize) {
    use std::sync::atomic::Ordering;
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
#[cfg(unix)]
fn take_freed_near(map_len: usize, page: usize) -> Option<usize> {
    use std::sync::atomic::Ordering;
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
/// targets `sys_icache_invalidate` (libSystem, as Apple documents for JIT compilers); elsewhere
/// `__clear_cache` (libgcc / compiler-rt), which cleans the data cache to the point of
/// unification and invalidates the instruction cache over the range (`dc cvau` / `ic ivau` on
/// AArch64).
#[cfg(unix)]
#[inline]
fn flush_icache(start: *const u8, len: usize) {
    #[cfg(all(
        target_vendor = "apple",
        not(any(target_arch = "x86_64", target_arch = "x86"))
    ))]
    jit::invalidate_icache(start, len);
    #[cfg(not(any(target_vendor = "apple", target_arch = "x86_64", target_arch = "x86")))]
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

impl Drop for ExecutableCode {
    fn drop(&mut self) {
        match self.backing {
            #[cfg(target_os = "linux")]
            Backing::Arena { rw, granules } => arena::free(self.ptr, rw, granules),
            #[cfg(unix)]
            Backing::Own { map_len } => {
                // SAFETY: the mapping is ours (invariant), a whole mapping made by map_near_text
                // or jit::map (unmap_near_text unmaps it and at most keeps its range as a
                // hint), and nobody may call into it any more: the owner of this value
                // guarantees callers keep it alive while the code can run.
                unsafe { unmap_near_text(self.ptr, map_len) };
                MAPPED.fetch_sub(map_len, std::sync::atomic::Ordering::Relaxed);
            }
            #[cfg(windows)]
            Backing::Own { map_len } => {
                if let Some(offset) = self.function_table {
                    // SAFETY: registered by `with_function_table` with these arguments, not yet
                    // deleted; the region is still mapped.
                    unsafe { windows::delete_function_table(self.ptr, offset) };
                }
                // SAFETY: the region is ours (invariant), made by windows::map, and nobody may
                // call into it any more (as above); its function table is deleted.
                unsafe { windows::unmap(self.ptr) };
                MAPPED.fetch_sub(map_len, std::sync::atomic::Ordering::Relaxed);
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }
}

/// Checks a `RUNTIME_FUNCTION` table of `count` entries at byte `offset` of `code` (see
/// [`ExecutableCode::with_function_table`]): 4-aligned, inside `code`, every entry's code range
/// non-empty and inside `code`, its `UNWIND_INFO` offset 4-aligned with at least the 4-byte
/// header inside `code`.
#[cfg(any(windows, test))]
pub(crate) fn check_function_table(code: &[u8], offset: usize, count: usize) -> Result<()> {
    let bad = |expected: String| Error::InvalidSize {
        size: offset,
        expected,
    };
    let end = count
        .checked_mul(12)
        .and_then(|b| b.checked_add(offset))
        .filter(|&e| count > 0 && offset % 4 == 0 && e <= code.len())
        .ok_or_else(|| {
            bad(format!(
                "a 4-aligned offset of {count} (at least one) 12-byte RUNTIME_FUNCTIONs inside {} bytes of code",
                code.len()
            ))
        })?;
    for (k, e) in code[offset..end].chunks_exact(12).enumerate() {
        let word = |i: usize| u32::from_le_bytes([e[i], e[i + 1], e[i + 2], e[i + 3]]) as usize;
        let (begin, stop, info) = (word(0), word(4), word(8));
        if begin >= stop || stop > code.len() || info % 4 != 0 || info + 4 > code.len() {
            return Err(bad(format!(
                "RUNTIME_FUNCTION {k} ([{begin:#x}, {stop:#x}), UNWIND_INFO at {info:#x}) inside {} bytes of code",
                code.len()
            )));
        }
    }
    Ok(())
}

/// First-fit search for `n` consecutive clear bits in `bits` (bit `i` is `bits[i / 64] >> (i %
/// 64) & 1`); returns the index of the first bit of the run.
#[cfg(any(target_os = "linux", test))]
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
#[cfg(any(target_os = "linux", test))]
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
    use std::cell::UnsafeCell;
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Mutex, MutexGuard};

    use super::{find_clear_run, map_near_text, page_size, set_bits, unmap_near_text};
    use super::{flush_icache, Backing, ExecutableCode, CHUNK_BYTES, GRANULE, MAPPED};

    /// What freed granules are filled with, so that a call through a stale address traps:
    /// `int3` on x86-64; elsewhere zeros (`udf #0` on AArch64). Granules never used are the
    /// memfd's zeros: filling a new chunk up front costs the page faults of all of its pages at
    /// the first link that maps it, so only freed granules are filled.
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    const TRAP: u8 = 0xCC;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
    const TRAP: u8 = 0;

    /// Whether granules that held code before get their read-execute page(s) mapped again
    /// before new code goes into them (see "Reused granules" in the module documentation):
    /// every target but x86, whose instruction fetch is coherent with the stores through the
    /// read-write view. On x86 no memfd stays open and no extra system call is made.
    pub(super) const REMAP_REUSED: bool = !cfg!(any(target_arch = "x86_64", target_arch = "x86"));

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

    /// Cleared once `memfd_create` has rejected `MFD_EXEC` (kernels before 6.3).
    static USE_MFD_EXEC: AtomicBool = AtomicBool::new(true);

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

    /// The locks held across a fork by the forking thread, from `before_fork` to
    /// `after_fork_*`. A static rather than a thread-local (which could be gone during thread
    /// teardown): only the thread holding the arena lock touches it.
    struct ForkLocks(
        UnsafeCell<
            Option<(
                crate::backend::native::CacheLock,
                MutexGuard<'static, Arena>,
            )>,
        >,
    );

    // SAFETY: the cell is only accessed by the thread that holds the arena lock (it is filled
    // after taking the lock and emptied before releasing it), so accesses never overlap.
    unsafe impl Sync for ForkLocks {}

    static FORK_LOCKS: ForkLocks = ForkLocks(UnsafeCell::new(None));

    /// The arena (locked) stored by `before_fork`, for the `after_fork_*` handlers.
    ///
    /// # Safety
    /// Only between `before_fork` and the release in `after_fork`, on the forking thread.
    unsafe fn fork_locks() -> &'static mut Option<(
        crate::backend::native::CacheLock,
        MutexGuard<'static, Arena>,
    )> {
        // SAFETY: this thread holds the arena lock (caller), so nothing else accesses the cell.
        unsafe { &mut *FORK_LOCKS.0.get() }
    }

    unsafe extern "C" fn before_fork() {
        // lock order: stub cache, then arena (as everywhere; nothing else holds both)
        let cache = crate::backend::native::lock_cache_for_fork();
        let mut a = lock();
        for c in a.chunks.values_mut().filter(|c| !c.retired) {
            c.fork_fd = copy_for_child(c);
            if c.fork_fd < 0 {
                c.retired = true;
            }
        }
        // SAFETY: this thread now holds the arena lock.
        unsafe { *fork_locks() = Some((cache, a)) };
    }

    /// A new memfd holding the bytes of chunk `c` (-1 if it cannot be made). The arena lock
    /// is held, so no granule is being filled with `TRAP`; code being copied in by another
    /// thread is in granules the child never calls (their owner does not exist there).
    fn copy_for_child(c: &Chunk) -> i32 {
        let fd = new_memfd(c.len);
        if fd < 0 {
            return -1;
        }
        let mut done = 0;
        while done < c.len {
            // SAFETY: the chunk's read-write view is mapped and readable for `len` bytes.
            let w = unsafe {
                libc::pwrite(fd, c.rw.add(done).cast(), c.len - done, done as libc::off_t)
            };
            if w <= 0 {
                // SAFETY: our fd.
                unsafe { libc::close(fd) };
                return -1;
            }
            done += w as usize;
        }
        fd
    }

    unsafe extern "C" fn after_fork_parent() {
        // SAFETY: called after before_fork on the forking thread.
        let Some((cache, mut a)) = (unsafe { fork_locks() }).take() else {
            return;
        };
        for c in a.chunks.values_mut().filter(|c| c.fork_fd >= 0) {
            // SAFETY: the fd made by before_fork; the child has its own copy of it.
            unsafe { libc::close(c.fork_fd) };
            c.fork_fd = -1;
        }
        drop(a);
        drop(cache);
    }

    unsafe extern "C" fn after_fork_child() {
        // SAFETY: called after before_fork on the forking thread (the child's only thread).
        let Some((cache, mut a)) = (unsafe { fork_locks() }).take() else {
            return;
        };
        for (&rx, c) in a.chunks.iter_mut().filter(|(_, c)| c.fork_fd >= 0) {
            let map = |at: *mut u8, prot: i32| {
                // SAFETY: replaces one of this chunk's views by the same bytes (the copy made
                // under the arena lock) at the same address and length; no other thread
                // exists in the child, and code there runs unchanged after the switch.
                let p = unsafe {
                    libc::mmap(
                        at.cast(),
                        c.len,
                        prot,
                        libc::MAP_SHARED | libc::MAP_FIXED,
                        c.fork_fd,
                        0,
                    )
                };
                p != libc::MAP_FAILED
            };
            let ok = map(rx as *mut u8, libc::PROT_READ | libc::PROT_EXEC)
                && map(c.rw, libc::PROT_READ | libc::PROT_WRITE);
            if !ok {
                c.retired = true;
            }
            flush_icache(rx as *const u8, c.len);
            if REMAP_REUSED && ok {
                // the child's chunk is now the copy: pages are mapped again from its memfd,
                // and the whole read-execute view was just mapped afresh
                // SAFETY: the parent's memfd, inherited by the child; the child's chunk no
                // longer maps it.
                unsafe { libc::close(c.fd) };
                c.fd = c.fork_fd;
                c.dirty.copy_from_slice(&c.bits);
            } else {
                // SAFETY: the fd made by before_fork; the mappings keep the memory.
                unsafe { libc::close(c.fork_fd) };
            }
            c.fork_fd = -1;
        }
        drop(a);
        drop(cache);
    }

    /// Registers the fork handlers (once per process). Called before the first chunk is mapped
    /// and before the stub cache is first used.
    pub(crate) fn register_fork_handlers() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: the handlers are `extern "C"` functions that live for the process; they
            // take and release the stub-cache and arena locks and copy/map chunks, allocating
            // nothing.
            unsafe {
                libc::pthread_atfork(
                    Some(before_fork),
                    Some(after_fork_parent),
                    Some(after_fork_child),
                )
            };
        });
    }

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
    fn new_memfd(len: usize) -> i32 {
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
    fn map_chunk(len: usize) -> Option<(*mut u8, *mut u8, i32)> {
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

    /// Whether any of bits `start..start + n` is set.
    fn any_set(bits: &[u64], start: usize, n: usize) -> bool {
        (start..start + n).any(|g| bits[g / 64] >> (g % 64) & 1 != 0)
    }

    fn unmap_chunk(rx: usize, c: &Chunk) {
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
    #[cfg(all(test, target_arch = "x86_64"))]
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

#[cfg(all(test, unix))]
mod own_mapping_tests {
    use super::*;

    #[test]
    fn apple_targets_map_jit_and_toggle_on_arm64_only() {
        assert_eq!(
            OwnMapping::for_target(true, true, None),
            OwnMapping::Jit { toggle: true }
        );
        for major in [18, 19, 24, 25] {
            assert_eq!(
                OwnMapping::for_target(true, false, Some(major)),
                OwnMapping::Jit { toggle: false }
            );
        }
        // x86-64 Macs before 10.14 (Darwin 18), or of unknown version: no MAP_JIT
        for major in [None, Some(16), Some(17)] {
            assert_eq!(
                OwnMapping::for_target(true, false, major),
                OwnMapping::WriteThenProtect
            );
        }
        for aarch64 in [false, true] {
            for major in [None, Some(5), Some(24)] {
                assert_eq!(
                    OwnMapping::for_target(false, aarch64, major),
                    OwnMapping::WriteThenProtect
                );
            }
        }
        #[cfg(target_os = "linux")]
        assert_eq!(OwnMapping::native(), OwnMapping::WriteThenProtect);
    }

    #[test]
    fn darwin_major_reads_the_leading_number_only() {
        assert_eq!(darwin_major(b"18.7.0"), Some(18));
        assert_eq!(darwin_major(b"24.1.0"), Some(24));
        assert_eq!(darwin_major(b"9"), Some(9));
        assert_eq!(darwin_major(b"0009.1"), Some(9));
        for bad in [
            &b""[..],
            b".1",
            b"x18",
            b"18x",
            b"18-rc",
            b"12345.0",
            b" 18.0",
        ] {
            assert_eq!(
                darwin_major(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn write_then_protect_is_never_writable_and_executable() {
        let way = OwnMapping::WriteThenProtect;
        assert_eq!(way.map_prot(), libc::PROT_READ | libc::PROT_WRITE);
        assert_eq!(way.map_flags(), libc::MAP_PRIVATE | libc::MAP_ANONYMOUS);
        assert_eq!(way.final_prot(), Some(libc::PROT_READ | libc::PROT_EXEC));
    }

    #[test]
    fn jit_maps_private_anonymous_rwx_with_map_jit_and_no_protection_change() {
        for toggle in [false, true] {
            let way = OwnMapping::Jit { toggle };
            assert_eq!(
                way.map_prot(),
                libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC
            );
            assert_eq!(
                way.map_flags(),
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | APPLE_MAP_JIT
            );
            assert_eq!(way.map_flags() & libc::MAP_SHARED, 0);
            assert_eq!(way.final_prot(), None);
        }
        assert_eq!(APPLE_MAP_JIT, 0x0800);
    }
}

#[cfg(all(test, not(miri), unix, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// The `/proc/self/maps` line of the mapping holding `addr`.
    #[cfg(target_os = "linux")]
    fn maps_line(addr: usize) -> String {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        maps.lines()
            .find(|l| {
                let (range, _) = l.split_once(' ').unwrap();
                let (s, e) = range.split_once('-').unwrap();
                let (s, e) = (
                    usize::from_str_radix(s, 16).unwrap(),
                    usize::from_str_radix(e, 16).unwrap(),
                );
                (s..e).contains(&addr)
            })
            .unwrap()
            .to_owned()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn own_mapping_runs_and_ends_read_execute() {
        // mov eax, 9 ; ret
        let code = ExecutableCode::map_own(&[0xB8, 9, 0, 0, 0, 0xC3]).unwrap();
        assert!(matches!(code.backing, Backing::Own { map_len } if map_len == page_size()));
        // SAFETY: the bytes are a complete `extern "C" fn() -> i32`.
        let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(code.entry()) };
        assert_eq!(f(), 9);
        let line = maps_line(code.entry() as usize);
        assert!(line.contains(" r-xp "), "{line}");
    }

    #[test]
    fn runs_generated_code() {
        // mov eax, 42 ; ret
        // SAFETY: a complete function, called as one below.
        let code = unsafe { ExecutableCode::new(&[0xB8, 42, 0, 0, 0, 0xC3]) }.unwrap();
        // SAFETY: the bytes are a complete `extern "C" fn() -> i32`.
        let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(code.entry()) };
        assert_eq!(f(), 42);
        assert_eq!(code.len(), 6);
        assert_eq!(code.bytes(), vec![0xB8, 42, 0, 0, 0, 0xC3]);
        assert_eq!(code.entry() as usize % GRANULE, 0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn mapping_is_not_writable() {
        // SAFETY: `ret`.
        let code = unsafe { ExecutableCode::new(&[0xC3]) }.unwrap();
        let line = maps_line(code.entry() as usize);
        assert!(line.contains(" r-xs ") || line.contains(" r-xp "), "{line}");
    }

    #[test]
    fn neighbours_share_a_chunk_and_survive_each_other() {
        // mov eax, imm32 ; ret
        // SAFETY: `mov eax, v; ret`, a complete function.
        let make = |v: u8| unsafe { ExecutableCode::new(&[0xB8, v, 0, 0, 0, 0xC3]) }.unwrap();
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
        // SAFETY: only mapped and read back, never called.
        let code = unsafe { ExecutableCode::new(&bytes) }.unwrap();
        // SAFETY: nops followed by `mov eax, 7; ret`.
        let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(code.entry()) };
        assert_eq!(f(), 7);
        assert_eq!(code.bytes(), bytes);
    }

    #[test]
    fn map_unmap_cycles_stay_near_text() {
        let anchor = map_near_text as *const () as usize;
        // 8 MiB ranges are given back for reuse; 40 MiB ones (10,240 pages) are not, so their
        // walk leaves the 2 GiB window after ~50 cycles and must restart from the top
        for (len, cycles) in [(8usize << 20, 1000), (40 << 20, 200)] {
            for i in 0..cycles {
                let p = map_near_text(
                    len,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                );
                assert_ne!(p, libc::MAP_FAILED);
                assert!(
                    (p as usize).abs_diff(anchor) < NEAR,
                    "cycle {i} of {len} bytes: {p:?} is far from {anchor:#x}"
                );
                // SAFETY: the mapping just made, referred to by nothing.
                unsafe { unmap_near_text(p.cast(), len) };
            }
        }
    }

    #[test]
    fn empty_code_is_an_error() {
        assert!(matches!(
            // SAFETY: empty: rejected before anything is mapped.
            unsafe { ExecutableCode::new(&[]) },
            Err(Error::InvalidSize { size: 0, .. })
        ));
    }
}

#[cfg(test)]
mod function_table_tests {
    use super::*;

    /// 16 bytes of "code", an UNWIND_INFO header at 16 and one RUNTIME_FUNCTION at 24.
    fn image(begin: u32, end: u32, info: u32) -> Vec<u8> {
        let mut b = vec![0xC3u8; 16];
        b.extend([1, 0, 0, 0, 0, 0, 0, 0]);
        for w in [begin, end, info] {
            b.extend(w.to_le_bytes());
        }
        b
    }

    #[test]
    fn a_table_inside_the_code_is_accepted_and_anything_else_named() {
        assert!(check_function_table(&image(0, 16, 16), 24, 1).is_ok());
        for (code, offset, count) in [
            (image(0, 16, 16), 24, 0),          // empty
            (image(0, 16, 16), 22, 1),          // misaligned
            (image(0, 16, 16), 28, 1),          // past the end
            (image(0, 16, 16), 24, usize::MAX), // overflowing
            (image(8, 8, 16), 24, 1),           // empty range
            (image(0, 64, 16), 24, 1),          // range past the end
            (image(0, 16, 18), 24, 1),          // misaligned UNWIND_INFO
            (image(0, 16, 34), 24, 1),          // UNWIND_INFO past the end
        ] {
            let err = check_function_table(&code, offset, count).unwrap_err();
            assert!(matches!(err, Error::InvalidSize { .. }), "{err}");
            assert!(err.to_string().contains("RUNTIME_FUNCTION"), "{err}");
        }
    }
}

#[cfg(all(test, windows, target_arch = "x86_64"))]
mod windows_tests {
    use super::*;

    #[test]
    fn code_runs_from_its_own_region_and_is_counted() {
        let before = mapped_code_bytes();
        // SAFETY: `mov eax, 42; ret`, called below as the `extern "C" fn() -> i32` it is.
        let code = unsafe { ExecutableCode::new(&[0xB8, 42, 0, 0, 0, 0xC3]) }.unwrap();
        assert_eq!(code.entry() as usize % GRANULE, 0);
        assert_eq!(code.bytes(), [0xB8, 42, 0, 0, 0, 0xC3]);
        assert!(mapped_code_bytes() >= before + windows::PAGE);
        // SAFETY: the bytes are a complete `extern "C" fn() -> i32`.
        let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(code.entry()) };
        assert_eq!(f(), 42);
        drop(code);
    }

    #[test]
    fn empty_code_is_rejected() {
        // SAFETY: rejected before anything is mapped.
        let err = unsafe { ExecutableCode::new(&[]) }.unwrap_err();
        assert!(matches!(err, Error::InvalidSize { size: 0, .. }), "{err}");
    }
}

/// Granules reused for new code run the new code: on AArch64 under `qemu-aarch64` (user mode)
/// these fail unless reused granules get their read-execute page mapped again (qemu neither
/// sees the write through the read-write view nor acts on `__clear_cache`); natively on x86-64
/// they check the same reuse pattern.
#[cfg(all(
    test,
    not(miri),
    target_os = "linux",
    any(target_arch = "aarch64", target_arch = "x86_64")
))]
mod reuse_tests {
    use super::*;

    /// A function returning `v` after `pad` no-op instructions (`nop`s then `movz w0, #v; ret`
    /// on AArch64, `nop`s then `mov eax, v; ret` on x86-64).
    fn returning(v: u16, pad: usize) -> Vec<u8> {
        #[cfg(target_arch = "aarch64")]
        {
            let nop = 0xD503_201Fu32;
            let movz = 0x5280_0000u32 | (u32::from(v) << 5);
            let ret = 0xD65F_03C0u32;
            std::iter::repeat_n(nop, pad)
                .chain([movz, ret])
                .flat_map(u32::to_le_bytes)
                .collect()
        }
        #[cfg(target_arch = "x86_64")]
        {
            let [lo, hi] = v.to_le_bytes();
            std::iter::repeat_n(0x90u8, pad)
                .chain([0xB8, lo, hi, 0, 0, 0xC3])
                .collect()
        }
    }

    fn place(v: u16, pad: usize) -> ExecutableCode {
        // SAFETY: a complete `extern "C" fn() -> i32` (see `returning`), called as one.
        unsafe { ExecutableCode::new(&returning(v, pad)) }.unwrap()
    }

    fn call(c: &ExecutableCode) -> i32 {
        // SAFETY: the code is a complete `extern "C" fn() -> i32` and lives across the call.
        let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(c.entry()) };
        f()
    }

    /// Places code returning `a`, calls it, frees it, places code returning `b` of the same
    /// size and calls that: `true` if the second landed at the first one's address. Every
    /// call must return its own code's value wherever it landed.
    fn replace_once(a: u16, b: u16, pad: usize) -> bool {
        let first = place(a, pad);
        assert_eq!(call(&first), i32::from(a), "pad {pad}");
        // translated more than once, as a hot stub is
        assert_eq!(call(&first), i32::from(a), "pad {pad}");
        let at = first.entry();
        drop(first);
        let second = place(b, pad);
        let same = second.entry() == at;
        assert_eq!(
            call(&second),
            i32::from(b),
            "pad {pad}, {} address",
            if same { "same" } else { "another" }
        );
        same
    }

    /// Other tests allocate from the arena concurrently and can take the freed granule first;
    /// a size counts once code returning the second value ran at the first one's address.
    #[test]
    fn a_reused_granule_runs_the_new_code() {
        for pad in 0..64 {
            let hit = (0..50u16).any(|round| replace_once(1 + 2 * round, 2 + 2 * round, pad));
            assert!(hit, "pad {pad}: the freed granule was never reused");
        }
        #[cfg(target_arch = "aarch64")]
        assert!(arena::remaps() > 0);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(arena::remaps(), 0);
    }

    /// After `fork`, the child's chunks are its own copies: a granule it frees and reuses runs
    /// the child's new code (its pages are mapped again from the child's memfd, not the
    /// parent's), and the parent's code in that granule is untouched.
    #[test]
    fn a_forked_child_reuses_granules_of_its_own_copy() {
        let kept = place(11, 0);
        let freed = place(12, 3);
        assert_eq!(call(&freed), 12);
        // SAFETY: the child only calls into the arena (whose fork handlers leave it usable)
        // and leaves through `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // single-threaded here: holding every piece placed, first fit reaches the freed
            // granule after at most the other free runs of the chunks
            let at = freed.entry();
            drop(freed);
            let mut held = Vec::new();
            let mut status = 2;
            for round in 0..20_000u32 {
                let v = 100 + (round % 1000) as u16;
                let again = place(v, 3);
                if call(&again) != i32::from(v) || call(&kept) != 11 {
                    status = 1;
                    break;
                }
                if again.entry() == at {
                    status = 0;
                    break;
                }
                held.push(again);
            }
            // SAFETY: ends the child without running the parent's test harness.
            unsafe { libc::_exit(status) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child status {status:#x}"
        );
        assert_eq!(call(&freed), 12);
        assert_eq!(call(&kept), 11);
    }

    /// The same from four threads at once, each also keeping one piece of code placed and
    /// calling it between its replacements (its neighbours' pages are mapped again while it
    /// runs).
    #[test]
    fn reused_granules_run_the_new_code_across_threads() {
        let hits: usize = std::thread::scope(|s| {
            let threads: Vec<_> = (0..4u16)
                .map(|t| {
                    s.spawn(move || {
                        let kept = place(1000 + t, 0);
                        let mut hits = 0;
                        for round in 0..200u16 {
                            let v = 2000 + 100 * t + 2 * (round % 50);
                            if replace_once(v, v + 1, usize::from(round % 7)) {
                                hits += 1;
                            }
                            assert_eq!(call(&kept), i32::from(1000 + t));
                        }
                        hits
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).sum()
        });
        assert!(hits > 0, "no freed granule was reused");
    }
}
