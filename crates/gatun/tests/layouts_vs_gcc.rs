//! gatun's C layouts against the C compiler's.
//!
//! `tests/native/layouts.c` (compiled into the `gatun_test_natives::PATH` library)
//! exports `layouts_table`: for 33 structs and unions (nested structs, arrays in structs,
//! mixed widths, bool/char tails, unions of structs, over-aligned members, `packed` and
//! `#pragma pack`) it reports `sizeof`, `_Alignof`, and for every field (written as an
//! `offsetof` member designator such as `in.tag` or `items[2].v`) its `offsetof`, `sizeof`
//! and `__alignof__`. This test builds each type with gatun's `MemoryLayout` and asserts that
//! every figure is equal, and that every C type has a gatun counterpart and vice versa.
//!
//! Calls C through libloading, so it is compiled out under Miri; `gatun-test-natives` builds the
//! natives library on native Linux hosts only.

#![cfg(all(not(miri), target_os = "linux"))]

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr};

use gatun::layout::{DataModel, MemoryLayout, PathElement, ValueLayout};

/// Mirrors `layouts_field` in layouts.c.
#[repr(C)]
struct CField {
    name: *const c_char,
    offset: usize,
    size: usize,
    align: usize,
}

/// Mirrors `layouts_entry` in layouts.c.
#[repr(C)]
struct CEntry {
    name: *const c_char,
    size: usize,
    align: usize,
    field_count: usize,
    fields: *const CField,
}

#[derive(Debug)]
struct Field {
    designator: String,
    offset: usize,
    size: usize,
    align: usize,
}

#[derive(Debug)]
struct CLayout {
    size: usize,
    align: usize,
    fields: Vec<Field>,
}

/// Reads gcc's table out of the test natives library.
fn gcc_layouts() -> BTreeMap<String, CLayout> {
    // SAFETY: the library is our own test code; loading it runs no initialisers with
    // preconditions.
    let lib = unsafe { libloading::Library::new(gatun_test_natives::PATH) }
        .expect("load the test natives library");
    // SAFETY: the signature matches `layouts_table` in layouts.c.
    let table: libloading::Symbol<unsafe extern "C" fn(*mut usize) -> *const *const CEntry> =
        unsafe { lib.get(b"layouts_table\0") }.expect("layouts_table");
    let mut count = 0usize;
    // SAFETY: `count` is a valid out pointer; the returned table has `count` entries of static
    // data that lives as long as `lib`, which outlives every read below.
    unsafe {
        let entries = std::slice::from_raw_parts(table(&mut count), count);
        let text = |p: *const c_char| CStr::from_ptr(p).to_str().unwrap().to_owned();
        entries
            .iter()
            .map(|&e| {
                let e = &*e;
                let fields = std::slice::from_raw_parts(e.fields, e.field_count)
                    .iter()
                    .map(|f| Field {
                        designator: text(f.name),
                        offset: f.offset,
                        size: f.size,
                        align: f.align,
                    })
                    .collect();
                (
                    text(e.name),
                    CLayout {
                        size: e.size,
                        align: e.align,
                        fields,
                    },
                )
            })
            .collect()
    }
}

// ---- building blocks ----

/// A named member of C scalar type `ty` (looked up in the host's C type table).
fn c(ty: &str, name: &str) -> MemoryLayout {
    MemoryLayout::from(DataModel::HOST.layout(ty).unwrap().with_name(name))
}

fn array(count: usize, element: impl Into<MemoryLayout>, name: &str) -> MemoryLayout {
    MemoryLayout::sequence_layout(count, element)
        .unwrap()
        .with_name(name)
}

fn st(members: Vec<MemoryLayout>) -> MemoryLayout {
    MemoryLayout::c_struct(members).unwrap()
}

fn un(members: Vec<MemoryLayout>) -> MemoryLayout {
    MemoryLayout::union_layout(members).unwrap()
}

fn packed(pack: usize, members: Vec<MemoryLayout>) -> MemoryLayout {
    MemoryLayout::c_struct_packed(members, pack).unwrap()
}

fn inner() -> MemoryLayout {
    st(vec![c("char", "tag"), c("int", "value")])
}

fn item() -> MemoryLayout {
    st(vec![c("char", "tag"), c("double", "v")])
}

fn u_structs() -> MemoryLayout {
    un(vec![
        st(vec![c("char", "tag"), c("int", "x")]).with_name("a"),
        st(vec![c("char", "tag"), c("double", "y")]).with_name("b"),
    ])
}

