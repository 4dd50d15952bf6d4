//! Executable memory on Windows besides the code arena, and the function tables of generated
//! code.
//!
//! **Regions of their own.** Code goes into the code arena (the `arena` module: sections
//! mapped twice). Where the arena is refused (see its `section` module), each piece of code
//! gets its own `VirtualAlloc` region instead, committed read-write, filled, switched to
//! execute-read with `VirtualProtect` and never made writable again (W^X per region), then
//! released with `VirtualFree(MEM_RELEASE)` when its [`ExecutableCode`] drops. Such a region
//! takes whole pages and, since `VirtualAlloc` reserves address space in 64 KiB units, 64 KiB
//! of address space. `FlushInstructionCache` ([`flush_icache`]) is called over new code before
//! its address is handed out, in the arena as here, as Windows documents for code written at
//! run time (a no-op on x86-64, required on AArch64).
//!
//! **Function tables.** Generated code that moves the stack pointer (a compiled stub's frame)
//! must be described to Windows' unwinder, or a stack walk through it (an exception, a
//! debugger, `RtlCaptureStackBackTrace`) stops or goes astray there. Such code carries its
//! `RUNTIME_FUNCTION` table (and the `UNWIND_INFO` it points to) after its instructions, with
//! RVAs relative to the code's first byte; [`add_function_table`] registers it with
//! `RtlAddFunctionTable`, with that first byte's address as the base, once the code is in
//! place (granules of an arena chunk or a region of its own: the table is read through the
//! execute-read view), and [`delete_function_table`] removes it with `RtlDeleteFunctionTable`
//! when the code drops, before its memory is freed (the arena then fills it with `int3` and
//! may give it to other code, which registers its own table). Each piece of code is one
//! dynamic table covering only its own bytes, so tables of neighbours in a chunk never
//! overlap.
//!
//! # Invariants
//! - A region returned by [`map_region`] is a whole `VirtualAlloc` allocation owned by its caller,
//!   execute-read, whose first `code.len()` bytes are `code`; nothing else writes it.
//! - [`release_region`] releases a region from [`map_region`] once nothing may execute it any
//!   more, and after its code's function table (if one was added) has been deleted.
//! - A registered table lies inside its code (checked by the caller before placing it), so it
//!   stays readable for as long as it is registered, and is deleted before the code's memory
//!   is freed.

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use super::{Backing, ExecutableCode, MAPPED};
use crate::error::{Error, Result};

/// A region of its own: `map_len` bytes made by [`map_region`].
#[derive(Debug)]
pub(super) struct Own {
    /// The region's length in bytes (whole pages).
    map_len: usize,
}

/// A `VirtualAlloc` region of its own holding `code`, execute-read.
///
/// # Errors
/// [`Error::SizeOverflow`] for code too large to map; [`Error::Unsupported`] as
/// [`map_region`].
pub(super) fn map_own(code: &[u8]) -> Result<ExecutableCode> {
    let map_len = code
        .len()
        .checked_next_multiple_of(PAGE)
        .ok_or_else(|| Error::SizeOverflow {
            what: format!("code mapping for {} bytes", code.len()),
        })?;
    let ptr = map_region(code, map_len)?;
    MAPPED.fetch_add(map_len, Ordering::Relaxed);
    Ok(ExecutableCode {
        ptr,
        code_len: code.len(),
        backing: Backing::Own(Own { map_len }),
        function_table: None,
    })
}

/// Releases the region at `ptr`.
///
/// # Safety
/// `ptr` and `own` describe a region made by [`map_own`] that nothing may call into any more,
/// whose function table (if one was added) has been deleted.
pub(super) unsafe fn unmap(ptr: *mut u8, own: &Own) {
    // SAFETY: the region is ours, made by map_region, and nobody may call into it any more
    // (caller); its function table is deleted (caller).
    unsafe { release_region(ptr) };
    MAPPED.fetch_sub(own.map_len, Ordering::Relaxed);
}

