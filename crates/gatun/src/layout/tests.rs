//! Unit tests of the layout module: C scalar tables, C struct padding, explicit struct
//! validation, unions, sequences, packing and layout paths. Pure Rust: these run under Miri.
//! The same figures are checked against gcc in `tests/layouts_vs_gcc.rs`.

use super::*;
use crate::error::Error;

fn i8(name: &str) -> MemoryLayout {
    ValueLayout::I8.with_name(name).into()
}
fn i16(name: &str) -> MemoryLayout {
    ValueLayout::I16.with_name(name).into()
}
fn i32(name: &str) -> MemoryLayout {
    ValueLayout::I32.with_name(name).into()
}
fn i64(name: &str) -> MemoryLayout {
    ValueLayout::I64.with_name(name).into()
}
fn f64(name: &str) -> MemoryLayout {
    ValueLayout::F64.with_name(name).into()
}

/// `(size, alignment)` of a layout.
fn sa(l: &MemoryLayout) -> (usize, usize) {
    (l.byte_size(), l.byte_alignment())
}

fn offsets(l: &MemoryLayout) -> Vec<usize> {
    match l {
        MemoryLayout::Struct(s) => s.offsets().to_vec(),
        other => panic!("not a struct: {other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Scalars and the C type tables
// ---------------------------------------------------------------------------------------------

#[test]
fn scalar_kinds_have_fixed_sizes_and_natural_alignment() {
    let expected = [
        (ScalarKind::Bool, 1),
        (ScalarKind::I8, 1),
        (ScalarKind::U8, 1),
        (ScalarKind::I16, 2),
        (ScalarKind::U16, 2),
        (ScalarKind::I32, 4),
        (ScalarKind::U32, 4),
        (ScalarKind::I64, 8),
        (ScalarKind::U64, 8),
        (ScalarKind::F32, 4),
        (ScalarKind::F64, 8),
        (ScalarKind::Pointer, std::mem::size_of::<usize>()),
    ];
    assert_eq!(ScalarKind::ALL.len(), expected.len());
    for (kind, size) in expected {
        assert_eq!(kind.byte_size(), size, "{kind}");
        assert_eq!(kind.natural_alignment(), size, "{kind}");
        let v = ValueLayout::new(kind);
        assert_eq!((v.byte_size(), v.byte_alignment()), (size, size), "{kind}");
        assert!(v.is_naturally_aligned());
        assert_eq!(v.name(), None);
    }
    assert!(ScalarKind::F32.is_float() && ScalarKind::F64.is_float());
    assert!(!ScalarKind::I32.is_float() && ScalarKind::Pointer.is_integral());
    assert!(ScalarKind::I8.is_signed() && !ScalarKind::U64.is_signed());
    assert!(!ScalarKind::Bool.is_signed() && !ScalarKind::F64.is_signed());
}

#[test]
fn value_layout_constants() {
    let consts = [
        (&ValueLayout::BOOL, ScalarKind::Bool),
        (&ValueLayout::I8, ScalarKind::I8),
        (&ValueLayout::U8, ScalarKind::U8),
        (&ValueLayout::I16, ScalarKind::I16),
        (&ValueLayout::U16, ScalarKind::U16),
        (&ValueLayout::I32, ScalarKind::I32),
        (&ValueLayout::U32, ScalarKind::U32),
        (&ValueLayout::I64, ScalarKind::I64),
        (&ValueLayout::U64, ScalarKind::U64),
        (&ValueLayout::F32, ScalarKind::F32),
        (&ValueLayout::F64, ScalarKind::F64),
        (&ValueLayout::ADDRESS, ScalarKind::Pointer),
    ];
    for (layout, kind) in consts {
        assert_eq!(*layout, ValueLayout::new(kind));
        assert_eq!(layout.kind(), kind);
    }
}

/// Looks every name of `expected` up in `model` and compares `(kind, size, alignment)`.
fn check_model(model: DataModel, expected: &[(&str, ScalarKind)]) {
    for &(name, kind) in expected {
        let l = model.layout(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(l.kind(), kind, "{name}");
        assert_eq!(l.byte_size(), kind.byte_size(), "{name}");
        assert_eq!(l.byte_alignment(), kind.byte_size(), "{name}");
    }
}

/// SysV AMD64 ABI §3.1.2 (Figure 3.1): the LP64 scalar table of x86-64 Linux.
const LP64_X86_64: &[(&str, ScalarKind)] = &[
    ("bool", ScalarKind::Bool),
    ("_Bool", ScalarKind::Bool),
    ("char", ScalarKind::I8),
    ("signed char", ScalarKind::I8),
    ("unsigned char", ScalarKind::U8),
    ("short", ScalarKind::I16),
    ("unsigned short", ScalarKind::U16),
    ("int", ScalarKind::I32),
    ("unsigned int", ScalarKind::U32),
    ("long", ScalarKind::I64),
    ("unsigned long", ScalarKind::U64),
    ("long long", ScalarKind::I64),
    ("unsigned long long", ScalarKind::U64),
    ("float", ScalarKind::F32),
    ("double", ScalarKind::F64),
    ("void*", ScalarKind::Pointer),
    ("size_t", ScalarKind::U64),
    ("ssize_t", ScalarKind::I64),
    ("ptrdiff_t", ScalarKind::I64),
    ("intptr_t", ScalarKind::I64),
    ("uintptr_t", ScalarKind::U64),
    ("wchar_t", ScalarKind::I32),
    ("int8_t", ScalarKind::I8),
    ("uint8_t", ScalarKind::U8),
    ("int16_t", ScalarKind::I16),
    ("uint16_t", ScalarKind::U16),
    ("int32_t", ScalarKind::I32),
    ("uint32_t", ScalarKind::U32),
    ("int64_t", ScalarKind::I64),
    ("uint64_t", ScalarKind::U64),
];

#[cfg(target_pointer_width = "64")]
#[test]
fn lp64_table_x86_64() {
    check_model(DataModel::SYSV_X86_64, LP64_X86_64);
    // Every name the model advertises is in the table above, and vice versa.
    let names: Vec<&str> = LP64_X86_64.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, DataModel::NAMES);
}

#[cfg(target_pointer_width = "64")]
#[test]
fn llp64_table_windows_x64() {
    // Microsoft x64: `long` is 4 bytes, `wchar_t` is an unsigned 16-bit type; the rest is as
    // on LP64.
    let expected: Vec<(&str, ScalarKind)> = LP64_X86_64
        .iter()
        .map(|&(name, kind)| match name {
            "long" => (name, ScalarKind::I32),
            "unsigned long" => (name, ScalarKind::U32),
            "wchar_t" => (name, ScalarKind::U16),
            _ => (name, kind),
        })
        .collect();
    check_model(DataModel::WINDOWS_X64, &expected);
    assert_eq!(
        DataModel::WINDOWS_X64
            .layout("long int")
            .unwrap()
            .byte_size(),
        4
    );
}

#[test]
fn aarch64_linux_char_is_unsigned() {
    assert_eq!(
        DataModel::LINUX_AARCH64.layout("char").unwrap().kind(),
        ScalarKind::U8
    );
    assert_eq!(
        DataModel::LINUX_AARCH64
            .layout("signed char")
            .unwrap()
            .kind(),
        ScalarKind::I8
    );
    assert_eq!(
        DataModel::LINUX_AARCH64.layout("long").unwrap().kind(),
        ScalarKind::I64
    );
}

/// Apple arm64: LP64 like x86-64 (signed `char`, 4-byte `wchar_t`), and `long double` is
/// `double`.
#[cfg(target_pointer_width = "64")]
#[test]
fn apple_arm64_table() {
    check_model(DataModel::APPLE_ARM64, LP64_X86_64);
    for spelling in ["long double", "long  double"] {
        assert_eq!(
            DataModel::APPLE_ARM64.layout(spelling).unwrap().kind(),
            ScalarKind::F64
        );
    }
    let linux: Vec<(&str, ScalarKind)> = LP64_X86_64
        .iter()
        .map(|&(n, k)| match n {
            "char" => (n, ScalarKind::U8),
            "wchar_t" => (n, ScalarKind::U32),
            _ => (n, k),
        })
        .collect();
    check_model(DataModel::LINUX_AARCH64, &linux);
    let reason = match DataModel::LINUX_AARCH64.layout("long double") {
        Err(Error::Unsupported { reason, .. }) => reason,
        other => panic!("expected Unsupported, got {other:?}"),
    };
    assert!(reason.contains("binary128"), "{reason}");
}

/// s390x and PPC64LE Linux: LP64 with unsigned `char`, a signed 4-byte `wchar_t` and a
/// 16-byte `long double` (rejected), as `s390x-linux-gnu-gcc` and `powerpc64le-linux-gnu-gcc`
/// have them; the host's model when built for them.
#[cfg(target_pointer_width = "64")]
#[test]
fn s390x_and_ppc64le_tables() {
    let table: Vec<(&str, ScalarKind)> = LP64_X86_64
        .iter()
        .map(|&(n, k)| match n {
            "char" => (n, ScalarKind::U8),
            _ => (n, k),
        })
        .collect();
    for model in [DataModel::LINUX_S390X, DataModel::LINUX_PPC64LE] {
        check_model(model, &table);
        match model.layout("long double") {
            // Says which formats, and that the choice is the callee's compiler's.
            Err(Error::Unsupported { reason, .. }) => {
                assert!(reason.contains("binary128 on AArch64, RISC-V 64 and s390x"));
                assert!(
                    reason.contains("PPC64LE Linux 128-bit IBM double-double or IEEE binary128")
                );
                assert!(reason.contains("-mabi=ieeelongdouble"), "{reason}");
            }
            other => panic!("expected Unsupported, got {other:?}"),
        }
    }
    if cfg!(target_arch = "s390x") {
        assert_eq!(DataModel::HOST, DataModel::LINUX_S390X);
    }
    if cfg!(target_arch = "powerpc64") {
        assert_eq!(DataModel::HOST, DataModel::LINUX_PPC64LE);
    }
}

#[test]
fn alternative_spellings() {
    let m = DataModel::SYSV_X86_64;
    let same = [
        ("long int", "long"),
        ("long   long  int", "long long"),
        ("unsigned", "unsigned int"),
        ("signed", "int"),
        ("signed int", "int"),
        ("short int", "short"),
        ("unsigned short int", "unsigned short"),
        ("unsigned long int", "unsigned long"),
        ("signed long long", "long long"),
        ("void *", "void*"),
        ("  int  ", "int"),
    ];
    for (alt, canonical) in same {
        assert_eq!(
            m.layout(alt).unwrap(),
            m.layout(canonical).unwrap(),
            "{alt}"
        );
    }
}

#[test]
fn long_double_is_unsupported_where_wider_than_double() {
    let mut models = vec![
        DataModel::SYSV_X86_64,
        DataModel::LINUX_AARCH64,
        DataModel::WINDOWS_X64,
    ];
    if !DataModel::HOST.long_double_is_double {
        models.push(DataModel::HOST);
    }
    for m in models {
        for spelling in ["long double", "long  double"] {
            match m.layout(spelling) {
                Err(Error::Unsupported { type_name, reason }) => {
                    assert_eq!(type_name, "long double");
                    assert!(reason.contains("double"), "{reason}");
                }
                other => panic!("{spelling}: expected Unsupported, got {other:?}"),
            }
        }
    }
    let message = DataModel::HOST
        .layout("long double")
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("unsupported type `long double`"),
        "{message}"
    );
}

#[test]
fn unknown_type_names() {
    for name in ["", "struct foo", "int128_t", "longlong", "char*"] {
        assert_eq!(
            DataModel::HOST.layout(name),
            Err(Error::UnknownType {
                name: name.to_string()
            })
        );
    }
}

#[test]
fn canonical_layouts_cover_every_name_with_the_host_model() {
    let table = canonical_layouts();
    assert_eq!(table.len(), DataModel::NAMES.len());
    for ((name, layout), expected) in table.iter().zip(DataModel::NAMES) {
        assert_eq!(name, expected);
        assert_eq!(*layout, DataModel::HOST.layout(name).unwrap());
    }
    let get = |n: &str| table.iter().find(|(name, _)| *name == n).unwrap().1.clone();
    assert_eq!(get("int").byte_size(), 4);
    assert_eq!(get("size_t").byte_size(), std::mem::size_of::<usize>());
    assert_eq!(get("void*"), ValueLayout::ADDRESS);
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    assert_eq!(get("long"), ValueLayout::I64);
}

#[test]
fn value_layout_alignment_and_names() {
    let packed = ValueLayout::I64.with_byte_alignment(1).unwrap();
    assert_eq!((packed.byte_size(), packed.byte_alignment()), (8, 1));
    assert!(!packed.is_naturally_aligned());
    let over = ValueLayout::I32.with_byte_alignment(16).unwrap();
    assert_eq!(over.byte_alignment(), 16);
    assert!(over.is_naturally_aligned());
    for bad in [0, 3, 6, 12, usize::MAX] {
        assert_eq!(
            ValueLayout::I32.with_byte_alignment(bad),
            Err(Error::InvalidAlignment { alignment: bad })
        );
    }
    let named = ValueLayout::F32.with_name("x");
    assert_eq!(named.name(), Some("x"));
    assert_eq!(named.clone().without_name(), ValueLayout::F32);
    assert_eq!(named.to_string(), "f32(x)");
    assert_eq!(packed.to_string(), "i64%1");
}

#[test]
fn pointer_with_target_layout() {
    let point = MemoryLayout::c_struct([i32("x"), i32("y")]).unwrap();
    // SAFETY: nothing is read through `p`.
    let p = unsafe { ValueLayout::pointer_to(point.clone()) }.unwrap();
    assert_eq!(p.kind(), ScalarKind::Pointer);
    assert_eq!(p.byte_size(), std::mem::size_of::<usize>());
    assert_eq!(p.target(), Some(&point));
    assert_eq!(ValueLayout::ADDRESS.target(), None);
    assert_ne!(p, ValueLayout::ADDRESS);
}

// ---------------------------------------------------------------------------------------------
// C structs
// ---------------------------------------------------------------------------------------------

#[test]
fn c_struct_inserts_c_padding() {
    // struct { char c; double d; }
    let s = MemoryLayout::c_struct([i8("c"), f64("d")]).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((16, 8), vec![0, 8]));
    // struct { char a; int b; char c; }: 3 bytes of padding after a, 3 trailing.
    let s = MemoryLayout::c_struct([i8("a"), i32("b"), i8("c")]).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((12, 4), vec![0, 4, 8]));
    // struct { double d; char c; }: trailing padding to 16.
    let s = MemoryLayout::c_struct([f64("d"), i8("c")]).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((16, 8), vec![0, 8]));
    // struct { char a; short b; char c; int d; }
    let s = MemoryLayout::c_struct([i8("a"), i16("b"), i8("c"), i32("d")]).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((12, 4), vec![0, 2, 4, 8]));
    // struct { short s; char c[3]; }: the array has the element's alignment.
    let chars = MemoryLayout::sequence_layout(3, ValueLayout::I8)
        .unwrap()
        .with_name("c");
    let s = MemoryLayout::c_struct([i16("s"), chars]).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((6, 2), vec![0, 2]));
    // Ordered from widest to narrowest: no holes.
    let s = MemoryLayout::c_struct([i64("a"), i32("b"), i16("c"), i8("d"), i8("e")]).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((16, 8), vec![0, 8, 12, 14, 15]));
}