/// gatun's version of every type in layouts.c.
fn gatun_layouts() -> BTreeMap<&'static str, MemoryLayout> {
    let char5 = || array(5, ValueLayout::I8, "c");
    let entries: Vec<(&'static str, MemoryLayout)> = vec![
        ("s_char_double", st(vec![c("char", "c"), c("double", "d")])),
        (
            "s_char_int_char",
            st(vec![c("char", "a"), c("int", "b"), c("char", "c")]),
        ),
        ("s_double_char", st(vec![c("double", "d"), c("char", "c")])),
        (
            "s_mixed",
            st(vec![
                c("char", "a"),
                c("short", "b"),
                c("char", "c"),
                c("int", "d"),
                c("long", "e"),
                c("float", "f"),
                c("double", "g"),
            ]),
        ),
        (
            "s_unsigned",
            st(vec![
                c("unsigned char", "a"),
                c("unsigned short", "b"),
                c("unsigned int", "c"),
                c("unsigned long", "d"),
                c("unsigned long long", "e"),
                c("signed char", "f"),
            ]),
        ),
        (
            "s_fixed",
            st(vec![
                c("int8_t", "a"),
                c("int64_t", "b"),
                c("uint16_t", "c"),
                c("uint32_t", "d"),
                c("uint8_t", "e"),
            ]),
        ),
        (
            "s_floats",
            st(vec![c("float", "f"), c("double", "d"), c("float", "g")]),
        ),
        (
            "s_ptrs",
            st(vec![
                c("char", "c"),
                c("void*", "p"),
                c("int", "i"),
                // SAFETY: nothing is read through this layout (only its shape is compared).
                unsafe { ValueLayout::pointer_to(ValueLayout::I8.into()) }
                    .unwrap()
                    .with_name("name")
                    .into(),
            ]),
        ),
        (
            "s_sizes",
            st(vec![
                c("char", "c"),
                c("size_t", "n"),
                c("int", "i"),
                c("ssize_t", "s"),
                c("ptrdiff_t", "d"),
                c("intptr_t", "ip"),
            ]),
        ),
        ("s_int_bool", st(vec![c("int", "i"), c("bool", "b")])),
        (
            "s_double_chars",
            st(vec![
                c("double", "d"),
                c("char", "a"),
                c("char", "b"),
                c("char", "c"),
            ]),
        ),
        (
            "s_three_chars",
            st(vec![c("char", "a"), c("char", "b"), c("char", "c")]),
        ),
        (
            "s_bools",
            st(vec![
                c("_Bool", "a"),
                c("bool", "b"),
                c("int", "c"),
                c("bool", "d"),
            ]),
        ),
        ("s_long_char", st(vec![c("long", "l"), c("char", "c")])),
        (
            "s_nested",
            st(vec![
                c("char", "c"),
                inner().with_name("in"),
                c("short", "s"),
            ]),
        ),
        (
            "s_deep",
            st(vec![
                c("char", "a"),
                st(vec![
                    c("short", "b"),
                    st(vec![c("char", "c"), c("long long", "d")]).with_name("in2"),
                ])
                .with_name("in1"),
                c("char", "e"),
            ]),
        ),
        (
            "s_array",
            st(vec![c("short", "s"), array(3, ValueLayout::I8, "c")]),
        ),
        (
            "s_items",
            st(vec![c("int", "n"), array(4, item(), "items")]),
        ),
        (
            "s_matrix",
            st(vec![
                c("char", "c"),
                array(
                    3,
                    MemoryLayout::sequence_layout(5, ValueLayout::I16).unwrap(),
                    "m",
                ),
                c("int", "tail"),
            ]),
        ),
        (
            "s_char_array_tail",
            st(vec![
                array(2, ValueLayout::F64, "d"),
                array(13, ValueLayout::I8, "name"),
            ]),
        ),
        (
            "u_scalars",
            un(vec![c("char", "c"), c("int", "i"), c("double", "d")]),
        ),
        (
            "u_chars_short",
            un(vec![array(9, ValueLayout::I8, "c"), c("short", "s")]),
        ),
        ("u_structs", u_structs()),
        (
            "s_tagged",
            st(vec![c("int", "kind"), u_structs().with_name("u")]),
        ),
        (
            "s_union_inside",
            st(vec![
                c("char", "c"),
                un(vec![c("int", "i"), c("float", "f")]).with_name("u"),
                c("char", "t"),
            ]),
        ),
        (
            "s_aligned_member",
            st(vec![
                c("char", "c"),
                c("int", "x").with_byte_alignment(16).unwrap(),
            ]),
        ),
        (
            "s_packed",
            packed(
                1,
                vec![
                    c("char", "c"),
                    c("int", "i"),
                    c("short", "s"),
                    c("double", "d"),
                ],
            ),
        ),
        (
            "s_packed_nested",
            packed(1, vec![c("char", "c"), inner().with_name("in")]),
        ),
        (
            "u_packed",
            MemoryLayout::union_layout_packed([char5(), c("int", "i")], 1).unwrap(),
        ),
        (
            "s_pack2",
            packed(
                2,
                vec![
                    c("char", "c"),
                    c("int", "i"),
                    c("double", "d"),
                    c("char", "t"),
                ],
            ),
        ),
        (
            "u_pack2",
            MemoryLayout::union_layout_packed([char5(), c("int", "i")], 2).unwrap(),
        ),
        (
            "s_pack4",
            packed(
                4,
                vec![
                    c("char", "c"),
                    c("double", "d"),
                    c("short", "s"),
                    item().with_name("it"),
                ],
            ),
        ),
        (
            "s_pack1",
            packed(
                1,
                vec![
                    c("short", "s"),
                    c("long long", "l"),
                    array(3, ValueLayout::I8, "arr"),
                    c("int", "i"),
                ],
            ),
        ),
    ];
    let n = entries.len();
    let map: BTreeMap<_, _> = entries.into_iter().collect();
    assert_eq!(map.len(), n, "duplicate type names in gatun_layouts()");
    map
}

