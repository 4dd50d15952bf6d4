//! Code placed and run on x86-64 Windows (under Wine in CI): the code arena's chunks (a
//! section's two views), regions of their own, and the function tables of arena code (the
//! allocator's own tests, on every system with an arena, are in the `arena` module).

use std::ffi::c_void;

use super::{add_function_table, map_own, PAGE};
use crate::code::{Backing, ExecutableCode, GRANULE};
use crate::error::Error;

// shared with the integration tests, which use the rest of it
#[allow(dead_code)]
#[path = "../../../tests/common/windows_memory.rs"]
mod windows_memory;
use windows_memory::{MEM_MAPPED, MEM_PRIVATE, PAGE_EXECUTE_READ, PAGE_READWRITE};

#[link(name = "kernel32")]
extern "system" {
    fn RtlLookupFunctionEntry(pc: u64, image_base: *mut u64, history: *mut c_void) -> *const u32;
}

/// `(type, protection)` of the memory at `p`.
fn query(p: *const u8) -> (u32, u32) {
    let info = windows_memory::query(p).unwrap_or_else(|| panic!("VirtualQuery({p:p}) failed"));
    (info.kind, info.protect)
}

/// `mov eax, v; ret`.
fn returning(v: u8) -> ExecutableCode {
    // SAFETY: a complete `extern "C" fn() -> i32`, called as one.
    unsafe { ExecutableCode::new(&[0xB8, v, 0, 0, 0, 0xC3]) }.unwrap()
}

fn call(c: &ExecutableCode) -> i32 {
    // SAFETY: the code is a complete `extern "C" fn() -> i32` and lives across the call.
    let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(c.entry()) };
    f()
}

#[test]
fn code_goes_into_an_execute_read_view_of_a_section() {
    let code = returning(42);
    assert!(matches!(code.backing, Backing::Arena { .. }));
    assert_eq!(code.entry() as usize % GRANULE, 0);
    assert_eq!(code.bytes(), [0xB8, 42, 0, 0, 0, 0xC3]);
    assert_eq!(call(&code), 42);
    assert_eq!(query(code.entry()), (MEM_MAPPED, PAGE_EXECUTE_READ));
    let Backing::Arena { rw, .. } = code.backing else {
        unreachable!()
    };
    // the bytes are written through another view of the same memory, read-write
    assert_eq!(query(rw), (MEM_MAPPED, PAGE_READWRITE));
    // SAFETY: `rw` maps the code's bytes (its granules), readable while the code lives.
    assert_eq!(unsafe { std::slice::from_raw_parts(rw, 6) }, code.bytes());
}

#[test]
fn a_region_of_its_own_runs_execute_read() {
    // `mov eax, 9; ret`
    let code = map_own(&[0xB8, 9, 0, 0, 0, 0xC3]).unwrap();
    assert!(matches!(code.backing, Backing::Own(_)));
    assert_eq!(code.entry() as usize % PAGE, 0);
    assert_eq!(query(code.entry()), (MEM_PRIVATE, PAGE_EXECUTE_READ));
    assert_eq!(call(&code), 9);
}

/// `sub rsp, 40; add rsp, 40; ret` (9 bytes), `int3` padding, its `UNWIND_INFO` at 12
/// (version 1, a 4-byte prologue, `UWOP_ALLOC_SMALL` of 40 bytes at offset 4) and its
/// `RUNTIME_FUNCTION` at 20: `[0, end)` (9, or up to 12 with the padding), `UNWIND_INFO` at
/// 12. 32 bytes, table at 20.
fn framed(end: u32) -> Vec<u8> {
    let mut b = vec![
        0x48, 0x83, 0xEC, 40, 0x48, 0x83, 0xC4, 40, 0xC3, 0xCC, 0xCC, 0xCC,
    ];
    b.extend([1, 4, 1, 0, 4, 0x02 | (((40 - 8) / 8) << 4), 0, 0]);
    for w in [0u32, end, 12] {
        b.extend(w.to_le_bytes());
    }
    b
}

/// The function entry Windows' unwinder finds for `pc`: `(image base, begin, end)`, or
/// `None` when no table covers it.
fn lookup(pc: usize) -> Option<(usize, u32, u32)> {
    let mut base = 0u64;
    // SAFETY: `base` is writable; no history table.
    let f = unsafe { RtlLookupFunctionEntry(pc as u64, &mut base, std::ptr::null_mut()) };
    // SAFETY: a non-null result points to a registered RUNTIME_FUNCTION (three u32s).
    (!f.is_null()).then(|| unsafe { (base as usize, *f, *f.add(1)) })
}

#[test]
fn arena_code_has_its_function_table_registered_until_it_drops() {
    let bytes = framed(9);
    // SAFETY: the code is a complete function (never called here) and its UNWIND_INFO
    // describes its prologue.
    let code = unsafe { ExecutableCode::with_function_table(&bytes, 20, 1) }.unwrap();
    assert!(matches!(code.backing, Backing::Arena { .. }));
    let entry = code.entry() as usize;
    // inside the function, at its entry and past its prologue: the code's own table, RVAs
    // relative to its entry
    for pc in [entry, entry + 4, entry + 8] {
        assert_eq!(lookup(pc), Some((entry, 0, 9)), "pc {pc:#x}");
    }
    // a neighbour placed after it has a table of its own
    // SAFETY: as above.
    let next = unsafe { ExecutableCode::with_function_table(&bytes, 20, 1) }.unwrap();
    let next_entry = next.entry() as usize;
    assert_eq!(lookup(next_entry + 4), Some((next_entry, 0, 9)));
    assert_eq!(lookup(entry + 4), Some((entry, 0, 9)));
    // the table goes with the code, before its granules are freed; a test placing framed code
    // concurrently may take them at once, with a table of its own (another range: no other
    // test's function ends at 9)
    let gone = |pc: usize| lookup(pc).is_none_or(|(_, _, end)| end != 9);
    drop(code);
    assert!(gone(entry + 4), "{:x?}", lookup(entry + 4));
    assert_eq!(lookup(next_entry + 4), Some((next_entry, 0, 9)));
    drop(next);
    assert!(gone(next_entry + 4), "{:x?}", lookup(next_entry + 4));
}

#[test]
fn a_region_of_its_own_has_its_function_table_registered_until_it_drops() {
    // as `with_function_table` does where the arena is refused
    let mut code = map_own(&framed(10)).unwrap();
    let entry = code.entry() as usize;
    // SAFETY: the region holds the code with its table at 20 and everything the table names;
    // the drop deletes the table before the region is released.
    unsafe { add_function_table(code.ptr, 20, 1) }.unwrap();
    code.function_table = Some(20);
    assert_eq!(lookup(entry + 4), Some((entry, 0, 10)));
    drop(code);
    // the address may be reused at once by other tests' code (whose functions end elsewhere)
    assert!(
        lookup(entry + 4).is_none_or(|(_, _, end)| end != 10),
        "{:x?}",
        lookup(entry + 4)
    );
}

#[test]
fn empty_code_is_rejected() {
    // SAFETY: rejected before anything is mapped.
    let err = unsafe { ExecutableCode::new(&[]) }.unwrap_err();
    assert!(matches!(err, Error::InvalidSize { size: 0, .. }), "{err}");
}