#[test]
fn c_struct_bool_and_char_tails() {
    // struct { int i; bool b; } -> 8 bytes.
    let s = MemoryLayout::c_struct([i32("i"), ValueLayout::BOOL.with_name("b").into()]).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((8, 4), vec![0, 4]));
    // struct { double d; char a, b, c; } -> 16 bytes.
    let s = MemoryLayout::c_struct([f64("d"), i8("a"), i8("b"), i8("c")]).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((16, 8), vec![0, 8, 9, 10]));
    // struct { char a, b, c; } -> 3 bytes, alignment 1.
    let s = MemoryLayout::c_struct([i8("a"), i8("b"), i8("c")]).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((3, 1), vec![0, 1, 2]));
}

#[test]
fn c_struct_nested() {
    let inner = MemoryLayout::c_struct([i8("tag"), i32("value")])
        .unwrap()
        .with_name("inner");
    assert_eq!(sa(&inner), (8, 4));
    // struct { char c; struct inner in; short s; }
    let outer = MemoryLayout::c_struct([i8("c"), inner.clone(), i16("s")]).unwrap();
    assert_eq!((sa(&outer), offsets(&outer)), ((16, 4), vec![0, 4, 12]));
    assert_eq!(outer.byte_offset(["inner", "value"]).unwrap(), 8);
    assert_eq!(outer.byte_offset_of("inner.tag").unwrap(), 4);
    assert_eq!(
        outer
            .byte_offset([PathElement::Index(1), 1.into()])
            .unwrap(),
        8
    );
}