impl ExecutableCode {
    /// Windows only: as [`ExecutableCode::new`], for code that carries its unwind information: the
    /// `count` `RUNTIME_FUNCTION`s (12 bytes each: begin, end and `UNWIND_INFO` offsets from the
    /// start of `code`) at byte `offset` of `code` are registered with `RtlAddFunctionTable`
    /// (base: the code's entry) once the code is in place, and deleted when the value drops,
    /// before the memory is freed. Every range and `UNWIND_INFO` offset is checked to lie
    /// inside `code`.
    ///
    /// # Errors
    /// As [`ExecutableCode::new`]; [`Error::InvalidSize`] when the table is empty, not 4-aligned
    /// or not inside `code`, or an entry names bytes outside `code`; [`Error::Unsupported`]
    /// when the system refuses the table.
    ///
    /// # Safety
    /// As [`ExecutableCode::new`]; in addition each `UNWIND_INFO` must describe its range's
    /// prologue truthfully (the unwinder trusts it).
    pub unsafe fn with_function_table(
        code: &[u8],
        offset: usize,
        count: usize,
    ) -> Result<ExecutableCode> {
        super::function_table::check(code, offset, count)?;
        // SAFETY: forwarded to the caller.
        let mut exec = unsafe { ExecutableCode::new(code) }?;
        // SAFETY: `exec` owns the memory holding `code` at its entry, readable until it drops;
        // the table and everything it names are inside the code (checked above); the table is
        // deleted by `exec`'s drop before the memory is freed (if registering fails, `exec`
        // drops with no table to delete).
        unsafe { add_function_table(exec.ptr, offset, count) }?;
        exec.function_table = Some(offset);
        Ok(exec)
    }
}

/// Page size of x86-64 and AArch64 Windows, in bytes: the unit regions are counted in.
pub(super) const PAGE: usize = 4096;

/// [`PAGE`], as the arena asks every system.
pub(super) fn page_size() -> usize {
    PAGE
}

const MEM_COMMIT: u32 = 0x1000;
const MEM_RESERVE: u32 = 0x2000;
const MEM_RELEASE: u32 = 0x8000;
const PAGE_READWRITE: u32 = 0x04;
const PAGE_EXECUTE_READ: u32 = 0x20;

#[link(name = "kernel32")]
extern "system" {
    fn VirtualAlloc(address: *mut c_void, size: usize, kind: u32, protect: u32) -> *mut c_void;
    fn VirtualProtect(address: *mut c_void, size: usize, protect: u32, old: *mut u32) -> i32;
    fn VirtualFree(address: *mut c_void, size: usize, kind: u32) -> i32;
    fn FlushInstructionCache(process: *mut c_void, address: *const c_void, size: usize) -> i32;
    fn GetCurrentProcess() -> *mut c_void;
    fn RtlAddFunctionTable(table: *const RuntimeFunction, count: u32, base: u64) -> u8;
    fn RtlDeleteFunctionTable(table: *const RuntimeFunction) -> u8;
}

/// A `RUNTIME_FUNCTION` (winnt.h, x64): the code range `[begin, end)` and its `UNWIND_INFO`,
/// all as byte offsets (RVAs) from the base address given at registration.
#[repr(C)]
pub(super) struct RuntimeFunction {
    begin: u32,
    end: u32,
    unwind_info: u32,
}

/// Bytes of one `RuntimeFunction`.
pub(super) const RUNTIME_FUNCTION_BYTES: usize = std::mem::size_of::<RuntimeFunction>();
const _: () = assert!(RUNTIME_FUNCTION_BYTES == 12);

fn os_error(what: &str) -> Error {
    Error::Unsupported {
        type_name: "executable memory".into(),
        reason: format!("{what} failed: {}", std::io::Error::last_os_error()),
    }
}