#[test]
fn every_struct_and_union_matches_gcc() {
    let gcc = gcc_layouts();
    let ours = gatun_layouts();
    assert!(
        gcc.len() >= 20,
        "layouts.c reports only {} types",
        gcc.len()
    );
    assert_eq!(
        gcc.keys().map(String::as_str).collect::<Vec<_>>(),
        ours.keys().copied().collect::<Vec<_>>(),
        "layouts.c and this test must describe the same types"
    );
    let mut mismatches = Vec::new();
    let mut fields_checked = 0;
    for (name, c_layout) in &gcc {
        let layout = &ours[name.as_str()];
        if (layout.byte_size(), layout.byte_alignment()) != (c_layout.size, c_layout.align) {
            mismatches.push(format!(
                "{name}: gcc sizeof {} _Alignof {}, gatun {} {} ({layout})",
                c_layout.size,
                c_layout.align,
                layout.byte_size(),
                layout.byte_alignment()
            ));
        }
        assert!(!c_layout.fields.is_empty(), "{name} has no fields");
        for f in &c_layout.fields {
            fields_checked += 1;
            let ours = layout
                .select(path(&parse(&f.designator)))
                .map(|(offset, member)| (offset, member.byte_size(), member.byte_alignment()));
            // The text path parser must agree with the element path.
            assert_eq!(
                layout.byte_offset_of(&f.designator).ok(),
                ours.as_ref().ok().map(|o| o.0),
                "{name}.{}",
                f.designator
            );
            match ours {
                Ok(got) if got == (f.offset, f.size, f.align) => {}
                Ok((offset, size, align)) => mismatches.push(format!(
                    "{name}.{}: gcc offsetof {} sizeof {} alignof {}, gatun {offset} {size} {align}",
                    f.designator, f.offset, f.size, f.align
                )),
                Err(e) => mismatches.push(format!("{name}.{}: {e}", f.designator)),
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "gatun disagrees with gcc:\n{}",
        mismatches.join("\n")
    );
    assert!(
        fields_checked >= 100,
        "only {fields_checked} fields checked"
    );
}

/// One step of an `offsetof` designator.
enum Step {
    Name(String),
    Index(usize),
}

/// Splits an `offsetof` designator (`items[2].v`) into steps, independently of gatun's own
/// text path parser.
fn parse(designator: &str) -> Vec<Step> {
    let mut out = Vec::new();
    for part in designator.split('.') {
        let (name, indices) = part.split_once('[').unwrap_or((part, ""));
        out.push(Step::Name(name.to_owned()));
        for index in indices.split('[').filter(|s| !s.is_empty()) {
            out.push(Step::Index(index.trim_end_matches(']').parse().unwrap()));
        }
    }
    out
}

fn path(steps: &[Step]) -> Vec<PathElement<'_>> {
    steps
        .iter()
        .map(|s| match s {
            Step::Name(n) => PathElement::Name(n),
            Step::Index(i) => PathElement::Index(*i),
        })
        .collect()
}