#[test]
fn empty_struct_and_union() {
    let s = MemoryLayout::c_struct(Vec::<MemoryLayout>::new()).unwrap();
    assert_eq!(sa(&s), (0, 1));
    let s = MemoryLayout::struct_layout(Vec::<MemoryLayout>::new()).unwrap();
    assert_eq!(sa(&s), (0, 1));
    let u = MemoryLayout::union_layout(Vec::<MemoryLayout>::new()).unwrap();
    assert_eq!(sa(&u), (0, 1));
}

#[test]
fn c_struct_size_overflow_is_an_error() {
    let huge = MemoryLayout::sequence_layout(isize::MAX as usize, ValueLayout::I8).unwrap();
    assert_eq!(huge.byte_size(), isize::MAX as usize);
    // The struct's second member would end past isize::MAX.
    match MemoryLayout::c_struct([huge.clone().with_name("big"), i8("tail")]) {
        Err(Error::SizeOverflow { what }) => {
            assert!(what.contains("`tail` (#1)"), "{what}");
            assert!(
                what.contains(&format!("byte offset {}", isize::MAX)),
                "{what}"
            );
        }
        other => panic!("expected SizeOverflow, got {other:?}"),
    }
    // Aligning the second member overflows.
    match MemoryLayout::c_struct([huge.clone(), i32("x")]) {
        Err(Error::SizeOverflow { what }) => assert!(what.contains("`x` (#1)"), "{what}"),
        other => panic!("expected SizeOverflow, got {other:?}"),
    }
    // Trailing padding overflows: isize::MAX bytes + alignment 2 -> isize::MAX + 1.
    let odd = MemoryLayout::sequence_layout(isize::MAX as usize - 2, ValueLayout::I8).unwrap();
    assert!(matches!(
        MemoryLayout::c_struct([i16("s"), odd]),
        Err(Error::SizeOverflow { .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// Explicit struct layouts (Java's structLayout) and their validation
// ---------------------------------------------------------------------------------------------

#[test]
fn struct_layout_with_explicit_padding() {
    let s = MemoryLayout::struct_layout([
        i8("c"),
        MemoryLayout::padding_layout(7).unwrap(),
        f64("d"),
        i32("i"),
        MemoryLayout::padding_layout(4).unwrap(),
    ])
    .unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((24, 8), vec![0, 1, 8, 16, 20]));
    // Equal in size, alignment and named offsets to the C-padded struct.
    let c = MemoryLayout::c_struct([i8("c"), f64("d"), i32("i")]).unwrap();
    assert_eq!(sa(&c), sa(&s));
    for f in ["c", "d", "i"] {
        assert_eq!(s.byte_offset([f]).unwrap(), c.byte_offset([f]).unwrap());
    }
    // Padding members count for index paths.
    assert_eq!(s.byte_offset([2usize]).unwrap(), 8);
    assert_eq!(s.to_string(), "[i8(c) x7 f64(d) i32(i) x4]");
}

#[test]
fn struct_layout_without_trailing_padding_is_allowed() {
    // As in Java: no trailing padding is required for structLayout.
    let s = MemoryLayout::struct_layout([i32("i"), i8("c")]).unwrap();
    assert_eq!(sa(&s), (5, 4));
    // But such a struct cannot be a sequence element.
    assert!(matches!(
        MemoryLayout::sequence_layout(2, s),
        Err(Error::InvalidSize { size: 5, .. })
    ));
}

#[test]
fn struct_layout_misaligned_field_names_field_and_offset() {
    let err = MemoryLayout::struct_layout([i8("tag"), i32("value")]).unwrap_err();
    assert_eq!(
        err,
        Error::MisalignedField {
            field: "`value` (#1)".into(),
            offset: 1,
            alignment: 4,
        }
    );
    assert_eq!(
        err.to_string(),
        "field `value` (#1) at byte offset 1 is misaligned: its alignment is 4 bytes"
    );
    // Unnamed fields are named by index.
    let err = MemoryLayout::struct_layout([
        MemoryLayout::from(ValueLayout::I16),
        MemoryLayout::padding_layout(2).unwrap(),
        ValueLayout::I32.into(),
        ValueLayout::I8.into(),
        ValueLayout::F64.into(),
    ])
    .unwrap_err();
    assert_eq!(
        err,
        Error::MisalignedField {
            field: "#4".into(),
            offset: 9,
            alignment: 8,
        }
    );
    // A nested struct's alignment counts too.
    let inner = MemoryLayout::c_struct([i64("x")])
        .unwrap()
        .with_name("inner");
    assert_eq!(
        MemoryLayout::struct_layout([i32("a"), inner]).unwrap_err(),
        Error::MisalignedField {
            field: "`inner` (#1)".into(),
            offset: 4,
            alignment: 8,
        }
    );
}

#[test]
fn struct_layout_size_overflow_names_field_and_offset() {
    let half = MemoryLayout::sequence_layout(isize::MAX as usize / 2 + 1, ValueLayout::I8).unwrap();
    let err = MemoryLayout::struct_layout([half.clone().with_name("a"), half.with_name("b")])
        .unwrap_err();
    match err {
        Error::SizeOverflow { what } => {
            let offset = isize::MAX as usize / 2 + 1;
            assert!(what.contains("`b` (#1)"), "{what}");
            assert!(what.contains(&format!("byte offset {offset}")), "{what}");
        }
        other => panic!("expected SizeOverflow, got {other:?}"),
    }
}

#[test]
fn non_power_of_two_alignments_are_errors() {
    for bad in [0usize, 3, 5, 6, 24] {
        let e = Error::InvalidAlignment { alignment: bad };
        assert_eq!(
            MemoryLayout::c_struct_packed([i32("x")], bad),
            Err(e.clone())
        );
        assert_eq!(
            MemoryLayout::union_layout_packed([i32("x")], bad),
            Err(e.clone())
        );
        let s = MemoryLayout::c_struct([i32("x")]).unwrap();
        assert_eq!(s.with_byte_alignment(bad), Err(e.clone()));
        assert_eq!(
            MemoryLayout::from(ValueLayout::I32).with_byte_alignment(bad),
            Err(e)
        );
    }
}

#[test]
fn group_alignment_cannot_go_below_members() {
    let s = MemoryLayout::c_struct([i8("c"), i32("x")]).unwrap();
    match s.clone().with_byte_alignment(2) {
        Err(Error::AlignmentTooSmall {
            alignment,
            required,
            ..
        }) => assert_eq!((alignment, required), (2, 4)),
        other => panic!("expected AlignmentTooSmall, got {other:?}"),
    }
    // Raising the alignment raises the size (C `alignas(16)` on the struct).
    let raised = s.with_byte_alignment(16).unwrap();
    assert_eq!(sa(&raised), (16, 16));
    let u = MemoryLayout::union_layout([i8("c"), i16("s")])
        .unwrap()
        .with_byte_alignment(8)
        .unwrap();
    assert_eq!(sa(&u), (8, 8));
    let seq = MemoryLayout::sequence_layout(3, ValueLayout::I32).unwrap();
    assert!(matches!(
        seq.clone().with_byte_alignment(2),
        Err(Error::AlignmentTooSmall { required: 4, .. })
    ));
    assert_eq!(sa(&seq.with_byte_alignment(16).unwrap()), (12, 16));
    // A struct member over-aligned with with_byte_alignment moves to its alignment.
    let over = MemoryLayout::from(ValueLayout::I32.with_name("x"))
        .with_byte_alignment(16)
        .unwrap();
    let s = MemoryLayout::c_struct([i8("c"), over]).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((32, 16), vec![0, 16]));
}

// ---------------------------------------------------------------------------------------------
// Packing
// ---------------------------------------------------------------------------------------------

#[test]
fn packed_struct_has_no_padding() {
    // struct __attribute__((packed)) { char c; int i; short s; double d; }
    let s = MemoryLayout::c_struct_packed([i8("c"), i32("i"), i16("s"), f64("d")], 1).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((15, 1), vec![0, 1, 5, 7]));
    // The same with members lowered by hand.
    let by_hand = MemoryLayout::c_struct([
        MemoryLayout::from(ValueLayout::I8.with_name("c")),
        ValueLayout::I32
            .with_name("i")
            .with_byte_alignment(1)
            .unwrap()
            .into(),
        ValueLayout::I16
            .with_name("s")
            .with_byte_alignment(1)
            .unwrap()
            .into(),
        ValueLayout::F64
            .with_name("d")
            .with_byte_alignment(1)
            .unwrap()
            .into(),
    ])
    .unwrap();
    assert_eq!(by_hand, s);
}

#[test]
fn pragma_pack_caps_member_alignment() {
    // #pragma pack(2) struct { char c; int i; double d; char t; }
    let s = MemoryLayout::c_struct_packed([i8("c"), i32("i"), f64("d"), i8("t")], 2).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((16, 2), vec![0, 2, 6, 14]));
    // #pragma pack(4) struct { char c; double d; short s; }
    let s = MemoryLayout::c_struct_packed([i8("c"), f64("d"), i16("s")], 4).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((16, 4), vec![0, 4, 12]));
    // A pack larger than every member changes nothing.
    let plain = MemoryLayout::c_struct([i8("c"), f64("d")]).unwrap();
    let s = MemoryLayout::c_struct_packed([i8("c"), f64("d")], 16).unwrap();
    assert_eq!((sa(&s), offsets(&s)), (sa(&plain), offsets(&plain)));
    // A nested struct keeps its own layout, only its placement alignment is capped.
    let inner = MemoryLayout::c_struct([i8("a"), i32("b")])
        .unwrap()
        .with_name("in");
    let s = MemoryLayout::c_struct_packed([i8("c"), inner], 1).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((9, 1), vec![0, 1]));
    assert_eq!(s.byte_offset_of("in.b").unwrap(), 5);
}

