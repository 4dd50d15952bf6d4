//! gatun::cdecl against gcc: `tests/native/cdecl_layouts.h` is compiled by gcc (through
//! `cdecl_layouts.c`, which exports sizeof/_Alignof/offsetof of every declaration) and parsed
//! by `Declarations`; every figure must agree. Covers `__attribute__((packed))`, `mode(...)`,
//! `sizeof`/`_Alignof` of types without a gatun layout (vectors, `long double`, ...),
//! `#pragma pack(push/pop/n/())`, member `packed`/`aligned`, `_Alignas`, enums as array
//! sizes, anonymous members, flexible arrays and function-pointer members.
#![cfg(all(target_os = "linux", not(miri)))]

use std::ffi::{c_char, CStr};

use gatun::cdecl::Declarations;
use gatun::layout::MemoryLayout;

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
    let lib = unsafe { libloading::Library::new(env!("GATUN_TEST_NATIVES")) }.unwrap();
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
                .constant(ty)
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