/// A new execute-read region of `map_len` bytes (a multiple of [`PAGE`], at least
/// `code.len()`) holding `code`.
///
/// # Errors
/// [`Error::Unsupported`] naming the call that failed (`VirtualAlloc`, `VirtualProtect`) and
/// the system's message.
fn map_region(code: &[u8], map_len: usize) -> Result<*mut u8> {
    debug_assert!(map_len >= code.len() && map_len % PAGE == 0);
    // SAFETY: a fresh allocation at an address of the system's choosing; no memory of ours is
    // touched.
    let p = unsafe {
        VirtualAlloc(
            std::ptr::null_mut(),
            map_len,
            MEM_COMMIT | MEM_RESERVE,
            PAGE_READWRITE,
        )
    };
    if p.is_null() {
        return Err(os_error("VirtualAlloc(PAGE_READWRITE)"));
    }
    let ptr = p.cast::<u8>();
    // SAFETY: the region is map_len >= code.len() bytes, committed read-write, and ours alone.
    unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), ptr, code.len()) };
    let mut old = 0u32;
    // SAFETY: p/map_len describe the region allocated above; `old` is writable.
    if unsafe { VirtualProtect(p, map_len, PAGE_EXECUTE_READ, &mut old) } == 0 {
        let err = os_error("VirtualProtect(PAGE_EXECUTE_READ)");
        // SAFETY: releasing the region allocated above; nothing else refers to it.
        unsafe { VirtualFree(p, 0, MEM_RELEASE) };
        return Err(err);
    }
    flush_icache(ptr, code.len());
    Ok(ptr)
}

/// `FlushInstructionCache` over `len` bytes of new code at `start` (its execute-read address),
/// before the address is handed out.
pub(super) fn flush_icache(start: *const u8, len: usize) {
    // SAFETY: cache maintenance over code just written, which is mapped; the pseudo-handle of
    // the current process needs no closing.
    unsafe { FlushInstructionCache(GetCurrentProcess(), start.cast(), len) };
}

/// Releases a region made by [`map_region`].
///
/// # Safety
/// `ptr` is the address [`map_region`] returned, not yet released, and nothing may execute it any more.
unsafe fn release_region(ptr: *mut u8) {
    // SAFETY: forwarded to the caller; MEM_RELEASE takes size 0 and the allocation's base.
    unsafe { VirtualFree(ptr.cast(), 0, MEM_RELEASE) };
}

/// Registers the `count` `RUNTIME_FUNCTION`s at `base + offset` with `RtlAddFunctionTable`,
/// RVAs relative to `base`.
///
/// # Errors
/// [`Error::Unsupported`] when the system refuses the table (nothing is registered then).
///
/// # Safety
/// `base` is the entry of a live [`ExecutableCode`] (arena granules or
/// a region of its own); the table and every `UNWIND_INFO` and code range it names lie inside
/// its code (4-aligned table); [`delete_function_table`] is called with the same arguments
/// before the code's memory is freed.
unsafe fn add_function_table(base: *mut u8, offset: usize, count: usize) -> Result<()> {
    let count = u32::try_from(count).map_err(|_| Error::Unsupported {
        type_name: "function table".into(),
        reason: format!("{count} entries do not fit RtlAddFunctionTable's 32-bit count"),
    })?;
    // SAFETY: the table is inside the live, readable code and 4-aligned (caller); the system
    // keeps the pointer until `delete_function_table`, which the caller calls before the
    // memory is freed.
    let ok = unsafe { RtlAddFunctionTable(base.add(offset).cast(), count, base as u64) };
    if ok == 0 {
        return Err(Error::Unsupported {
            type_name: "function table".into(),
            reason: format!(
                "RtlAddFunctionTable refused {count} entries at {:p}",
                base.wrapping_add(offset)
            ),
        });
    }
    Ok(())
}

/// Removes a table registered by [`add_function_table`].
///
/// # Safety
/// `base` and `offset` are those of a successful [`add_function_table`] not yet deleted; the
/// code's memory is not yet freed.
pub(super) unsafe fn delete_function_table(base: *mut u8, offset: usize) {
    // SAFETY: the same table pointer that was registered (caller); the call only unlinks it.
    unsafe { RtlDeleteFunctionTable(base.add(offset).cast()) };
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests;