#[test]
fn packed_union() {
    // union __attribute__((packed)) { char c[5]; int i; }
    let chars = MemoryLayout::sequence_layout(5, ValueLayout::I8)
        .unwrap()
        .with_name("c");
    let u = MemoryLayout::union_layout_packed([chars.clone(), i32("i")], 1).unwrap();
    assert_eq!(sa(&u), (5, 1));
    // #pragma pack(2) union { char c[5]; int i; }
    let u = MemoryLayout::union_layout_packed([chars.clone(), i32("i")], 2).unwrap();
    assert_eq!(sa(&u), (6, 2));
    let u = MemoryLayout::union_layout([chars, i32("i")]).unwrap();
    assert_eq!(sa(&u), (8, 4));
}

// ---------------------------------------------------------------------------------------------
// Unions and sequences
// ---------------------------------------------------------------------------------------------

#[test]
fn unions() {
    // union { char c; int i; double d; }
    let u = MemoryLayout::union_layout([i8("c"), i32("i"), f64("d")]).unwrap();
    assert_eq!(sa(&u), (8, 8));
    for f in ["c", "i", "d"] {
        assert_eq!(u.byte_offset([f]).unwrap(), 0);
    }
    // union { char c[9]; short s; } -> size 10 (rounded up to alignment 2).
    let chars = MemoryLayout::sequence_layout(9, ValueLayout::I8)
        .unwrap()
        .with_name("c");
    let u = MemoryLayout::union_layout([chars, i16("s")]).unwrap();
    assert_eq!(sa(&u), (10, 2));
    assert_eq!(u.byte_offset_of("c[8]").unwrap(), 8);
    // A union of structs.
    let a = MemoryLayout::c_struct([i8("tag"), i32("x")])
        .unwrap()
        .with_name("a");
    let b = MemoryLayout::c_struct([i8("tag"), f64("y")])
        .unwrap()
        .with_name("b");
    let u = MemoryLayout::union_layout([a, b]).unwrap().with_name("ab");
    assert_eq!(sa(&u), (16, 8));
    assert_eq!(u.byte_offset_of("b.y").unwrap(), 8);
    assert_eq!(u.byte_offset_of("a.x").unwrap(), 4);
    assert_eq!(u.name(), Some("ab"));
    assert!(u.is_group());
    // A struct containing the union.
    let s = MemoryLayout::c_struct([i32("kind"), u]).unwrap();
    assert_eq!((sa(&s), offsets(&s)), ((24, 8), vec![0, 8]));
    assert_eq!(s.byte_offset_of("ab.b.y").unwrap(), 16);
}

#[test]
fn union_size_overflow_is_an_error() {
    let huge = MemoryLayout::sequence_layout(isize::MAX as usize, ValueLayout::I8).unwrap();
    assert!(matches!(
        MemoryLayout::union_layout([huge, i64("x")]),
        Err(Error::SizeOverflow { .. })
    ));
}

