//! Executable memory for generated machine code (compiled downcall stubs, upcall stubs).
//!
//! W^X: a mapping is created read-write, filled, then switched to read-execute with
//! `mprotect` before its address is ever handed out; it is never writable and executable at
//! once, and it is never made writable again. Each [`ExecutableCode`] owns its own mapping
//! (rounded up to the page size, usually 4096 bytes), unmapped on drop.
//!
//! # Invariants
//! - `ptr..ptr+map_len` is a private anonymous mapping owned by exactly one `ExecutableCode`.
//! - Once constructed, the mapping is `PROT_READ | PROT_EXEC` and its first `code_len` bytes are
//!   the code that was given.

use crate::error::{Error, Result};

/// A block of machine code in its own read-execute mapping. `Send + Sync` (the code is
/// immutable); dropping it unmaps the code, so whoever calls into it must keep it alive.
#[derive(Debug)]
pub struct ExecutableCode {
    ptr: *mut u8,
    map_len: usize,
    code_len: usize,
}

// SAFETY: the mapping is immutable after construction (read-execute only) and owned by this
// value; sharing its address between threads is sound.
unsafe impl Send for ExecutableCode {}
// SAFETY: as above; no method mutates the mapping.
unsafe impl Sync for ExecutableCode {}

fn os_error(what: &str) -> Error {
    Error::Unsupported {
        type_name: "executable memory".into(),
        reason: format!("{what} failed: {}", std::io::Error::last_os_error()),
    }
}

impl ExecutableCode {
    /// Copies `code` into a fresh mapping and makes it read-execute.
    ///
    /// # Errors
    /// [`Error::InvalidSize`] for empty code; [`Error::Unsupported`] when the OS refuses the
    /// mapping or the protection change (e.g. a W^X policy that forbids `PROT_EXEC`), or on
    /// targets other than Unix.
    pub fn new(code: &[u8]) -> Result<ExecutableCode> {
        if code.is_empty() {
            return Err(Error::InvalidSize {
                size: 0,
                expected: "at least one byte of machine code".into(),
            });
        }
        Self::map(code)
    }

    #[cfg(unix)]
    fn map(code: &[u8]) -> Result<ExecutableCode> {
        // SAFETY: sysconf has no memory-safety preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = if page > 0 { page as usize } else { 4096 };
        let map_len =
            code.len()
                .checked_next_multiple_of(page)
                .ok_or_else(|| Error::SizeOverflow {
                    what: format!("code mapping for {} bytes", code.len()),
                })?;
        let ptr = map_near_text(map_len, page);
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
        Ok(ExecutableCode {
            ptr,
            map_len,
            code_len: code.len(),
        })
    }

    #[cfg(not(unix))]
    fn map(_code: &[u8]) -> Result<ExecutableCode> {
        Err(Error::Unsupported {
            type_name: "executable memory".into(),
            reason: "generated code is only supported on Unix targets".into(),
        })
    }

    /// The address of the first instruction.
    pub fn entry(&self) -> *const u8 {
        self.ptr
    }

    /// The code's length in bytes (without the page rounding).
    pub fn len(&self) -> usize {
        self.code_len
    }

    /// Always `false`: empty code is rejected at construction.
    pub fn is_empty(&self) -> bool {
        self.code_len == 0
    }

    /// A copy of the code bytes (for disassembly in tests and tools).
    pub fn bytes(&self) -> Vec<u8> {
        // SAFETY: the mapping is readable for code_len bytes and never written again.
        unsafe { std::slice::from_raw_parts(self.ptr, self.code_len).to_vec() }
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

/// A fresh private anonymous read-write mapping of `map_len` bytes, placed within 2 GiB of
/// gatun's own machine code when the address space allows (address hints below the
/// executable's text, never `MAP_FIXED`, so nothing existing is ever replaced), else wherever
/// the kernel puts it. Returns `MAP_FAILED` on failure.
///
/// Why: calls from Rust into a stub and the stub's jump back into code of the executable were
/// measured ~1.6 ns slower per call when the stub sat in the far `mmap` region (0x7f...)
/// than when the same instructions sat next to the executable's text (x86-64 branch target
/// prediction for branches whose target is more than 2/4 GiB away; JITs such as LuaJIT place
/// their machine code near the executable for the same reason).
#[cfg(unix)]
fn map_near_text(map_len: usize, page: usize) -> *mut libc::c_void {
    use std::sync::atomic::Ordering;
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
        // SAFETY: an anonymous private mapping; the address is only a hint (no MAP_FIXED), so
        // no existing mapping is touched.
        let p = unsafe {
            libc::mmap(
                hint as *mut libc::c_void,
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            break;
        }
        if near(p as usize) {
            return p;
        }
        // SAFETY: the mapping just created, referred to by nothing else.
        unsafe { libc::munmap(p, map_len) };
    }
    // SAFETY: an anonymous private mapping with no address hint has no preconditions.
    unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    }
}

impl Drop for ExecutableCode {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: the mapping is ours (invariant) and nobody may call into it any more: the
        // owner of this value guarantees callers keep it alive while the code can run.
        unsafe {
            libc::munmap(self.ptr.cast(), self.map_len);
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
    }

    #[test]
    fn mapping_is_not_writable() {
        let code = ExecutableCode::new(&[0xC3]).unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let start = format!("{:x}-", code.entry() as usize);
        let line = maps.lines().find(|l| l.starts_with(&start)).unwrap();
        assert!(line.contains(" r-xp "), "{line}");
    }

    #[test]
    fn empty_code_is_an_error() {
        assert!(matches!(
            ExecutableCode::new(&[]),
            Err(Error::InvalidSize { size: 0, .. })
        ));
    }
}
