//! gatun::cdecl against gcc: `tests/native/cdecl_layouts.h` is compiled by gcc (through
//! `cdecl_layouts.c`, which exports sizeof/_Alignof/offsetof of every declaration) and parsed
//! by `Declarations`; every figure must agree. Covers `__attribute__((packed))`, `mode(...)`,
//! `sizeof`/`_Alignof` of types without a gatun layout (vectors, `long double`, ...),
//! `#pragma pack(push/pop/n/())`, member `packed`/`aligned`, `_Alignas`, enums as array
//! sizes, anonymous members, flexible arrays and function-pointer members; bitfields (bit
//! offsets, widths and signedness from `cdecl_bitfields()` in the target's bit order, values
//! gcc stored read by gatun and values gatun stored byte for byte as gcc's, and structs with
//! bitfields passed and returned by value).
#![cfg(all(target_os = "linux", not(miri)))]

use std::ffi::{c_char, CStr};

use gatun::cdecl::Declarations;
use gatun::layout::{MemoryLayout, ScalarKind};
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
use gatun::linker::SymbolLookup;
use gatun::memory::MemorySegment;
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
use gatun::memory::{Arena, SegmentAllocator};
use gatun::Value;

#[repr(C)]
struct Entry {
    type_name: *const c_char,
    path: *const c_char,
    value: usize,
}

#[test]
fn cdecl_layouts_match_gcc() {
    let decls = match Declarations::parse(include_str!("native/cdecl_layouts.h")) {
        Ok(d) => d,
        Err(e) => panic!("cdecl_layouts.h does not parse:\n{e}"),
    };
    // SAFETY: our own test library, no unsound initialisers.
    let lib = unsafe { libloading::Library::new(gatun_test_natives::PATH) }.unwrap();
    // SAFETY: `cdecl_layouts_table` is an array of `struct cdecl_layouts_entry` (same layout as
    // `Entry`) ended by a NULL type; we take its address only.
    let table: *const Entry = unsafe {
        *lib.get::<*const Entry>(b"cdecl_layouts_table")
            .expect("cdecl_layouts_table")
    };
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for i in 0.. {
        // SAFETY: in bounds until the terminating entry, whose type is NULL.
        let e = unsafe { &*table.add(i) };
        if e.type_name.is_null() {
            break;
        }
        // SAFETY: string literals in the C table.
        let (ty, path) = unsafe {
            (
                CStr::from_ptr(e.type_name).to_str().unwrap(),
                CStr::from_ptr(e.path).to_str().unwrap(),
            )
        };
        if path == "#const" {
            let ours = decls
                .constant_i64(ty)
                .unwrap_or_else(|| panic!("gatun has no constant `{ty}`"));
            if ours != e.value as i64 {
                mismatches.push(format!("{ty}: gcc {} gatun {ours}", e.value));
            }
            checked += 1;
            continue;
        }
        let layout = decls
            .layout(ty)
            .unwrap_or_else(|| panic!("gatun has no layout for `{ty}`"));
        let ours = match path {
            "#signed" => match layout {
                MemoryLayout::Value(v) => usize::from(v.kind().is_signed()),
                other => panic!("{ty} is not a scalar: {other}"),
            },
            "#size" => layout.byte_size(),
            "#align" => layout.byte_alignment(),
            p => layout
                .byte_offset_of(p)
                .unwrap_or_else(|err| panic!("{ty} {p}: {err}")),
        };
        if ours != e.value {
            mismatches.push(format!(
                "{ty} {path}: gcc {} gatun {ours} ({layout})",
                e.value
            ));
        }
        checked += 1;
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(checked >= 80, "only {checked} figures checked");
}

#[repr(C)]
struct BitEntry {
    type_name: *const c_char,
    field: *const c_char,
    bit_offset: usize,
    bit_width: usize,
    is_signed: i32,
    value: i64,
    size: usize,
    bytes: [u8; 32],
}

/// `v` as a `Value` of the integer (or bool) `kind`, which holds it.
fn value_of_kind(kind: ScalarKind, v: i64) -> Value<'static> {
    match kind {
        ScalarKind::Bool => Value::Bool(v != 0),
        ScalarKind::I8 => Value::I8(v as i8),
        ScalarKind::U8 => Value::U8(v as u8),
        ScalarKind::I16 => Value::I16(v as i16),
        ScalarKind::U16 => Value::U16(v as u16),
        ScalarKind::I32 => Value::I32(v as i32),
        ScalarKind::U32 => Value::U32(v as u32),
        ScalarKind::I64 => Value::I64(v),
        ScalarKind::U64 => Value::U64(v as u64),
        other => panic!("{other:?} is no bitfield type"),
    }
}

#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
fn natives() -> SymbolLookup {
    // SAFETY: our own test library, no unsound initialisers.
    unsafe { SymbolLookup::library(gatun_test_natives::PATH) }.unwrap()
}

