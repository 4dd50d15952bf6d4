//! Executable memory for generated machine code (compiled downcall stubs, upcall stubs).
//!
//! **The code arena** (Linux and Windows). Code lives in 64 KiB chunks ([`CHUNK_BYTES`]; a
//! chunk is larger when one piece of code needs more) allocated in 16-byte granules
//! ([`GRANULE`]), so a 27-byte upcall stub takes 32 bytes and a 230-byte downcall stub 240. A
//! chunk is one block of shared memory mapped twice: a read-execute view that callers jump
//! into, and a read-write view, elsewhere, through which code is written. On Linux the block
//! is a `memfd` and the read-execute view is placed near gatun's own text (see
//! `map_near_text`); on Windows it is a pagefile-backed section (`CreateFileMappingW`) with two
//! `MapViewOfFile` views. W^X holds per mapping: no address is ever both writable and
//! executable, and no mapping ever changes protection, so a live piece of code never becomes
//! non-executable while a neighbour in the same chunk is written or freed. The physical pages
//! stay writable through the read-write view for as long as the chunk is mapped (a weaker
//! guarantee than "never writable again": a stray write through that view would change live
//! code). Dropping an [`ExecutableCode`] fills its granules with `int3` (on x86-64, a call
//! through a stale address traps) and returns them to the chunk; granules never used are the
//! fresh chunk's zeros, not `int3`. A chunk whose granules are all free is unmapped (one empty
//! chunk is kept as a spare so that linking and dropping one signature in a loop does not map
//! and unmap every time). The allocator is the same on both systems (the `arena` module); only
//! the mapping of a chunk differs. Where the chunk's memory or its mapping is refused (and on
//! Unix targets other than Linux), each piece of code gets its own private mapping instead,
//! mapped read-write, filled, switched to read-execute and never made writable again; a
//! failure that will not go away (the kernel or a security policy refusing the memfd, the
//! section or its executable view) is remembered, so later code goes straight to its own
//! mapping.
//!
//! **Apple targets** (`target_vendor = "apple"`; checked for macOS) have no arena: each piece
//! of code gets its own `MAP_JIT` mapping (read-write-execute; on Apple silicon writable or
//! executable per thread, with `pthread_jit_write_protect_np` bracketing the copy), the way
//! Apple documents for JIT compilers; see the `jit` module. It takes whole pages (16 KiB on
//! Apple silicon) per piece of code. Where `MAP_JIT` is refused (a Hardened Runtime without the
//! `allow-jit` entitlement), the read-write then read-execute mapping above is tried instead;
//! x86-64 Macs older than macOS 10.14, which lack `MAP_JIT`, take that mapping directly.
//! `unix::OwnMapping` names the way each target takes. This path is compiled for
//! `aarch64-apple-darwin` and `x86_64-apple-darwin` but not executed by gatun's tests, which
//! run on Linux.
//!
//! **Windows.** A piece of code's own mapping (when the arena is refused) is a `VirtualAlloc`
//! region, written read-write, switched to execute-read (`VirtualProtect`) and never writable
//! again; see the `windows` module. Code that carries its unwind information (a compiled stub
//! with a frame) is placed with `ExecutableCode::with_function_table` (Windows only), which
//! registers its `RUNTIME_FUNCTION` table with `RtlAddFunctionTable` (one table per piece of
//! code, its RVAs relative to the code's entry) and deletes it when the code drops, before its
//! granules are filled and freed. Tested for `x86_64-pc-windows-gnu` under Wine.
//!
//! The arena's bookkeeping (one bitmap per chunk) is behind one mutex, held for the bitmap work
//! and for the `int3` fill of freed granules (so that a fork sees a granule either live or
//! filled, never half-filled): chunks are mapped and unmapped, and new code is copied (and its
//! function table registered), outside it.
//!
//! **Instruction caches.** Code is written through the read-write view (or before the
//! protection change of an own mapping) and then executed through another address. x86-64
//! keeps instruction fetch coherent with such stores; on other architectures every write of
//! new code is followed by a cache flush over its read-execute range before the address is
//! handed out (`flush_icache`): `sys_icache_invalidate` on Apple targets,
//! `FlushInstructionCache` on Windows (called on every architecture, as Windows documents),
//! `__riscv_flush_icache` on RISC-V Linux, `__clear_cache` elsewhere.
//!
//! **Reused granules** (Linux, every target but x86) are mapped again before new code goes
//! into them, so that an emulator translating guest code (`qemu-aarch64`) runs the new code;
//! see the `arena::memfd` module. **fork** (Linux): the arena's `pthread_atfork` handlers give
//! the child its own copy of every chunk, and take the stub cache's lock (`stub_cache`) and
//! then the arena lock around the fork so that the child inherits neither locked; see the
//! `arena::fork` module. Windows has no `fork`.
//!
//! The compiled downcall stubs of every ABI (`compiled::CompiledStub`) are placed here, and
//! shared through the stub cache (`stub_cache`).
//!
//! One module per platform: `arena` (Linux and Windows: the chunks and their granules; the
//! mapping of a chunk in `arena::memfd` on Linux, with the fork handlers in `arena::fork`, and
//! in `arena::section` on Windows), `unix` (mappings of their own, placement near gatun's text,
//! instruction-cache flushes), `jit` (Apple's `MAP_JIT`), `windows` (regions of their own,
//! function tables, instruction-cache flushes), `none` (every other target: no executable
//! memory).
//!
//! # Invariants
//! - An `ExecutableCode`'s first `len` bytes at `ptr` are the code it was given, readable and
//!   executable for as long as it lives; on targets other than x86, the instruction cache has
//!   been cleared over them before `ptr` is handed out.
//! - Its `Backing` says who owns the memory: granules of an arena chunk (see the `arena`
//!   module's invariants) or a mapping of its own (see the `unix` and `windows` modules),
//!   freed by its drop and by nothing else.
//! - Windows: a `function_table` offset names a table registered with the entry as base; the
//!   drop deletes it before the memory is freed.