#[test]
fn sequences() {
    let seq = MemoryLayout::sequence_layout(4, ValueLayout::I32).unwrap();
    assert_eq!(sa(&seq), (16, 4));
    let MemoryLayout::Sequence(s) = &seq else {
        panic!("not a sequence")
    };
    assert_eq!(
        (s.count(), s.element()),
        (4, &MemoryLayout::from(ValueLayout::I32))
    );
    assert_eq!(seq.byte_offset([3usize]).unwrap(), 12);
    assert_eq!(seq.to_string(), "[4:i32]");
    // A zero-length array.
    let empty = MemoryLayout::sequence_layout(0, ValueLayout::F64).unwrap();
    assert_eq!(sa(&empty), (0, 8));
    // Arrays of structs and 2-D arrays.
    let pt = MemoryLayout::c_struct([i8("tag"), i32("x")]).unwrap();
    let pts = MemoryLayout::sequence_layout(3, pt).unwrap();
    assert_eq!(sa(&pts), (24, 4));
    assert_eq!(pts.byte_offset_of("[2].x").unwrap(), 20);
    let grid = MemoryLayout::sequence_layout(
        3,
        MemoryLayout::sequence_layout(5, ValueLayout::I16).unwrap(),
    )
    .unwrap();
    assert_eq!(sa(&grid), (30, 2));
    assert_eq!(grid.byte_offset_of("[2][4]").unwrap(), 28);
    // Overflow of count * size.
    assert!(matches!(
        MemoryLayout::sequence_layout(usize::MAX / 4, ValueLayout::I64),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        MemoryLayout::sequence_layout(isize::MAX as usize / 8 + 1, ValueLayout::I64),
        Err(Error::SizeOverflow { .. })
    ));
}

#[test]
fn padding_layout() {
    let p = MemoryLayout::padding_layout(3).unwrap();
    assert_eq!(sa(&p), (3, 1));
    assert_eq!(p.to_string(), "x3");
    let p = p.with_name("pad");
    assert_eq!(p.name(), Some("pad"));
    // Padding ignores alignment changes.
    assert_eq!(sa(&p.with_byte_alignment(8).unwrap()), (3, 1));
}

// ---------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------

fn nested() -> MemoryLayout {
    // struct { int n; struct { char tag; double v; } items[4]; union { int i; float f; } u; }
    let item = MemoryLayout::c_struct([i8("tag"), f64("v")]).unwrap();
    let items = MemoryLayout::sequence_layout(4, item)
        .unwrap()
        .with_name("items");
    let u = MemoryLayout::union_layout([i32("i"), ValueLayout::F32.with_name("f").into()])
        .unwrap()
        .with_name("u");
    MemoryLayout::c_struct([i32("n"), items, u]).unwrap()
}

#[test]
fn paths_select_members_and_elements() {
    let l = nested();
    assert_eq!(sa(&l), (80, 8));
    assert_eq!(l.byte_offset(Vec::<PathElement>::new()).unwrap(), 0);
    assert_eq!(l.byte_offset(["n"]).unwrap(), 0);
    assert_eq!(l.byte_offset(["items"]).unwrap(), 8);
    assert_eq!(
        l.byte_offset([
            PathElement::Name("items"),
            PathElement::Index(2),
            PathElement::Name("v")
        ])
        .unwrap(),
        8 + 2 * 16 + 8
    );
    assert_eq!(l.byte_offset_of("items[3].tag").unwrap(), 8 + 48);
    assert_eq!(l.byte_offset_of(".items[1].v").unwrap(), 8 + 16 + 8);
    assert_eq!(l.byte_offset_of("u.f").unwrap(), 72);
    assert_eq!(l.byte_offset_of("u").unwrap(), 72);
    assert_eq!(l.byte_offset_of("").unwrap(), 0);
    let (offset, selected) = l.select([PathElement::Index(1), 0.into()]).unwrap();
    assert_eq!(offset, 8);
    assert_eq!(selected.byte_size(), 16);
    let (_, f) = l.select(["u", "f"]).unwrap();
    assert_eq!(f.as_value().map(ValueLayout::kind), Some(ScalarKind::F32));
}

#[test]
fn path_errors_name_the_element() {
    let l = nested();
    let not_found = |path: &str| match l.byte_offset_of(path) {
        Err(Error::PathNotFound { element, .. }) => element,
        other => panic!("{path}: expected PathNotFound, got {other:?}"),
    };
    assert_eq!(not_found("missing"), ".missing");
    assert_eq!(not_found("items[0].nope"), ".nope");
    assert_eq!(not_found("n.x"), ".x"); // a step into a scalar
    assert_eq!(not_found("items.tag"), ".tag"); // a name on a sequence
                                                // Indices past the end name the valid range.
    let out_of_range = |path: &str| match l.byte_offset_of(path) {
        Err(e @ Error::PathIndexOutOfRange { .. }) => e,
        other => panic!("{path}: expected PathIndexOutOfRange, got {other:?}"),
    };
    let e = out_of_range("items[4]");
    assert_eq!(
        e,
        Error::PathIndexOutOfRange {
            index: 4,
            count: 4,
            layout: "[4:[i8(tag) x7 f64(v)]](items)".into()
        }
    );
    assert!(
        e.to_string()
            .starts_with("layout path index 4 out of range 0..4 in "),
        "{e}"
    );
    let e = out_of_range("items[1099511627776]");
    assert!(
        e.to_string()
            .starts_with("layout path index 1099511627776 out of range 0..4 in "),
        "{e}"
    );
    assert!(matches!(
        out_of_range("[3]"),
        Error::PathIndexOutOfRange { count: 3, .. }
    )); // 3 members
    assert!(matches!(
        out_of_range("u[2]"),
        Error::PathIndexOutOfRange { index: 2, .. }
    ));
    // Malformed text paths: the position and what is wrong there.
    let malformed = |path: &str| match l.byte_offset_of(path) {
        Err(Error::MalformedPath {
            path: p,
            position,
            reason,
        }) => {
            assert_eq!(p, path);
            (position, reason)
        }
        other => panic!("{path}: expected MalformedPath, got {other:?}"),
    };
    assert_eq!(malformed("items[1"), (5, "unclosed `[`".to_string()));
    assert_eq!(malformed("items["), (5, "unclosed `[`".to_string()));
    let (at, why) = malformed("items[x]");
    assert_eq!(at, 6);
    assert!(
        why.contains("expected an index") && why.ends_with("found `x`"),
        "{why}"
    );
    let (at, why) = malformed("items[99999999999999999999999]");
    assert_eq!(at, 6);
    assert!(why.contains("expected an index"), "{why}");
    assert_eq!(malformed("items..v"), (6, "empty member name".to_string()));
    assert_eq!(malformed("n."), (2, "empty member name".to_string()));
    assert_eq!(
        malformed("items]"),
        (5, "`]` without a matching `[`".to_string())
    );
    assert_eq!(
        l.byte_offset_of("items[").unwrap_err().to_string(),
        "malformed layout path `items[` at byte 5: unclosed `[`"
    );
    // The error names the layout the element was applied to.
    match l.byte_offset(["items", "v"]) {
        Err(Error::PathNotFound { element, layout }) => {
            assert_eq!(element, ".v");
            assert_eq!(layout, "[4:[i8(tag) x7 f64(v)]](items)");
        }
        other => panic!("{other:?}"),
    }
    // Into padding.
    let s =
        MemoryLayout::struct_layout([i8("c"), MemoryLayout::padding_layout(3).unwrap(), i32("i")])
            .unwrap();
    assert!(matches!(
        s.byte_offset([1usize, 0usize]),
        Err(Error::PathNotFound { .. })
    ));
}