#[test]
fn bitfields_match_gcc() {
    let decls = Declarations::parse(include_str!("native/cdecl_layouts.h")).unwrap();
    // SAFETY: our own test library, no unsound initialisers.
    let lib = unsafe { libloading::Library::new(gatun_test_natives::PATH) }.unwrap();
    // SAFETY: `size_t cdecl_bitfields(const struct cdecl_bitfield_entry **)`, whose entry
    // struct has `BitEntry`'s layout.
    let f = unsafe {
        lib.get::<unsafe extern "C" fn(*mut *const BitEntry) -> usize>(b"cdecl_bitfields")
            .unwrap()
    };
    let mut table: *const BitEntry = std::ptr::null();
    // SAFETY: fills `table` with a pointer to `n` static entries.
    let n = unsafe { f(&mut table) };
    assert!(n >= 30, "only {n} bitfields");
    let mut mismatches = Vec::new();
    for i in 0..n {
        // SAFETY: in bounds (i < n), static strings.
        let (ty, field, e) = unsafe {
            let e = &*table.add(i);
            (
                CStr::from_ptr(e.type_name).to_str().unwrap(),
                CStr::from_ptr(e.field).to_str().unwrap(),
                e,
            )
        };
        let Some(b) = decls.bitfield(ty, field) else {
            mismatches.push(format!("{ty}.{field}: gatun has no such bitfield"));
            continue;
        };
        let ours = (b.bit_offset(), b.bit_width() as usize, b.kind().is_signed());
        let gcc = (e.bit_offset, e.bit_width, e.is_signed != 0);
        if ours != gcc {
            mismatches.push(format!(
                "{ty}.{field}: gcc (offset, width, signed) {gcc:?}, gatun {ours:?}"
            ));
        }
        // The value C stored, read by gatun from C's bytes; and the bytes gatun writes for it
        // into a zeroed record, which must be C's.
        let layout = decls.layout(ty).unwrap();
        assert_eq!(layout.byte_size(), e.size, "{ty}");
        let mut c_bytes = e.bytes[..e.size].to_vec();
        let c_record = MemorySegment::of_slice(&mut c_bytes);
        let want = value_of_kind(b.kind(), e.value);
        match b.get(&c_record) {
            Ok(v) if v == want => {}
            other => mismatches.push(format!(
                "{ty}.{field}: gcc stored {want:?} in {:02x?}, gatun reads {other:?}",
                &e.bytes[..e.size]
            )),
        }
        let mut ours = vec![0u8; e.size];
        let record = MemorySegment::of_slice(&mut ours);
        b.set(&record, want).unwrap();
        if ours[..] != e.bytes[..e.size] {
            mismatches.push(format!(
                "{ty}.{field} = {want:?}: gcc writes {:02x?}, gatun {ours:02x?}",
                &e.bytes[..e.size]
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
fn bitfield_structs_pass_by_value() {
    let decls = Declarations::parse(include_str!("native/cdecl_layouts.h")).unwrap();
    let lib = natives();
    let layout = decls.layout("struct cl_bf_byval").unwrap().clone();
    let field = |n: &str| decls.bitfield("struct cl_bf_byval", n).unwrap().clone();
    let arena = Arena::confined();
    let s = arena.allocate_layout(&layout).unwrap();
    field("a").set(&s, Value::U32(5)).unwrap();
    field("b").set(&s, Value::I32(-9)).unwrap();
    field("c").set(&s, Value::U32(1_000_000)).unwrap();
    field("d").set(&s, Value::I32(-100)).unwrap();
    let sum = decls.link(&lib, "cl_bf_byval_sum").unwrap();
    // SAFETY: long long cl_bf_byval_sum(struct cl_bf_byval) with a struct of that layout.
    let r = unsafe { sum.invoke(&[Value::Segment(s)]) }.unwrap();
    assert_eq!(r, Value::I64(5 - 9 + 1_000_000 - 100));
    let make = decls.link(&lib, "cl_bf_byval_make").unwrap();
    // SAFETY: struct cl_bf_byval cl_bf_byval_make(int, int, int, int).
    let out = unsafe {
        make.invoke_into(
            &arena,
            &[
                Value::I32(7),
                Value::I32(15),
                Value::I32(0xABCDE),
                Value::I32(-128),
            ],
        )
    }
    .unwrap();
    let out = out.as_segment().expect("a struct");
    assert_eq!(field("a").get(&out).unwrap(), Value::U32(7));
    assert_eq!(field("b").get(&out).unwrap(), Value::I32(15));
    assert_eq!(field("c").get(&out).unwrap(), Value::U32(0xABCDE));
    assert_eq!(field("d").get(&out).unwrap(), Value::I32(-128));
    // A float and a bitfield share the first eightbyte: INTEGER class, as gcc passes it
    // (AArch64: not an HFA, so in x0).
    let fl = decls.layout("struct cl_bf_float").unwrap().clone();
    let s = arena.allocate_layout(&fl).unwrap();
    s.set(0, 2.0f32).unwrap();
    let tag = decls.bitfield("struct cl_bf_float", "tag").unwrap();
    tag.set(&s, Value::I32(-3)).unwrap();
    let f = decls.link(&lib, "cl_bf_float_tag").unwrap();
    // SAFETY: int cl_bf_float_tag(struct cl_bf_float).
    let r = unsafe { f.invoke(&[Value::Segment(s)]) }.unwrap();
    assert_eq!(r, Value::I32(-1));
    // Even an unnamed bitfield's bytes make the eightbyte INTEGER (gcc passes this in rdi).
    let ul = decls.layout("struct cl_bf_unnamed_float").unwrap().clone();
    let s = arena.allocate_layout(&ul).unwrap();
    s.set(0, 6.5f32).unwrap();
    let f = decls.link(&lib, "cl_bf_unnamed_float_get").unwrap();
    // SAFETY: float cl_bf_unnamed_float_get(struct cl_bf_unnamed_float).
    let r = unsafe { f.invoke(&[Value::Segment(s)]) }.unwrap();
    assert_eq!(r, Value::F32(6.5));
}