use crate::error::{Error, Result};

#[cfg(any(target_os = "linux", windows))]
mod arena;
#[cfg(any(target_os = "linux", windows, test))]
mod bitmap;
#[cfg(any(gatun_executes, test))]
pub(crate) mod compiled;
#[cfg(any(windows, test))]
pub(crate) mod function_table;
#[cfg(target_vendor = "apple")]
mod jit;
#[cfg(any(gatun_executes, test, target_os = "linux"))]
pub(crate) mod stub_cache;
#[cfg(all(test, gatun_backend = "x86_64_sysv"))]
mod tests;

// The platform's mappings of their own, as `os`.
#[cfg(not(any(unix, windows)))]
mod none;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;
#[cfg(not(any(unix, windows)))]
use none as os;
#[cfg(unix)]
use unix as os;
#[cfg(windows)]
use windows as os;

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
/// # #[cfg(all(gatun_backend = "x86_64_sysv", feature = "internals"))] {
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
    /// Windows: the offset in the code of its `RUNTIME_FUNCTION` table, registered (with the
    /// entry as base) until the drop, which deletes it before the memory is freed.
    #[cfg(windows)]
    function_table: Option<usize>,
}

/// Who owns an [`ExecutableCode`]'s memory.
#[derive(Debug)]
enum Backing {
    /// Granules of an arena chunk: `granules` of them, written through `rw`.
    #[cfg(any(target_os = "linux", windows))]
    Arena { rw: *mut u8, granules: usize },
    /// A mapping (region) of its own, made and released by the platform module (`os`).
    Own(os::Own),
}

// SAFETY: the code is immutable while this value lives (only its drop writes, through the
// arena's read-write view, after which nothing may call it) and owned by this value; sharing
// its address between threads is sound.
unsafe impl Send for ExecutableCode {}
// SAFETY: as above; no method mutates the code.
unsafe impl Sync for ExecutableCode {}

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
    #[cfg(any(target_os = "linux", windows))]
    return arena::chunks_mapped();
    #[cfg(not(any(target_os = "linux", windows)))]
    0
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
        #[cfg(any(target_os = "linux", windows))]
        if let Some(c) = arena::allocate(code) {
            return Ok(c);
        }
        os::map_own(code)
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

impl Drop for ExecutableCode {
    fn drop(&mut self) {
        #[cfg(windows)]
        if let Some(offset) = self.function_table {
            // SAFETY: registered by `with_function_table` with the entry as base and this
            // offset, not yet deleted; the memory is freed only below.
            unsafe { os::delete_function_table(self.ptr, offset) };
        }
        match &self.backing {
            #[cfg(any(target_os = "linux", windows))]
            Backing::Arena { rw, granules } => arena::free(self.ptr, *rw, *granules),
            // SAFETY: the mapping is ours (invariant) and nobody may call into it any more: the
            // owner of this value guarantees callers keep it alive while the code can run.
            Backing::Own(own) => unsafe { os::unmap(self.ptr, own) },
        }
    }
}