#[test]
fn display_renders_structure() {
    let s = MemoryLayout::c_struct([i8("tag"), f64("x")])
        .unwrap()
        .with_name("point");
    assert_eq!(s.to_string(), "[i8(tag) x7 f64(x)](point)");
    let u = MemoryLayout::union_layout([i32("i"), ValueLayout::F32.into()]).unwrap();
    assert_eq!(u.to_string(), "<i32(i)|f32>");
    let trailing = MemoryLayout::c_struct([f64("d"), i8("c")]).unwrap();
    assert_eq!(trailing.to_string(), "[f64(d) i8(c) x7]");
    let packed = MemoryLayout::c_struct_packed([i8("c"), i32("i")], 1).unwrap();
    assert_eq!(packed.to_string(), "[i8(c) i32%1(i)]");
}

#[test]
fn layouts_are_send_sync_and_cheap_to_clone() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<MemoryLayout>();
    assert_send_sync::<ValueLayout>();
    let l = nested();
    let c = l.clone();
    assert_eq!(l, c);
    if let (MemoryLayout::Struct(a), MemoryLayout::Struct(b)) = (&l, &c) {
        // Members are shared, not deep-copied.
        assert!(std::ptr::eq(a.members().as_ptr(), b.members().as_ptr()));
    }
}

fn too_deep(e: Error) -> (String, usize) {
    match e {
        Error::NestingTooDeep { what, depth, max } => {
            assert_eq!(max, MAX_NESTING);
            (what, depth)
        }
        other => panic!("expected NestingTooDeep, got {other}"),
    }
}

/// Nests `wrap` around a scalar until it fails; returns the depth reached and the error.
fn nest_until_error(
    limit: usize,
    wrap: impl Fn(MemoryLayout) -> Result<MemoryLayout>,
) -> (usize, Error) {
    let mut l: MemoryLayout = ValueLayout::I32.into();
    for _ in 0..limit {
        match wrap(l.clone()) {
            Ok(next) => l = next,
            Err(e) => return (l.depth(), e),
        }
    }
    panic!("{limit} levels of nesting were accepted");
}

#[test]
fn every_constructor_enforces_the_nesting_bound() {
    // A million attempts: the bound stops the nesting at MAX_NESTING, with no stack overflow.
    let (reached, e) = nest_until_error(1_000_000, |l| MemoryLayout::c_struct([l]));
    assert_eq!(reached, MAX_NESTING);
    assert_eq!(too_deep(e.clone()), ("struct".into(), MAX_NESTING + 1));
    assert_eq!(
        e.to_string(),
        "struct would be nested 65 levels deep: at most 64 levels are allowed"
    );
    type Wrap = dyn Fn(MemoryLayout) -> Result<MemoryLayout>;
    let cases: [(&str, &Wrap); 7] = [
        ("struct", &|l| MemoryLayout::c_struct_packed([l], 1)),
        ("struct", &|l| MemoryLayout::struct_layout([l])),
        ("union", &|l| MemoryLayout::union_layout([l])),
        ("union", &|l| MemoryLayout::union_layout_packed([l], 2)),
        ("sequence", &|l| MemoryLayout::sequence_layout(1, l)),
        ("pointer target", &|l| {
            // SAFETY: nothing is read through these layouts.
            unsafe { ValueLayout::pointer_to(l) }.map(MemoryLayout::from)
        }),
        ("struct", &|l| {
            // SAFETY: nothing is read through these layouts.
            MemoryLayout::c_struct([unsafe { ValueLayout::pointer_to(l) }?])
                .map(|s| s.with_name("s"))
        }),
    ];
    for (what, wrap) in cases {
        let (reached, e) = nest_until_error(1000, wrap);
        assert!(reached >= MAX_NESTING - 1, "{what}: {reached}");
        assert_eq!(too_deep(e).0, what);
    }
}

#[test]
fn max_depth_layouts_drop_compare_hash_and_print() {
    // Two separately built chains of the same shape (no shared Arcs between them).
    let chain = || {
        let mut l: MemoryLayout = ValueLayout::I8.into();
        for i in 1..MAX_NESTING {
            let tag = ValueLayout::I8.with_name(format!("m{i}"));
            l = MemoryLayout::c_struct([l, tag.into()]).unwrap();
        }
        l
    };
    let (a, b) = (chain(), chain());
    assert_eq!(a.depth(), MAX_NESTING);
    assert_eq!(a, b);
    assert_eq!(a.structural_hash(), b.structural_hash());
    assert!(a.to_string().starts_with("[[[[[["));
    drop(a);
    drop(b);
}

/// `union U0 { int a; int b; }; union Un { union Un-1 a; union Un-1 b; }`: 2^n leaves in the
/// tree, n + 2 distinct nodes.
fn shared_unions(levels: usize, leaf: ValueLayout) -> MemoryLayout {
    let mut u =
        MemoryLayout::union_layout([leaf.clone().with_name("a"), leaf.with_name("b")]).unwrap();
    for _ in 0..levels {
        u = MemoryLayout::union_layout([u.clone().with_name("a"), u.with_name("b")]).unwrap();
    }
    u
}

#[test]
fn shared_members_compare_hash_and_print_in_linear_time() {
    let a = shared_unions(40, ValueLayout::I32);
    let b = shared_unions(40, ValueLayout::I32);
    let c = shared_unions(40, ValueLayout::U32);
    assert_eq!(a.depth(), 42);
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.structural_hash(), b.structural_hash());
    assert_ne!(a.structural_hash(), c.structural_hash());
    let text = a.to_string();
    assert!(text.len() <= text::TEXT_LIMIT + 3, "{}", text.len());
    assert!(text.starts_with("<<<<"), "{text}");
    assert!(text.ends_with('…'), "{text}");
    assert!(format!("{a:?}").len() <= text::TEXT_LIMIT + 16);
    // Error messages that print a layout are bounded too.
    let e = a.clone().with_byte_alignment(2).unwrap_err();
    assert!(
        e.to_string().len() < 3 * text::TEXT_LIMIT,
        "{}",
        e.to_string().len()
    );
    let e = a.select(["nope"]).unwrap_err();
    assert!(e.to_string().len() < 3 * text::TEXT_LIMIT);
}

#[test]
fn equality_still_sees_every_difference() {
    let s = |n: &str, t: ValueLayout| MemoryLayout::c_struct([t.with_name(n)]).unwrap();
    assert_ne!(s("x", ValueLayout::I32), s("y", ValueLayout::I32));
    assert_ne!(s("x", ValueLayout::I32), s("x", ValueLayout::U32));
    let a = s("x", ValueLayout::I32);
    assert_ne!(a.clone(), a.clone().with_name("n"));
    assert_ne!(a.clone(), a.clone().with_byte_alignment(8).unwrap());
    assert_eq!(a.clone().with_name("n"), a.clone().with_name("n"));
    // SAFETY: nothing is read through these layouts.
    let p = |t: MemoryLayout| MemoryLayout::from(unsafe { ValueLayout::pointer_to(t) }.unwrap());
    assert_ne!(p(a.clone()), p(s("x", ValueLayout::U32)));
    assert_eq!(p(a.clone()), p(s("x", ValueLayout::I32)));
    let seq = |n| MemoryLayout::sequence_layout(n, ValueLayout::I8).unwrap();
    assert_ne!(seq(3), seq(4));
    assert_eq!(seq(3), seq(3));
    let st = MemoryLayout::struct_layout([
        ValueLayout::I8.into(),
        MemoryLayout::padding_layout(3).unwrap(),
        ValueLayout::I32.into(),
    ])
    .unwrap();
    assert_ne!(
        st,
        MemoryLayout::c_struct([ValueLayout::I8, ValueLayout::I32]).unwrap()
    );
}

#[test]
fn padding_sizes_fit_in_isize() {
    let e = MemoryLayout::padding_layout(usize::MAX).unwrap_err();
    assert!(matches!(e, Error::SizeOverflow { .. }), "{e}");
    assert!(e.to_string().contains(&usize::MAX.to_string()), "{e}");
    let max = MemoryLayout::padding_layout(isize::MAX as usize).unwrap();
    assert_eq!(max.byte_size(), isize::MAX as usize);
}

// ---------------------------------------------------------------------------------------------
// Equality and shape comparison do work linear in the size of the layouts
// ---------------------------------------------------------------------------------------------

/// Runs `f` and counts the comparison steps it takes on this thread (node pairs and offsets
/// compared, nodes, offsets and names numbered: see `compare.rs`).
fn counting<T>(f: impl FnOnce() -> T) -> (T, usize) {
    compare::STEPS.with(|s| s.set(0));
    let r = f();
    (r, compare::STEPS.with(|s| s.get()))
}

/// Side of the wide layouts below: above the walk's budget, small enough for Miri.
fn wide_n() -> usize {
    if cfg!(miri) {
        60
    } else {
        2000
    }
}

/// `n` fields `f0..` of i8 (unnamed when `named` is false), the last one of kind `last`.
fn fields(n: usize, named: bool, last: ValueLayout) -> MemoryLayout {
    MemoryLayout::c_struct((0..n).map(|i| {
        let v = if i + 1 == n {
            last.clone()
        } else {
            ValueLayout::I8
        };
        if named {
            v.with_name(format!("f{i}"))
        } else {
            v
        }
    }))
    .unwrap()
}

/// A union of `n` copies of one `n`-field struct (the review's case): 2n member slots and n
/// offsets, n² fields when expanded. With `odd_last`, the last copy is another struct whose last
/// field is `odd_last`.
fn wide(n: usize, named: bool, odd_last: Option<ValueLayout>) -> MemoryLayout {
    let s = fields(n, named, ValueLayout::I8);
    let odd = odd_last.map(|k| fields(n, named, k));
    MemoryLayout::union_layout((0..n).map(|i| match &odd {
        Some(o) if i + 1 == n => o.clone(),
        _ => s.clone(),
    }))
    .unwrap()
}

#[test]
fn equality_of_a_union_of_wide_structs_is_linear() {
    let n = wide_n();
    // Per layout: 2n member slots + n offsets. A pair-by-pair walk that compares offsets before
    // its memo (or memoizes only deep groups) takes n² steps here.
    let bound = 4 * (2 * 3 * n);
    let (a, b) = (wide(n, true, None), wide(n, true, None));
    let (eq, steps) = counting(|| a == b);
    assert!(eq);
    assert!(steps <= bound, "{steps} steps for n = {n}");
    let (MemoryLayout::Union(ua), MemoryLayout::Union(ub)) = (&a, &b) else {
        unreachable!()
    };
    let (eq, steps) = counting(|| ua == ub);
    assert!(eq);
    assert!(steps <= bound, "{steps} steps for n = {n}");
    let (MemoryLayout::Struct(sa), MemoryLayout::Struct(sb)) = (&ua.members()[0], &ub.members()[0])
    else {
        unreachable!()
    };
    let (eq, steps) = counting(|| sa == sb);
    assert!(eq);
    assert!(steps <= bound, "{steps} steps for n = {n}");
    // Shapes: equal whatever the names; a difference in the very last field is found, in
    // linear time too (no cached hash helps here: names differ everywhere).
    let plain = wide(n, false, None);
    let (alike, steps) = counting(|| same_shape(&a, &plain));
    assert!(alike);
    assert!(steps <= bound, "{steps} steps for n = {n}");
    let odd = wide(n, false, Some(ValueLayout::U8));
    let (alike, steps) = counting(|| same_shape(&a, &odd));
    assert!(!alike);
    assert!(steps <= bound, "{steps} steps for n = {n}");
    // Exact equality rejects the same difference at once by the cached hashes.
    let odd = wide(n, true, Some(ValueLayout::U8));
    let (eq, steps) = counting(|| a == odd);
    assert!(!eq);
    assert!(steps <= 1, "{steps} steps");
}

/// Two equal layouts shared differently: `a` has `n` distinct copies `X_i` of an `n`-field
/// struct, each repeated `n` times in its own union; `b` repeats one union of `n` distinct
/// copies `Y_j` `n` times. Memoizing pairs of nodes would meet every pair `(X_i, Y_j)`: n³
/// steps for layouts of O(n²) slots.
fn cross_shared(n: usize) -> (MemoryLayout, MemoryLayout) {
    let x = || fields(n, false, ValueLayout::I8);
    let a = MemoryLayout::union_layout((0..n).map(|_| {
        let xi = x();
        MemoryLayout::union_layout((0..n).map(|_| xi.clone())).unwrap()
    }))
    .unwrap();
    let s = MemoryLayout::union_layout((0..n).map(|_| x())).unwrap();
    let b = MemoryLayout::union_layout((0..n).map(|_| s.clone())).unwrap();
    (a, b)
}

#[test]
fn equality_of_differently_shared_layouts_is_linear() {
    let n = if cfg!(miri) { 16 } else { 100 };
    let (a, b) = cross_shared(n);
    // a: n + n² slots in unions, n² fields and n² offsets; b: 2n + n² + n².
    let size = (n + 3 * n * n) + (2 * n + 2 * n * n);
    let (eq, steps) = counting(|| a == b);
    assert!(eq);
    assert!(steps <= 2 * size, "{steps} steps for n = {n}, size {size}");
    let (alike, steps) = counting(|| same_shape(&a, &b));
    assert!(alike);
    assert!(steps <= 2 * size, "{steps} steps for n = {n}, size {size}");
}

#[test]
fn small_layouts_compare_by_the_walk_alone() {
    // Within the walk's budget: one step per node pair and per offset, stopping at the first
    // difference.
    let s = |l: ValueLayout| {
        MemoryLayout::c_struct([i32("x"), MemoryLayout::from(l), i8("z")]).unwrap()
    };
    let (a, b) = (s(ValueLayout::F64), s(ValueLayout::F64));
    let (eq, steps) = counting(|| a == b);
    assert!(eq);
    assert_eq!(steps, 1 + 3 + 3, "struct, 3 offsets, 3 members");
    let (eq, steps) = counting(|| a == a.clone());
    assert!(eq);
    assert_eq!(steps, 1, "shared members and offsets");
    let (alike, steps) = counting(|| same_shape(&a, &s(ValueLayout::I64)));
    assert!(!alike);
    assert_eq!(steps, 1 + 3 + 2, "stops at the second member");
}

#[test]
fn cached_member_alignment_gives_the_least_group_alignment() {
    let s = MemoryLayout::c_struct([i8("a"), i32("b")]).unwrap();
    let raised = s.clone().with_byte_alignment(16).unwrap();
    assert_eq!(sa(&raised), (16, 16));
    assert_eq!(raised.to_string(), "[i8(a) x3 i32(b) x8]%16");
    let e = raised.with_byte_alignment(2).unwrap_err();
    assert!(
        matches!(
            e,
            Error::AlignmentTooSmall {
                alignment: 2,
                required: 4,
                ..
            }
        ),
        "{e}"
    );
    let seq = MemoryLayout::sequence_layout(2, s).unwrap();
    assert!(seq.clone().with_byte_alignment(2).is_err());
    assert_eq!(seq.with_byte_alignment(8).unwrap().byte_alignment(), 8);
    let empty = MemoryLayout::union_layout(Vec::<MemoryLayout>::new()).unwrap();
    assert_eq!(empty.with_byte_alignment(1).unwrap().byte_alignment(), 1);
}

// ---------------------------------------------------------------------------------------------
// Pointer targets
// ---------------------------------------------------------------------------------------------

/// A pointer layout with `target` (nothing is read through it in these tests).
fn ptr(target: PointerTarget) -> ValueLayout {
    // SAFETY: layouts only built, compared and printed here; no pointer is read through them.
    unsafe { ValueLayout::ADDRESS.with_target(target) }.unwrap()
}

#[test]
fn targets_attach_to_pointers_only_and_print_compactly() {
    let e = |l: ValueLayout| {
        // SAFETY: the call fails; nothing is read.
        unsafe { l.with_target(PointerTarget::CString) }.unwrap_err()
    };
    assert_eq!(
        e(ValueLayout::I64).to_string(),
        "value mismatch at the target cstr: expected a pointer layout, found i64"
    );
    assert!(matches!(e(ValueLayout::U8), Error::ValueMismatch { .. }));
    let point = MemoryLayout::c_struct([i32("x"), i32("y")])
        .unwrap()
        .with_name("point");
    assert_eq!(ptr(PointerTarget::CString).to_string(), "ptr:cstr");
    assert_eq!(
        ptr(PointerTarget::Enclosing("node".into())).to_string(),
        "ptr:^node"
    );
    assert_eq!(
        ptr(PointerTarget::Layout(point.clone()))
            .with_name("p")
            .to_string(),
        "ptr:[i32(x) i32(y)](point)(p)"
    );
    // Name and alignment survive; `without_target` gives the plain address back.
    let named = ValueLayout::ADDRESS
        .with_name("s")
        .with_byte_alignment(4)
        .unwrap();
    // SAFETY: nothing is read through it.
    let t = unsafe { named.clone().with_target(PointerTarget::CString) }.unwrap();
    assert_eq!((t.name(), t.byte_alignment()), (Some("s"), 4));
    assert_eq!(t.clone().without_target(), named);
    // `target()` is the layout of a layout target only; depth counts layout targets only.
    assert_eq!(
        ptr(PointerTarget::Layout(point.clone())).target(),
        Some(&point)
    );
    assert_eq!(ptr(PointerTarget::CString).target(), None);
    assert_eq!(ptr(PointerTarget::CString).depth(), 1);
    assert_eq!(ptr(PointerTarget::Layout(point.clone())).depth(), 3);
}

#[test]
fn targets_take_part_in_equality_and_hashing() {
    use std::collections::HashSet;
    let l = |t: PointerTarget| MemoryLayout::from(ptr(t));
    let all = [
        MemoryLayout::from(ValueLayout::ADDRESS),
        l(PointerTarget::CString),
        l(PointerTarget::Enclosing("a".into())),
        l(PointerTarget::Enclosing("b".into())),
        l(PointerTarget::Layout(ValueLayout::I32.into())),
        l(PointerTarget::Layout(ValueLayout::U32.into())),
    ];
    for (i, x) in all.iter().enumerate() {
        for (j, y) in all.iter().enumerate() {
            assert_eq!(x == y, i == j, "{x} vs {y}");
        }
    }
    let set: HashSet<&MemoryLayout> = all.iter().collect();
    assert_eq!(set.len(), all.len());
    // In a struct too, where the cached shape hashes the members.
    let s = |m: MemoryLayout| MemoryLayout::c_struct([m]).unwrap();
    assert_ne!(s(all[1].clone()), s(all[2].clone()));
    assert_eq!(
        s(all[2].clone()),
        s(l(PointerTarget::Enclosing("a".into())))
    );
}

/// `struct node { int v; struct node *next; }` with `next` pointing to its enclosing record.
fn node() -> MemoryLayout {
    MemoryLayout::c_struct([
        i32("v"),
        ptr(PointerTarget::Enclosing("node".into()))
            .with_name("next")
            .into(),
    ])
    .unwrap()
    .with_name("node")
}

#[test]
fn accessors_resolve_enclosing_targets_to_the_record() {
    let node = node();
    let next = node.accessor("next").unwrap();
    assert_eq!(next.layout().target(), Some(&node));
    assert_eq!(next.layout().name(), Some("next"));
    // The resolved target is the record itself, whose own pointer is unresolved again.
    let (_, inner) = node.select(["next"]).unwrap();
    assert_eq!(
        inner.as_value().unwrap().pointer_target(),
        Some(&PointerTarget::Enclosing("node".into()))
    );
    // Embedded in another record, or in an array of them, the innermost `node` is meant.
    let holder = MemoryLayout::c_struct([
        i64("tag"),
        MemoryLayout::sequence_layout(2, node.clone())
            .unwrap()
            .with_name("nodes"),
    ])
    .unwrap()
    .with_name("holder");
    let n1 = holder.accessor("nodes[1].next").unwrap();
    assert_eq!(
        (n1.offset(), n1.layout().target()),
        (8 + 16 + 8, Some(&node))
    );
    // Without a `node` around it, the target stays unresolved (it reads as zero bytes).
    let alone =
        MemoryLayout::c_struct([ptr(PointerTarget::Enclosing("node".into())).with_name("p")])
            .unwrap()
            .with_name("other");
    assert_eq!(
        alone.accessor("p").unwrap().layout().pointer_target(),
        Some(&PointerTarget::Enclosing("node".into()))
    );
    // A union of that name counts; a sequence or a value does not enclose anything.
    let u = MemoryLayout::union_layout([ptr(PointerTarget::Enclosing("u".into())).with_name("p")])
        .unwrap()
        .with_name("u");
    assert_eq!(u.accessor("p").unwrap().layout().target(), Some(&u));
}

#[test]
fn enclosing_targets_resolve_through_pointer_chains() {
    // struct tree { struct tree **kids; }: a pointer to (pointers to the enclosing record).
    let kid = ptr(PointerTarget::Enclosing("tree".into()));
    let tree = MemoryLayout::c_struct([ptr(PointerTarget::Layout(kid.into())).with_name("kids")])
        .unwrap()
        .with_name("tree");
    let kids = tree.accessor("kids").unwrap();
    let element = kids
        .layout()
        .target()
        .and_then(MemoryLayout::as_value)
        .unwrap();
    assert_eq!(element.target(), Some(&tree));
    // Non-pointer targets and plain pointers are left as they are.
    let plain = MemoryLayout::c_struct([
        ValueLayout::ADDRESS.with_name("a"),
        ptr(PointerTarget::CString).with_name("s"),
    ])
    .unwrap();
    assert_eq!(
        plain.accessor("a").unwrap().layout(),
        &ValueLayout::ADDRESS.with_name("a")
    );
    assert_eq!(
        plain.accessor("s").unwrap().layout().pointer_target(),
        Some(&PointerTarget::CString)
    );
}

#[test]
fn a_record_too_deep_to_be_a_target_stays_unresolved() {
    // A record at the nesting limit cannot be a pointer's target (one more level).
    let p = ptr(PointerTarget::Enclosing("deep".into())).with_name("p");
    let mut l = MemoryLayout::c_struct([p]).unwrap();
    let mut path = String::from("p");
    while l.depth() + 1 < MAX_NESTING {
        l = MemoryLayout::c_struct([l.with_name("m")]).unwrap();
        path.insert_str(0, "m.");
    }
    let deep = MemoryLayout::c_struct([l.with_name("m")])
        .unwrap()
        .with_name("deep");
    path.insert_str(0, "m.");
    assert_eq!(deep.depth(), MAX_NESTING);
    let p = deep.accessor(&path).unwrap();
    assert_eq!(
        p.layout().pointer_target(),
        Some(&PointerTarget::Enclosing("deep".into()))
    );
}
