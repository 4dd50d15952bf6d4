//! Unit tests of the C declaration parser (pure Rust: they run under Miri too).

use super::*;
use crate::layout::{PointerTarget, ValueLayout as V};

fn parse(src: &str) -> Declarations {
    match Declarations::parse(src) {
        Ok(d) => d,
        Err(e) => panic!("parse failed:\n{e}"),
    }
}

fn err(src: &str) -> CdeclError {
    match Declarations::parse(src) {
        Ok(_) => panic!("expected an error for {src:?}"),
        Err(e) => e,
    }
}

fn layout(src: &str) -> MemoryLayout {
    match Declarations::new().type_layout(src) {
        Ok(l) => l,
        Err(e) => panic!("type_layout failed:\n{e}"),
    }
}

fn ptr_int() -> V {
    DataModel::HOST.layout("size_t").unwrap()
}

#[test]
fn prototypes() {
    let d = parse(
        "int open(const char *path, int flags, ...);
         size_t strlen(const char *);
         void free(void *p);
         int rand(void);
         double pow(double, double);
         int printf(const char *restrict fmt, ...);",
    );
    let open = d.function("open").unwrap();
    assert_eq!(open.name, "open");
    assert_eq!(open.variadic, Some(2));
    assert_eq!(
        open.param_names,
        vec![Some("path".to_string()), Some("flags".to_string())]
    );
    assert_eq!(
        open.descriptor,
        FunctionDescriptor::of(V::I32, [V::ADDRESS, V::I32])
    );
    let strlen = d.function("strlen").unwrap();
    assert_eq!(
        strlen.descriptor,
        FunctionDescriptor::of(ptr_int(), [V::ADDRESS])
    );
    assert_eq!(strlen.variadic, None);
    assert_eq!(strlen.param_names, vec![None]);
    assert_eq!(
        d.function("free").unwrap().descriptor,
        FunctionDescriptor::of_void([V::ADDRESS])
    );
    assert_eq!(
        d.function("rand").unwrap().descriptor,
        FunctionDescriptor::of(V::I32, Vec::<MemoryLayout>::new())
    );
    assert_eq!(
        d.function("pow").unwrap().descriptor,
        FunctionDescriptor::of(V::F64, [V::F64, V::F64])
    );
    assert_eq!(d.function("printf").unwrap().variadic, Some(1));
    assert_eq!(d.functions().count(), 6);
}

#[test]
fn function_pointers_and_decay() {
    let d = parse(
        "void (*signal(int sig, void (*handler)(int)))(int);
         void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
         int sum(int a[10], int m[][4], int f(int));",
    );
    assert_eq!(
        d.function("signal").unwrap().descriptor,
        FunctionDescriptor::of(V::ADDRESS, [V::I32, V::ADDRESS])
    );
    assert_eq!(
        d.function("qsort").unwrap().descriptor,
        FunctionDescriptor::of_void([V::ADDRESS, ptr_int(), ptr_int(), V::ADDRESS])
    );
    assert_eq!(
        d.function("sum").unwrap().descriptor,
        FunctionDescriptor::of(V::I32, [V::ADDRESS, V::ADDRESS, V::ADDRESS])
    );
}

#[test]
fn structs_nested_arrays_pointers() {
    let d = parse(
        "struct point { char tag; double x, y; };
         struct node { int value; struct node *next; void (*visit)(struct node *); };
         struct S { char c; double d; int i[3]; };
         struct outer { char c; struct point p; struct { short a; char b; } anon_named; int m[2][3]; };
         union value { int i; double d; char bytes[12]; };",
    );
    let p = d.layout("struct point").unwrap();
    assert_eq!(p.byte_size(), 24);
    assert_eq!(p.byte_offset_of("y").unwrap(), 16);
    assert_eq!(p.name(), Some("point"));
    let n = d.layout("struct node").unwrap();
    assert_eq!(
        (n.byte_size(), n.byte_offset_of("visit").unwrap()),
        (24, 16)
    );
    let s = d.layout("struct   S").unwrap();
    assert_eq!((s.byte_size(), s.byte_alignment()), (32, 8));
    assert_eq!(s.byte_offset_of("i[2]").unwrap(), 24);
    let o = d.layout("struct outer").unwrap();
    assert_eq!(o.byte_offset_of("p.x").unwrap(), 16);
    assert_eq!(o.byte_offset_of("anon_named.b").unwrap(), 34);
    assert_eq!(o.byte_offset_of("m[1][2]").unwrap(), 36 + 20);
    assert_eq!(o.byte_size(), 64);
    let u = d.layout("union value").unwrap();
    assert_eq!((u.byte_size(), u.byte_alignment()), (16, 8));
    assert!(d.layout("union point").is_none());
    assert!(d.layout("struct nope").is_none());
}

#[test]
fn anonymous_members_and_flexible_arrays() {
    let l = layout("struct { int kind; union { int i; double d; }; char data[]; }");
    assert_eq!((l.byte_size(), l.byte_alignment()), (16, 8));
    let MemoryLayout::Struct(s) = &l else {
        panic!("not a struct: {l}")
    };
    assert_eq!(s.offsets(), &[0, 8, 16]);
    assert_eq!(s.members()[2].byte_size(), 0);
    let e = err("struct bad { char data[]; int after; };");
    assert!(e.message().contains("flexible"), "{e}");
}

#[test]
fn typedefs() {
    let d = parse(
        "typedef struct { float x, y; } vec2;
         typedef struct node node_t;
         struct node { node_t *next; int v; };
         typedef int (*callback)(void *user, int event);
         typedef char name_buf[16];
         typedef unsigned long long u64;
         vec2 add(vec2 a, vec2 b);
         int on(callback cb, name_buf name);",
    );
    let v = d.typedef("vec2").unwrap();
    assert_eq!((v.byte_size(), v.name()), (8, Some("vec2")));
    assert_eq!(d.typedef("node_t").unwrap().byte_size(), 16);
    assert_eq!(
        d.typedef("callback").unwrap(),
        &MemoryLayout::from(V::ADDRESS)
    );
    assert_eq!(d.typedef("name_buf").unwrap().byte_size(), 16);
    assert_eq!(d.typedef("u64").unwrap(), &MemoryLayout::from(V::U64));
    assert_eq!(d.layout("u64"), d.typedef("u64"));
    assert_eq!(
        d.function("add").unwrap().descriptor,
        FunctionDescriptor::of(v.clone(), [v.clone(), v.clone()])
    );
    assert_eq!(
        d.function("on").unwrap().descriptor,
        FunctionDescriptor::of(V::I32, [V::ADDRESS, V::ADDRESS])
    );
}

#[test]
fn standard_typedefs() {
    let d = Declarations::new();
    assert_eq!(d.typedef("size_t").unwrap(), &MemoryLayout::from(ptr_int()));
    assert_eq!(d.typedef("uint8_t").unwrap(), &MemoryLayout::from(V::U8));
    assert_eq!(d.typedef("int64_t").unwrap(), &MemoryLayout::from(V::I64));
    assert_eq!(d.typedef("bool").unwrap(), &MemoryLayout::from(V::BOOL));
    #[cfg(target_os = "linux")]
    {
        assert_eq!(d.typedef("pid_t").unwrap(), &MemoryLayout::from(V::I32));
        assert_eq!(d.typedef("off_t").unwrap(), &MemoryLayout::from(V::I64));
        assert_eq!(d.typedef("mode_t").unwrap(), &MemoryLayout::from(V::U32));
    }
    assert!(d.typedef("FILE").is_none(), "FILE is opaque");
    let d = parse("int fputs(const char *s, FILE *stream); _Bool b(bool x);");
    assert_eq!(
        d.function("b").unwrap().descriptor,
        FunctionDescriptor::of(V::BOOL, [V::BOOL])
    );
}

#[test]
fn enums_and_constant_expressions() {
    let d = parse(
        "enum color { RED, GREEN = 5, BLUE, LAST = BLUE * 2 + (1 << 3) };
         enum big { HUGE = 0x100000000 };
         enum uns { U = 0x80000000u };
         struct buf { char data[LAST]; int sizes[sizeof(struct buf *) / 2]; char pad[_Alignof(double)]; };
         enum color paint(enum color c);",
    );
    assert_eq!(d.constant_i64("GREEN"), Some(5));
    assert_eq!(d.constant_i64("BLUE"), Some(6));
    assert_eq!(d.constant_i64("LAST"), Some(20));
    assert_eq!(d.layout("enum color").unwrap(), &MemoryLayout::from(V::I32));
    assert_eq!(d.layout("enum big").unwrap(), &MemoryLayout::from(V::I64));
    assert_eq!(d.layout("enum uns").unwrap(), &MemoryLayout::from(V::U32));
    let b = d.layout("struct buf").unwrap();
    assert_eq!(b.byte_offset_of("sizes").unwrap(), 20);
    assert_eq!(b.byte_offset_of("pad").unwrap(), 36);
    assert_eq!(
        d.function("paint").unwrap().descriptor,
        FunctionDescriptor::of(V::I32, [V::I32])
    );
    if cfg!(miri) {
        // Miri-sized: a parse takes about a second under Miri, so Miri checks the cases
        // above only; every case runs natively.
        return;
    }
    assert!(err("int a[1/0];").message().contains("division by zero"));
    assert!(err("int a[-1];").message().contains("negative"));
    assert!(err("int a[NOPE];").message().contains("not a constant"));
    assert!(err("int a[1.5];").message().contains("floating"));
    assert!(err("int a[0xffffffffffffffff * 0xffffffffffffffff];")
        .message()
        .contains("overflow"));
}

#[test]
fn qualifiers_attributes_and_gnu_extras_are_ignored() {
    let d = parse(
        "extern __inline __attribute__((__always_inline__)) int const volatile
             f(const char *__restrict __s, int) __attribute__((nonnull(1))) __asm__(\"f64\");
         static inline _Noreturn void die(void) __attribute__((noreturn));
         __extension__ typedef long long ll;
         extern int errno;
         #pragma once
         # 1 \"<stdin>\"
         ;",
    );
    assert_eq!(
        d.function("f").unwrap().descriptor,
        FunctionDescriptor::of(V::I32, [V::ADDRESS, V::I32])
    );
    assert!(d.function("die").is_some());
    assert_eq!(d.typedef("ll").unwrap(), &MemoryLayout::from(V::I64));
}

#[test]
fn packing() {
    let d = parse(
        "struct __attribute__((packed)) p1 { char c; int x; double d; };
         struct p2 { char c; int x; } __attribute__((__packed__));
         #pragma pack(push, 2)
         struct p3 { char c; int x; double d; };
         #pragma pack(pop)
         struct p4 { char c; int x; };
         #pragma pack(1)
         union u1 { char c; int x; };
         #pragma pack()
         struct p5 { char c; int x __attribute__((packed)); };
         struct __attribute__((packed)) p6 { char c; int x __attribute__((aligned(8))); char d; };
         struct __attribute__((aligned(16))) a1 { char c; };
         struct al { char c; _Alignas(8) int x; };",
    );
    let sz = |n: &str| {
        let l = d.layout(n).unwrap();
        (l.byte_size(), l.byte_alignment())
    };
    assert_eq!(sz("struct p1"), (13, 1));
    assert_eq!(
        d.layout("struct p1").unwrap().byte_offset_of("d").unwrap(),
        5
    );
    assert_eq!(sz("struct p2"), (5, 1));
    assert_eq!(sz("struct p3"), (14, 2));
    assert_eq!(sz("struct p4"), (8, 4));
    assert_eq!(sz("union u1"), (4, 1));
    assert_eq!(sz("struct p5"), (5, 1));
    assert_eq!(sz("struct p6"), (16, 8));
    assert_eq!(sz("struct a1"), (16, 16));
    assert_eq!(sz("struct al"), (16, 8));
    if cfg!(miri) {
        // Miri-sized: a parse takes about a second under Miri, so Miri checks the cases
        // above only; every case runs natively.
        return;
    }
    let e = err("#pragma pack(pop)");
    assert!(e.message().contains("without a matching push"), "{e}");
    let e = err("#pragma pack(3)");
    assert!(e.message().contains("must be 1, 2, 4, 8 or 16"), "{e}");
}

#[test]
fn pack_state_carries_over_between_adds() {
    let mut d = Declarations::new();
    d.add("#pragma pack(push, 1)").unwrap();
    d.add("struct s { char c; int i; };").unwrap();
    d.add("#pragma pack(pop)").unwrap();
    d.add("struct t { char c; int i; };").unwrap();
    assert_eq!(d.layout("struct s").unwrap().byte_size(), 5);
    assert_eq!(d.layout("struct t").unwrap().byte_size(), 8);
}

#[test]
fn add_is_atomic_and_returns_what_it_declared() {
    let mut d = Declarations::new();
    let declared = d
        .add("struct p { int x; }; typedef struct p p_t; int get(p_t *); extern int g;")
        .unwrap();
    assert_eq!(
        declared,
        vec![
            Declared::Tag("struct p".into()),
            Declared::Typedef("p_t".into()),
            Declared::Function("get".into()),
            Declared::Variable("g".into()),
        ]
    );
    assert!(d.add("int ok(void); struct broken { int x; ").is_err());
    assert!(d.function("ok").is_none(), "a failed add keeps nothing");
    // Identical redeclarations are fine, different ones are not.
    d.add("struct p { int x; }; int get(p_t *);").unwrap();
    // (`long long`: on LLP64 `long` has the layout of `int`, and members are compared by layout.)
    assert!(d
        .add("struct p { long long x; };")
        .unwrap_err()
        .message()
        .contains("redefinition"));
    assert!(d
        .add("long long get(p_t *);")
        .unwrap_err()
        .message()
        .contains("conflicting"));
    assert!(d
        .add("typedef long long p_t;")
        .unwrap_err()
        .message()
        .contains("conflicting"));
}

#[test]
fn type_layout_forms() {
    assert_eq!(layout("int[3]").byte_size(), 12);
    assert_eq!(layout("size_t"), MemoryLayout::from(ptr_int()));
    assert_eq!(layout("char *[4]").byte_size(), 32);
    assert_eq!(
        layout("struct S { char c; double d; int i[3]; }").byte_size(),
        32
    );
    assert_eq!(
        layout("struct S { char c; double d; int i[3]; };").byte_size(),
        32
    );
    assert_eq!(
        layout("struct A { int x; }; struct B { struct A a; char c; }").byte_size(),
        8
    );
    if cfg!(miri) {
        // Miri-sized: a parse takes about a second under Miri, so Miri checks the cases
        // above only; every case runs natively.
        return;
    }
    assert_eq!(layout("typedef struct { char a, b; } T;").byte_size(), 2);
    let mut d = Declarations::new();
    d.type_layout("struct Q { int a; }").unwrap();
    assert_eq!(d.layout("struct Q").unwrap().byte_size(), 4);
    let e = Declarations::new().type_layout("void").unwrap_err();
    assert!(e.message().contains("no layout"), "{e}");
    let e = Declarations::new().type_layout("int f(void);").unwrap_err();
    assert!(e.message().contains("declaration of `f`"), "{e}");
    // A tag that nothing declares is "not declared"; one declared (forward, or by a typedef
    // or a pointer) but never defined is "incomplete".
    let e = Declarations::new().type_layout("struct fwd").unwrap_err();
    assert_eq!(
        e.message(),
        "`struct fwd` is not declared, so it has no layout"
    );
    for src in [
        "struct fwd; struct fwd",
        "typedef struct fwd F; struct fwd",
        "struct fwd *p(void); struct fwd",
        "typedef struct fwd F; F",
    ] {
        let e = Declarations::new().type_layout(src).unwrap_err();
        assert!(
            e.message()
                .contains("is incomplete (declared but never defined)"),
            "{src}: {e}"
        );
    }
    let mut d = Declarations::parse("struct fwd;").unwrap();
    let e = d.type_layout("struct fwd").unwrap_err();
    assert!(e.message().contains("never defined"), "{e}");
    let e = Declarations::new().type_layout("").unwrap_err();
    assert!(e.message().contains("end of input"), "{e}");
}

#[test]
fn rejected_types_have_clear_errors() {
    assert!(err("_Atomic int x;").message().contains("atomic"));
    if cfg!(miri) {
        // Miri-sized: a parse takes about a second under Miri, so Miri checks the cases
        // above only; every case runs natively.
        return;
    }
    assert!(err("int f(int x) { return x; }")
        .message()
        .contains("function definitions"));
    assert!(err("int x = 3;").message().contains("initializers"));
    assert!(err("#include <stdio.h>").message().contains("#include"));
    assert!(err("struct s { void v; };").message().contains("void"));
    assert!(err("struct s { struct t inner; };")
        .message()
        .contains("incomplete"));
    assert!(err("struct s { int f(int); };")
        .message()
        .contains("function pointer"));
    assert!(err("int a[3](int);")
        .message()
        .contains("array of functions"));
    assert!(err("int f(int)[3];").message().contains("return an array"));
    assert!(err("unsigned signed x;")
        .message()
        .contains("cannot be combined"));
    assert!(err("long long long x;")
        .message()
        .contains("cannot be combined"));
    assert!(err("void f(void x);").message().contains("void"));
    assert!(err("struct s; union s *p;")
        .message()
        .contains("declared as `struct s`"));
}

#[test]
fn error_positions_and_caret_rendering() {
    let e = err("int ok(void);\nstruct S { foo x; };");
    assert_eq!(e.message(), "unknown type name `foo`");
    assert_eq!((e.line(), e.column()), (2, 12));
    assert_eq!(e.span(), Span::new(25, 28));
    assert_eq!(
        e.to_string(),
        "2:12: error: unknown type name `foo`\n2 | struct S { foo x; };\n  |            ^^^"
    );
    assert_eq!(e.summary(), "2:12: error: unknown type name `foo`");

    let e = err("struct S { char c;");
    assert!(e.message().contains("never closed"), "{e}");
    assert_eq!((e.line(), e.column()), (1, 10));
    if cfg!(miri) {
        // Miri-sized: a parse takes about a second under Miri, so Miri checks the cases
        // above only; every case runs natively.
        return;
    }

    let e = err("int f(int");
    assert!(e.message().contains("end of input"), "{e}");
    assert_eq!(e.column(), 10);

    let e = err("\tint x @;");
    assert_eq!((e.line(), e.column()), (1, 8));
    assert!(e.to_string().ends_with("\t      ^"), "{e}");

    let e = err("/* é */ int é;");
    assert_eq!(e.column(), 13, "columns count characters: {e}");
    assert!(err("/* never closed")
        .message()
        .contains("unterminated comment"));
    assert!(err("int a['x").message().contains("unterminated"));
}

#[test]
#[cfg_attr(miri, ignore = "10,000-token inputs are slow under Miri")]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for open in ["(", "*(", "[", "struct { ", "int (*)(", "-"] {
        let src = format!("int f{};", open.repeat(10_000));
        let e = Declarations::parse(&src).unwrap_err();
        assert!(!e.message().is_empty());
    }
    let e = err(&format!("int x[{}1{}];", "(".repeat(100), ")".repeat(100)));
    assert!(e.message().contains("nested more than"), "{e}");
    // Sixteen levels are fine.
    let src = format!("int x[{}1{}];", "(".repeat(16), ")".repeat(16));
    parse(&src);
}

#[test]
fn public_types_are_send_and_sync() {
    fn check<T: Send + Sync + Clone>() {}
    check::<Declarations>();
    check::<FunctionDecl>();
    check::<CdeclError>();
    check::<Declared>();
}

fn unsupported(e: crate::Error) -> (String, String) {
    match e {
        crate::Error::Unsupported { type_name, reason } => (type_name, reason),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "several parses, slow under Miri (the parser has no unsafe code)"
)]
#[cfg_attr(
    all(target_vendor = "apple", target_arch = "aarch64"),
    ignore = "`long double` is `double` on Apple arm64"
)]
fn types_without_layout_are_declared_and_fail_only_when_needed() {
    let d = parse(
        "long double sqrtl(long double x);
         double ld2d(long double x);
         double sqrt(double);
         _Complex double csqrt(_Complex double z);
         __int128 wide(void);
         unsigned __int128 uwide(void);
         _Float128 f128(_Float128);
         _Float32 f32(_Float64 x, _Float32x y);
         int vprintf(const char *fmt, __builtin_va_list ap);
         int vp(const char *fmt, va_list *ap);
         typedef struct { long long ll; long double ld; } max_align_t;
         struct holder { int tag; struct { long double v; } inner; };
         struct user { max_align_t *p; int n; };
         long double table[4];
         void takes_table(long double t[4]);
         enum { LD_SIZE = sizeof(long double), CD_SIZE = sizeof(_Complex double),
                I128_ALIGN = _Alignof(__int128), VA_SIZE = sizeof(__builtin_va_list) };",
    );
    // Everything else is there.
    assert!(d.function("sqrt").is_some());
    assert_eq!(
        d.function("f32").unwrap().descriptor,
        FunctionDescriptor::of(V::F32, [V::F64, V::F64])
    );
    assert_eq!(
        d.function("vp").unwrap().descriptor,
        FunctionDescriptor::of(V::I32, [V::ADDRESS, V::ADDRESS])
    );
    assert_eq!(
        d.function("takes_table").unwrap().descriptor,
        FunctionDescriptor::of_void([V::ADDRESS])
    );
    assert_eq!(d.layout("struct user").unwrap().byte_size(), 16);
    // The others are declared, and say why they cannot be linked.
    assert!(d.function("sqrtl").is_none());
    let (ty, why) = unsupported(d.try_function("sqrtl").unwrap_err());
    assert_eq!(ty, "long double");
    assert!(
        why.contains("`sqrtl`") && why.contains("return type"),
        "{why}"
    );
    let (ty, why) = unsupported(d.try_function("ld2d").unwrap_err());
    assert_eq!(ty, "long double");
    assert!(why.contains("`ld2d`") && why.contains("`x`"), "{why}");
    let (ty, why) = unsupported(d.try_function("csqrt").unwrap_err());
    assert_eq!(ty, "_Complex double");
    assert!(why.contains("return type"), "{why}");
    assert_eq!(
        unsupported(d.try_function("wide").unwrap_err()).0,
        "__int128"
    );
    assert_eq!(
        unsupported(d.try_function("uwide").unwrap_err()).0,
        "unsigned __int128"
    );
    assert_eq!(
        unsupported(d.try_function("f128").unwrap_err()).0,
        "_Float128"
    );
    let (ty, why) = unsupported(d.try_function("vprintf").unwrap_err());
    assert_eq!(ty, "__builtin_va_list");
    assert!(why.contains("`ap`"), "{why}");
    let mut unlinkable: Vec<&str> = d.unlinkable_functions().collect();
    unlinkable.sort_unstable();
    assert_eq!(
        unlinkable,
        ["csqrt", "f128", "ld2d", "sqrtl", "uwide", "vprintf", "wide"]
    );
    assert!(matches!(
        d.try_function("nope"),
        Err(crate::Error::NotDeclared { .. })
    ));
    // Records containing one have no layout; the error names the member.
    assert!(d.layout("max_align_t").is_none());
    let (ty, why) = unsupported(d.try_layout("max_align_t").unwrap_err());
    assert_eq!(ty, "max_align_t");
    assert!(why.contains("`ld`") && why.contains("long double"), "{why}");
    let (ty, why) = unsupported(d.try_layout("struct holder").unwrap_err());
    assert_eq!(ty, "struct holder");
    assert!(why.contains("`inner`") && why.contains("`v`"), "{why}");
    assert_eq!(d.try_layout("struct user").unwrap().byte_size(), 16);
    // gcc's sizes stay known to constant expressions.
    assert_eq!(d.constant_i64("LD_SIZE"), Some(16));
    assert_eq!(d.constant_i64("CD_SIZE"), Some(16));
    assert_eq!(d.constant_i64("I128_ALIGN"), Some(16));
    // sizeof(__builtin_va_list): gcc's figure for each target (mingw-w64, Apple, RISC-V 64 and
    // PPC64LE: `char *` or `void *`).
    let va_size = if cfg!(all(target_arch = "x86_64", unix)) {
        24
    } else if cfg!(any(
        target_vendor = "apple",
        windows,
        target_arch = "riscv64",
        target_arch = "powerpc64"
    )) {
        8
    } else {
        32
    };
    assert_eq!(d.constant_i64("VA_SIZE"), Some(va_size));
    // Asking for the layout is a positioned error.
    let e = Declarations::new()
        .type_layout("struct s { int a; long double b; }")
        .unwrap_err();
    assert!(e.message().contains("`b`"), "{e}");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "several parses, slow under Miri (the parser has no unsafe code)"
)]
fn bitfields_get_gccs_layout_and_accessors() {
    let d = parse(
        "struct flags { unsigned a : 1, : 0; int b : 3; };
         typedef struct { char c; int x : 30; int y : 4; } straddle_t;
         enum level { LOW, HIGH = 3 };
         struct lv { enum level l : 2; _Bool on : 1; };
         struct outer { int k; struct { unsigned lo : 4, hi : 4; }; char tail; };
         struct flags *get(void);
         int use(struct flags f);",
    );
    let flags = d.layout("struct flags").unwrap();
    assert_eq!((flags.byte_size(), flags.byte_alignment()), (8, 4));
    let b = d.bitfield("struct flags", "b").unwrap();
    assert_eq!((b.bit_offset(), b.bit_width()), (32, 3));
    assert_eq!(b.kind(), crate::layout::ScalarKind::I32);
    assert_eq!(d.bitfields("struct  flags").len(), 2);
    // Passed by value like any struct.
    assert_eq!(
        d.function("use").unwrap().descriptor.argument_layouts()[0].byte_size(),
        8
    );
    let st = d.layout("straddle_t").unwrap();
    assert_eq!(st.byte_size(), 12);
    let y = d.bitfield("straddle_t", "y").unwrap();
    assert_eq!((y.bit_offset(), y.bit_width()), (64, 4));
    // An enum without negative values is unsigned in a bitfield (GCC).
    let l = d.bitfield("struct lv", "l").unwrap();
    assert_eq!(l.kind(), crate::layout::ScalarKind::U32);
    assert_eq!(
        d.bitfield("struct lv", "on").unwrap().kind(),
        crate::layout::ScalarKind::Bool
    );
    // Bitfields of anonymous members are reachable from the outer record.
    let hi = d.bitfield("struct outer", "hi").unwrap();
    assert_eq!((hi.bit_offset(), hi.bit_width()), (36, 4));
    assert_eq!(d.layout("struct outer").unwrap().byte_size(), 12);
    // Reading and writing.
    let mut bytes = [0u8; 12];
    let seg = crate::memory::MemorySegment::of_slice(&mut bytes);
    hi.set(&seg, crate::Value::U32(9)).unwrap();
    d.bitfield("struct outer", "lo")
        .unwrap()
        .set(&seg, 15)
        .unwrap();
    assert_eq!(hi.get(&seg).unwrap(), crate::Value::U32(9));
    assert_eq!(seg.get::<u8>(4).unwrap(), 0x9f);
    assert!(hi.set(&seg, 16).is_err()); // 4 bits
    assert!(hi.set(&seg, -1).is_err()); // not an unsigned int
    assert!(hi.set(&seg, 1.5).is_err());
    assert!(hi.set_at(&seg, 9, 1).is_err()); // out of bounds
                                             // Errors.
    let e = err("struct s { int x : 33; };");
    assert!(e.message().contains("33 bits wide"), "{e}");
    assert!(err("struct s { int x : 0; };").message().contains("1..=32"));
    assert!(err("struct s { double x : 3; };")
        .message()
        .contains("integer"));
    assert!(err("struct s { int *p : 3; };")
        .message()
        .contains("integer"));
    // A bitfield of a type without layout makes the record one without layout.
    let d = parse("struct w { __int128 x : 3; };");
    assert!(d.try_layout("struct w").is_err());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "several parses, slow under Miri (the parser has no unsafe code)"
)]
fn mode_attribute_as_gcc() {
    let d = parse(
        "typedef int register_t __attribute__((__mode__(__word__)));
         typedef unsigned int u8m __attribute__((mode(QI)));
         typedef int s16 __attribute__((__mode__(__HI__)));
         typedef unsigned u64m __attribute__((__mode__(DI)));
         typedef int ptrm __attribute__((mode(pointer)));
         typedef float dfm __attribute__((mode(DF)));
         typedef int tim __attribute__((mode(TI)));
         typedef int v4si __attribute__((vector_size(16)));
         __attribute__((mode(SI))) long l32;
         enum { V4SI_SIZE = sizeof(v4si), V4SI_ALIGN = _Alignof(v4si) };",
    );
    assert_eq!(
        d.typedef("register_t").unwrap(),
        &MemoryLayout::from(V::I64)
    );
    assert_eq!(d.typedef("u8m").unwrap(), &MemoryLayout::from(V::U8));
    assert_eq!(d.typedef("s16").unwrap(), &MemoryLayout::from(V::I16));
    assert_eq!(d.typedef("u64m").unwrap(), &MemoryLayout::from(V::U64));
    assert_eq!(d.typedef("ptrm").unwrap().byte_size(), 8);
    assert_eq!(d.typedef("dfm").unwrap(), &MemoryLayout::from(V::F64));
    assert_eq!(unsupported(d.try_layout("tim").unwrap_err()).0, "__int128");
    assert!(d.typedef("v4si").is_none());
    assert!(unsupported(d.try_layout("v4si").unwrap_err())
        .0
        .contains("vector_size(16)"));
    assert_eq!(d.constant_i64("V4SI_SIZE"), Some(16));
    assert_eq!(d.constant_i64("V4SI_ALIGN"), Some(16));
    // Errors, never a silently wrong size.
    let e = err("typedef int x __attribute__((mode(V4SI)));");
    assert!(e.message().contains("machine mode"), "{e}");
    assert_eq!(e.column(), 35);
    let e = err("typedef int *p __attribute__((mode(DI)));");
    assert!(e.message().contains("pointer, array or function"), "{e}");
    let e = err("typedef double d __attribute__((mode(QI)));");
    assert!(e.message().contains("non-integer"), "{e}");
    let e = err("struct s { int a; } __attribute__((scalar_storage_order(\"big-endian\")));");
    assert!(e.message().contains("scalar_storage_order"), "{e}");
    let e = err("int f(void) __attribute__((ms_abi));");
    assert!(e.message().contains("ms_abi"), "{e}");
    let e = err("int f(void) __attribute__((frobnicate(3)));");
    assert!(
        e.message().contains("unknown attribute `frobnicate`"),
        "{e}"
    );
    assert_eq!(e.column(), 28);
    let e = err("typedef int v __attribute__((vector_size(12)));");
    assert!(e.message().contains("power of two"), "{e}");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "several parses, slow under Miri (the parser has no unsafe code)"
)]
fn gnu_header_grammar() {
    let d = parse(
        "extern int fscanf (FILE *__restrict __stream, const char *__restrict __format, ...)
             __asm__ (\"\" \"__isoc99_fscanf\") __attribute__ ((__nonnull__ (1)));
         static __inline unsigned int __bswap_32 (unsigned int __bsx)
         { return ((((__bsx) & 0xff000000u) >> 24) | (((__bsx) & 0x00ff0000u) >> 8)); }
         extern __inline __attribute__ ((__gnu_inline__)) int atoi (const char *__nptr)
         { { return (int) strtol (__nptr, (char **) ((void *)0), 10); } }
         _Static_assert(sizeof(int) == 4, \"int\");
         struct with_assert { int a; _Static_assert(1, \"ok\"); };
         typedef struct _IO_FILE FILE;
         typedef struct _IO_FILE FILE;
         typedef unsigned long size_t;
         typedef int pid_t;
         extern int regexec (const void *__restrict __preg, const char *__restrict __s,
                             size_t __nmatch, int __pmatch[__restrict __nmatch], int __eflags);
         void f(int n, int m[n][n]);
         int (__attribute__((__cdecl__)) *callback)(int);
         _Noreturn void die(void);",
    );
    let fscanf = d.function("fscanf").unwrap();
    assert_eq!(fscanf.symbol(), "__isoc99_fscanf");
    assert_eq!(fscanf.name, "fscanf");
    assert_eq!(d.function("die").unwrap().symbol(), "die");
    // Inline definitions are skipped, not declared.
    assert!(d.function("__bswap_32").is_none());
    assert!(d.function("atoi").is_none());
    assert_eq!(
        d.function("regexec")
            .unwrap()
            .descriptor
            .argument_layouts()
            .len(),
        5
    );
    assert!(d.function("f").is_some());
    assert!(err("_Static_assert(sizeof(int) == 8, \"no\");")
        .message()
        .contains("static assertion failed"));
    let twice = "typedef int (fn_t)(int); typedef int (fn_t)(int); fn_t f; \
                 typedef struct { unsigned a : 3; } bits_t; typedef struct { int n; } other_t;";
    let mut d2 = parse(twice);
    d2.add(twice).unwrap();
    assert!(d2.function("f").is_some());
    // (`long long`, not `long`: types are compared by layout, and on LLP64 `long` has the
    // layout of `int`.)
    assert!(err("typedef int t; typedef long long t;")
        .message()
        .contains("conflicting typedef"));
    assert!(err("int g(int n) { return n; }")
        .message()
        .contains("function definitions"));
    assert!(err("int a[n];").message().contains("`n` is not a constant"));
    // `static` definitions are skipped, initializer and all.
    let d = parse(
        "static const struct { const char *name; } names[] __attribute__((__unused__)) =
             { { \"a\" }, { \"b\" } }, other = { 0 };
         static int counter = (1 + 2) * 3; int after(void);",
    );
    assert!(d.function("after").is_some());
    assert!(err("static int x = (1;").message().contains("initializer"));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "several parses, slow under Miri (the parser has no unsafe code)"
)]
fn constant_expressions_are_typed_as_in_c() {
    // `long` is 64 bits on LP64 and 32 on LLP64 (Windows), where `1L << 40` overflows and
    // `-1L < 0U` compares as unsigned.
    let lp64 = crate::layout::DataModel::HOST.long_size == 8;
    let long_shift = if lp64 { "1L << 40" } else { "1LL << 40" };
    let d = parse(&format!(
        "enum e {{
             NOT_ZERO_U = ~0U,
             NEG_ONE = ~0,
             UCHAR = (unsigned char)-1,
             SCHAR = (signed char)200,
             SHIFT31 = (int)((1UL << 7) << 24),
             INT_MIN_ = 1 << 31,
             U_LT = -1 < 0U,
             L_LT = -1L < 0U,
             BOOL = (_Bool)7,
             HEX = 0xffffffff,
             HEX_GT = 0xffffffff > 0,
             DIV = -7 / 2,
             UDIV = (0U - 7) / 2,
             COND = 1 ? -1 : 0U,
             SZ_NEG = sizeof(int) - 5 > 0,
             LONG_SHIFT = {long_shift}
         }};"
    ));
    let c = |n: &str| d.constant_i64(n).unwrap();
    assert_eq!(c("NOT_ZERO_U"), 0xffff_ffff);
    assert_eq!(c("NEG_ONE"), -1);
    assert_eq!(c("UCHAR"), 255);
    assert_eq!(c("SCHAR"), -56);
    assert_eq!(c("SHIFT31"), i64::from(i32::MIN));
    assert_eq!(c("INT_MIN_"), i64::from(i32::MIN));
    assert_eq!(c("U_LT"), 0);
    assert_eq!(c("L_LT"), i64::from(lp64));
    assert_eq!(c("BOOL"), 1);
    assert_eq!(c("HEX"), 0xffff_ffff);
    assert_eq!(c("HEX_GT"), 1);
    assert_eq!(c("DIV"), -3);
    assert_eq!(c("UDIV"), 0x7fff_fffc);
    assert_eq!(c("COND"), 0xffff_ffff);
    assert_eq!(c("SZ_NEG"), 1);
    assert_eq!(c("LONG_SHIFT"), 1 << 40);
    if !lp64 {
        assert!(err("enum { X = 1L << 40 };")
            .message()
            .contains("shift count"));
    }
    assert!(err("enum { X = 2147483647 + 1 };")
        .message()
        .contains("overflow"));
    assert!(err("enum { X = 1 << 32 };")
        .message()
        .contains("shift count"));
    assert!(err("enum { X = (double)1 };")
        .message()
        .contains("floating"));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "several parses, slow under Miri (the parser has no unsafe code)"
)]
fn function_pointer_typedefs_and_callbacks() {
    let d = parse(
        "typedef int (*cmp)(const void *, const void *);
         typedef int cmp_fn(const void *, const void *);
         typedef cmp_fn *cmp_ptr;
         typedef cmp cmp_again;
         typedef long double (*bad_cb)(void);
         typedef int (*var_cb)(int, ...);
         typedef int not_fn;
         void sort(void *base, size_t n, size_t size, int (*compar)(const void *, const void *));
         void sort2(cmp c, cmp_fn f, cmp_ptr p, int x);
         void (*signal(int sig, void (*handler)(int)))(int);",
    );
    let fd = FunctionDescriptor::of(V::I32, [V::ADDRESS, V::ADDRESS]);
    for name in ["cmp", "cmp_fn", "cmp_ptr", "cmp_again"] {
        assert_eq!(d.function_pointer(name).unwrap(), fd, "{name}");
    }
    assert_eq!(d.callback("sort", 3).unwrap(), fd);
    for i in 0..3 {
        assert_eq!(d.callback("sort2", i).unwrap(), fd, "#{i}");
    }
    assert!(d.callback("sort2", 3).is_err());
    assert!(d.callback("sort", 9).is_err());
    assert_eq!(
        d.callback("signal", 1).unwrap(),
        FunctionDescriptor::of_void([V::I32])
    );
    let e = d.function_pointer("bad_cb").unwrap_err();
    assert!(e.to_string().contains("long double"), "{e}");
    let e = d.function_pointer("var_cb").unwrap_err();
    assert!(e.to_string().contains("variadic"), "{e}");
    assert!(matches!(
        d.function_pointer("not_fn"),
        Err(crate::Error::NotDeclared { .. })
    ));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "several parses, slow under Miri (the parser has no unsafe code)"
)]
fn transparent_unions_pass_as_their_first_member() {
    let d = parse(
        "typedef union { struct sockaddr *__sockaddr__; void *__other; } arg_t
             __attribute__((__transparent_union__));
         union __attribute__((transparent_union)) tagged { int *ip; unsigned *up; };
         int accept(int fd, arg_t addr, unsigned *len);
         int take(union tagged t);
         int by_ptr(arg_t *p);",
    );
    let f = |n: &str| d.function(n).unwrap().descriptor.clone();
    assert_eq!(
        f("accept"),
        FunctionDescriptor::of(V::I32, [V::I32, V::ADDRESS, V::ADDRESS])
    );
    assert_eq!(f("take"), FunctionDescriptor::of(V::I32, [V::ADDRESS]));
    assert_eq!(f("by_ptr"), FunctionDescriptor::of(V::I32, [V::ADDRESS]));
    // The union itself keeps its layout.
    assert_eq!(d.layout("arg_t").unwrap().byte_size(), 8);
}

#[test]
#[cfg_attr(miri, ignore = "opens the default symbol lookup")]
fn link_errors_name_the_function() {
    let d = parse("long double sqrtl(long double); int printf(const char *, ...); int abs(int);");
    let lookup = crate::linker::SymbolLookup::default_lookup();
    assert!(matches!(
        d.link(&lookup, "sqrtl"),
        Err(crate::Error::Unsupported { .. })
    ));
    assert!(matches!(
        d.link(&lookup, "nope"),
        Err(crate::Error::NotDeclared { .. })
    ));
    let e = d.link(&lookup, "printf").unwrap_err();
    assert!(e.to_string().contains("link_variadic"), "{e}");
    let e = d.link_variadic(&lookup, "abs", &[]).unwrap_err();
    assert!(e.to_string().contains("not variadic"), "{e}");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "several parses, slow under Miri (the parser has no unsafe code)"
)]
fn offsetof_and_extension_in_constant_expressions() {
    let d = parse(
        "struct in { char c; double d[3]; };
         struct out { int k; struct in i; };
         enum {
             OFF_K = __builtin_offsetof(struct out, k),
             OFF_D2 = __builtin_offsetof(struct out, i.d[2]),
             EXT = __extension__ 1LL << 40
         };
         _Static_assert(__builtin_offsetof(struct in, d) == 8, \"d\");",
    );
    assert_eq!(d.constant_i64("OFF_K"), Some(0));
    assert_eq!(d.constant_i64("OFF_D2"), Some(8 + 8 + 16));
    assert_eq!(d.constant_i64("EXT"), Some(1 << 40));
    let e = err("struct s { int a; }; enum { X = __builtin_offsetof(struct s, b) };");
    assert!(e.message().contains("b"), "{e}");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "several parses, slow under Miri (the parser has no unsafe code)"
)]
fn typedefs_of_unknown_size_arrays_are_incomplete() {
    let d = parse(
        "typedef int *list_t[]; typedef list_t list2_t;
         void take(list_t l, list2_t m); struct s { int n; list_t items; };
         typedef unsigned long __attribute__((aligned(4))) packed_ulong;",
    );
    assert!(d.typedef("list_t").is_none() && d.layout("list2_t").is_none());
    assert!(d.try_layout("list_t").is_err());
    assert_eq!(
        d.function("take").unwrap().descriptor,
        FunctionDescriptor::of_void([V::ADDRESS, V::ADDRESS])
    );
    assert_eq!(d.layout("struct s").unwrap().byte_size(), 8);
    assert!(err("typedef int l[]; enum { N = sizeof(l) };")
        .message()
        .contains("unknown size"));
    // `aligned` on a typedef may lower the alignment (gcc).
    assert_eq!(d.typedef("packed_ulong").unwrap().byte_alignment(), 4);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "several parses, slow under Miri (the parser has no unsafe code)"
)]
fn long_double_follows_the_data_model() {
    let d = parse("long double sqrtl(long double x);");
    if DataModel::HOST.long_double_is_double {
        assert_eq!(
            d.function("sqrtl").unwrap().descriptor,
            FunctionDescriptor::of(V::F64, [V::F64])
        );
    } else {
        assert!(d.function("sqrtl").is_none());
        assert!(d.try_function("sqrtl").is_err());
    }
}

#[test]
fn returns_c_string_records_a_pointer_to_a_character_type() {
    let d = parse(
        "typedef char gchar; typedef char *str; \
         char *a(void); const char *b(int); unsigned char *c(void); signed char *d(void); \
         gchar *e(void); char *(f)(void); char (*g(void)); \
         void *h(void); char **i(void); int *j(void); char k(void); str l(void); \
         char *(*m(void))(void); void n(char *); \
         typedef const char *F(void); F o; \
         typedef str str2; str2 q(void); str (r)(void); str *s(void); \
         typedef str *strp; strp t(void); typedef char arr[4]; arr *u(void);",
    );
    let yes = |n: &str| d.function(n).unwrap().returns_c_string();
    // `l`, `q` and `r` return a `char *` through a pointer typedef.
    for n in ["a", "b", "c", "d", "e", "f", "g", "o", "l", "q", "r"] {
        assert!(yes(n), "{n} returns a C string");
    }
    for n in ["h", "i", "j", "k", "m", "n", "s", "t", "u"] {
        assert!(!yes(n), "{n} does not return a C string");
    }
    // A typedef redefined as another pointer type is no longer a string type.
    let mut d = parse("typedef char *str;");
    d.add("typedef void *vp; str a(void); vp b(void);").unwrap();
    assert!(d.function("a").unwrap().returns_c_string());
    assert!(!d.function("b").unwrap().returns_c_string());
    // The fact is no part of the type: redeclaring through the typedef is compatible.
    let mut d = parse("typedef char *str; char *p(void);");
    d.add("str p(void);").unwrap();
    assert!(d.function("p").unwrap().returns_c_string());
}

#[test]
fn param_is_c_string_records_pointers_and_arrays_of_characters() {
    let d = parse(
        "typedef const char *png_const_charp; typedef unsigned char uchar; \
         struct stat; \
         void f(const char *a, char b[], png_const_charp c, uchar *d, char e, \
                char **g, void *h, struct stat *i, int *j, char (*k)(void), char l[2][3]);",
    );
    let f = d.function("f").unwrap();
    let strings: Vec<bool> = (0..12).map(|i| f.param_is_c_string(i)).collect();
    assert_eq!(
        strings,
        [true, true, true, true, false, false, false, false, false, false, false, false]
    );
    // One character-pointer spelling among compatible redeclarations is enough, in either
    // order (as for `returns_c_string`).
    for (first, second) in [
        ("int g(void *);", "int g(str);"),
        ("int g(str);", "int g(void *);"),
    ] {
        let mut d = parse("typedef char *str;");
        d.add(first).unwrap();
        d.add(second).unwrap();
        assert!(
            d.function("g").unwrap().param_is_c_string(0),
            "{first} {second}"
        );
    }
}

#[test]
fn inline_only_functions_are_remembered_by_name() {
    let d = parse(
        "static inline int twice(int x) { return 2 * x; } \
         static __inline__ unsigned swap(unsigned x) { return x; } \
         extern inline int both(int x) { return x; } int both(int); \
         int plain(int);",
    );
    assert!(d.is_inline_only("twice") && d.function("twice").is_none());
    assert!(d.is_inline_only("swap"));
    assert!(!d.is_inline_only("both") && d.function("both").is_some());
    assert!(!d.is_inline_only("plain") && !d.is_inline_only("nothing"));
    assert!(matches!(
        d.try_function("twice"),
        Err(crate::Error::NotDeclared { .. })
    ));
}

/// Parses `src` and returns the error and the parser's steps (tokens consumed plus nesting
/// levels entered).
fn err_and_steps(src: &str) -> (CdeclError, u64) {
    let (r, steps) = parser::work::steps(|| Declarations::parse(src));
    match r {
        Ok(_) => panic!("expected an error for {src:?}"),
        Err(e) => (e, steps),
    }
}

#[test]
fn nested_unterminated_array_sizes_take_linear_work() {
    // `int x[(` repeated, never closed (found by the fuzzer): each `[(` opens a cast whose type
    // name has an array size again. The work once doubled with every level (each array size
    // was parsed a second time for its error, and each enclosing `[` re-skipped the rest).
    let many = if cfg!(miri) { 40 } else { 200 };
    for levels in [1usize, 2, 17, 18, 40, many] {
        let src = "int x[(".repeat(levels);
        let tokens = 4 * levels as u64 + 1; // `int` `x` `[` `(` per level, then the end
        let (e, steps) = err_and_steps(&src);
        assert_eq!((e.line(), e.column()), (1, 6), "{levels} levels: {e}");
        assert!(
            e.message().contains("unterminated array size"),
            "{levels} levels: {e}"
        );
        // A few steps per token: 11 per level (2.75 per token) while below the nesting limit.
        assert!(
            steps <= 3 * tokens,
            "{levels} levels, {tokens} tokens: {steps} steps"
        );
    }
    let (_, s17) = err_and_steps(&"int x[(".repeat(17));
    let (_, s18) = err_and_steps(&"int x[(".repeat(18));
    assert_eq!(s18 - s17, s17 / 17, "the same work for every level");
    // The fuzzer's 2 KB input: unions whose array sizes open `sizeof(` and a comment swallows
    // the rest of each line.
    let src = include_str!("../../tests/cdecl_corpus/err_nested_sizeof_in_unions.h");
    let (e, steps) = err_and_steps(src);
    assert_eq!((e.line(), e.column()), (3, 43), "{e}");
    assert!(
        steps <= src.len() as u64,
        "{} bytes: {steps} steps",
        src.len()
    );
}

#[test]
fn unterminated_array_size_inside_a_closed_one_is_still_reported() {
    // The skip that stops early at a known-unclosed position must not misreport a `[` that
    // does close: here the inner `[` is closed and the outer one is not.
    let (e, _) = err_and_steps("int x[(int y[2]");
    assert_eq!((e.line(), e.column()), (1, 6), "{e}");
    assert!(e.message().contains("unterminated array size"), "{e}");
    // A size that is not a constant in a parameter is a VLA (skipped to its `]`).
    parse("void f(int n, int a[n + (1)]);");
}

// ---------------------------------------------------------------------------------------------
// Pointer targets (`Declarations::with_pointer_targets`)
// ---------------------------------------------------------------------------------------------

/// `src` parsed with pointer targets.
fn trusted(src: &str) -> Declarations {
    // SAFETY: these tests only inspect layouts; no pointer is read through them.
    let mut d = unsafe { Declarations::with_pointer_targets() };
    if let Err(e) = d.add(src) {
        panic!("parse failed:\n{e}");
    }
    d
}

/// The target of member `path` of `record`, as an accessor resolves it.
fn member_target(d: &Declarations, record: &str, path: &str) -> Option<PointerTarget> {
    let l = d.layout(record).unwrap_or_else(|| panic!("{record}"));
    let a = l.accessor(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    a.layout().pointer_target().cloned()
}

const TARGETS_SRC: &str = "
    struct point { int x, y; };
    struct fwd;
    typedef char xchar;
    typedef xchar ychar;
    typedef signed char schar;
    typedef struct node node_t;
    struct node {
        int v;
        char *s; const char *cs; xchar *xs; ychar *ys; schar *ss; unsigned char *us;
        struct point *p; struct point **pp; char **argv; char (*text)[8];
        void *opaque; int (*cb)(int); struct fwd *f; node_t *next; struct node *also;
        int (*arr)[4];
        struct { struct node *outer; int depth; } inner;
    };
    struct point *make(const char *name, char *argv[], char buf[16], int xs[4], void *v);
    typedef void (*start_handler)(void *data, const xchar *name, const xchar **atts);
";

#[test]
fn without_the_trust_step_pointers_stay_plain_addresses() {
    let d = parse(TARGETS_SRC);
    assert!(!d.has_pointer_targets());
    for m in ["s", "p", "pp", "next", "inner.outer", "argv"] {
        assert_eq!(member_target(&d, "struct node", m), None, "{m}");
    }
    assert_eq!(
        d.function("make").unwrap().descriptor,
        FunctionDescriptor::of(V::ADDRESS, [V::ADDRESS; 5])
    );
}

#[test]
fn pointer_members_carry_their_pointees() {
    let d = trusted(TARGETS_SRC);
    assert!(d.has_pointer_targets());
    let t = |m: &str| member_target(&d, "struct node", m);
    let layout = |l: MemoryLayout| Some(PointerTarget::Layout(l));
    let point = d.layout("struct point").unwrap().clone();
    let node = d.layout("struct node").unwrap().clone();
    // Plain `char`, also through typedefs: C strings.
    for m in ["s", "cs", "xs", "ys"] {
        assert_eq!(t(m), Some(PointerTarget::CString), "{m}");
    }
    // `signed char` and `unsigned char` are bytes: one byte.
    assert_eq!(t("ss"), layout(V::I8.into()));
    assert_eq!(t("us"), layout(V::U8.into()));
    assert_eq!(t("p"), layout(point.clone()));
    let to_point = unsafe_pointer(PointerTarget::Layout(point.clone()));
    assert_eq!(t("pp"), layout(to_point.into()));
    let string = unsafe_pointer(PointerTarget::CString);
    assert_eq!(t("argv"), layout(string.clone().into()));
    // Plain `char`: signed on x86-64, unsigned on AArch64 Linux (the host's data model).
    let char_kind = if crate::layout::DataModel::HOST.char_signed {
        V::I8
    } else {
        V::U8
    };
    let text = MemoryLayout::sequence_layout(8, char_kind).unwrap();
    assert_eq!(t("text"), layout(text));
    assert_eq!(
        t("arr"),
        layout(MemoryLayout::sequence_layout(4, V::I32).unwrap())
    );
    // No target: `void *`, function pointers, incomplete structs.
    for m in ["opaque", "cb", "f"] {
        assert_eq!(t(m), None, "{m}");
    }
    // The record itself, however it is named, and from inside an anonymous member.
    for m in ["next", "also", "inner.outer"] {
        assert_eq!(t(m), layout(node.clone()), "{m}");
    }
    let (_, raw) = node.select(["next"]).unwrap();
    assert_eq!(raw.to_string(), "ptr:^node(next)");
    // Parameters, array parameters (decayed to pointers to their elements) and returns.
    let make = &d.function("make").unwrap().descriptor;
    assert_eq!(
        make.return_layout(),
        Some(&unsafe_pointer(PointerTarget::Layout(point)).into())
    );
    let args: Vec<Option<PointerTarget>> = make
        .argument_layouts()
        .iter()
        .map(|l| l.as_value().unwrap().pointer_target().cloned())
        .collect();
    assert_eq!(
        args,
        [
            Some(PointerTarget::CString),
            layout(string.clone().into()),
            Some(PointerTarget::CString),
            layout(V::I32.into()),
            None,
        ]
    );
    // Callback parameters: `const XML_Char **atts` is a pointer to C-string pointers.
    let handler = d.function_pointer("start_handler").unwrap();
    let atts = handler.argument_layouts()[2].as_value().unwrap();
    assert_eq!(atts.target(), Some(&string.into()));
    assert_eq!(handler.to_string(), "(ptr, ptr:cstr, ptr:ptr:cstr)v");
}

/// A pointer layout with `target` (the tests compare layouts only).
fn unsafe_pointer(target: PointerTarget) -> V {
    // SAFETY: nothing is read through it.
    unsafe { V::ADDRESS.with_target(target) }.unwrap()
}

#[test]
fn a_record_defined_inside_another_points_to_it_only_from_inside() {
    let d = trusted("struct outer { int x; struct inner { struct outer *up; } in; };");
    let outer = d.layout("struct outer").unwrap().clone();
    assert_eq!(
        member_target(&d, "struct outer", "in.up"),
        Some(PointerTarget::Layout(outer))
    );
    // Alone, `struct inner` has no `outer` around it: unresolved.
    assert_eq!(
        member_target(&d, "struct inner", "up"),
        Some(PointerTarget::Enclosing("outer".into()))
    );
}

#[test]
fn redeclarations_before_and_after_a_pointee_is_complete_agree() {
    let d = trusted(
        "struct a; void f(struct a *); struct b { struct a *p; }; typedef struct a *ap;
         struct a { int x; };
         void f(struct a *); struct b { struct a *p; }; typedef struct a *ap;",
    );
    let a = d.layout("struct a").unwrap().clone();
    // The later declaration is kept: its pointer has the target.
    let f = &d.function("f").unwrap().descriptor;
    assert_eq!(
        f.argument_layouts()[0].as_value().unwrap().target(),
        Some(&a)
    );
    assert_eq!(
        member_target(&d, "struct b", "p"),
        Some(PointerTarget::Layout(a.clone()))
    );
    assert_eq!(
        d.typedef("ap").unwrap().as_value().unwrap().target(),
        Some(&a)
    );
    // As without targets, pointers agree whatever they point to; names still count.
    let mut d = trusted("struct a { int x; }; void f(struct a *); struct b { int *p; };");
    d.add("void f(int *); struct b { char *p; };").unwrap();
    assert!(d.add("struct b { int *q; };").is_err());
}

#[test]
fn layouts_too_deep_to_be_targets_are_plain_pointers() {
    let half = crate::layout::MAX_NESTING / 2;
    // `int [1]...[1]` is 1 + n levels deep; a target must be less deep than half the limit.
    let d = trusted(&format!(
        "struct s {{ int (*shallow){}; int (*deep){}; }};",
        "[1]".repeat(half - 2),
        "[1]".repeat(half - 1)
    ));
    let t = |m: &str| member_target(&d, "struct s", m);
    assert_eq!(t("shallow").unwrap().layout().unwrap().depth(), half - 1);
    assert_eq!(t("deep"), None);
}

#[test]
fn enumeration_values_that_overflow_are_errors_where_gcc_reports_them() {
    // gcc: "overflow in enumeration values" at the enumerator without a value.
    for (src, col) in [
        ("enum e { A = 9223372036854775807, B };", 35),
        ("enum e { A = 2147483647, B };", 26),
        ("enum e { A = 4294967295u, B };", 27),
        ("enum e { A = 18446744073709551615u, B };", 37),
    ] {
        let e = err(src);
        assert_eq!((e.line(), e.column()), (1, col), "{src}: {e}");
        assert!(
            e.message().contains("overflow in enumeration values"),
            "{e}"
        );
    }
    // The next value is computed in the previous one's type: `long` here.
    let d = parse("enum e { A = 2147483648, B };");
    assert_eq!(d.constant_i64("B"), Some(2147483649));
}

#[test]
fn enumeration_constants_are_int_or_their_enumerations_type() {
    // As gcc types them (checked with `_Generic`): `int` when the value fits, else the enum's
    // type (`unsigned int` for enum a, `long` for enum c and enum x).
    let d = parse(
        "enum a { A1 = 1, A2 = 0xffffffff }; enum c { C1 = -1, C2 = 0x7fffffffffff };
         enum x { X1 = -1, X2 = 0xffffffff };",
    );
    assert_eq!(d.constant("A1"), Some(Constant::I32(1)));
    assert_eq!(d.constant("A2"), Some(Constant::U32(u32::MAX)));
    assert_eq!(d.constant("C1"), Some(Constant::I32(-1)));
    // 64-bit: `long` on LP64, `long long` on Windows; I64 either way.
    assert_eq!(d.constant("C2"), Some(Constant::I64(0x7fff_ffff_ffff)));
    assert_eq!(d.constant("X2"), Some(Constant::I64(0xffff_ffff)));
}

#[test]
fn alignments_beyond_gccs_maximum_are_errors() {
    // gcc: "requested alignment '4611686018427387904' exceeds maximum 268435456".
    let e = err("struct s {\n  int x __attribute__((aligned(1ull << 62)));\n};");
    assert_eq!((e.line(), e.column()), (2, 24), "{e}");
    assert!(e.message().contains("exceeds the maximum 268435456"), "{e}");
    let e = err("typedef int t __attribute__((aligned(1 << 29)));");
    assert!(e.message().contains("536870912 exceeds the maximum"), "{e}");
    let e = err("struct s { _Alignas(1 << 29) int x; };");
    assert!(e.message().contains("exceeds the maximum"), "{e}");
    let d = parse("typedef int t __attribute__((aligned(1 << 28)));");
    assert_eq!(d.layout("t").unwrap().byte_alignment(), 1 << 28);
}

#[test]
fn sizeof_takes_expressions() {
    let d = parse(
        "struct s { char c; double d; int m[3]; }; extern int v[10]; extern struct s one;
         enum {
             DBL = sizeof 1.0, FLT = sizeof 1.0f, STR = sizeof \"abc\", CHR = sizeof 'a',
             LNG = sizeof 1L, PAREN = sizeof (1 + 2u), VAR = sizeof v, ELEM = sizeof v[0],
             DEREF = sizeof *(double *)0, MEMBER = sizeof ((struct s *)0)->m,
             DOT = sizeof one.d, ARROW_ELEM = sizeof ((struct s *)0)->m[1],
             ALIGN = __alignof__ one, OFF = (unsigned long)&((struct s *)0)->m,
             TYPE_THEN_MORE = sizeof (int) * 2
         };",
    );
    let c = |n: &str| d.constant_i64(n).unwrap();
    assert_eq!(c("DBL"), 8);
    assert_eq!(c("FLT"), 4);
    assert_eq!(c("STR"), 4);
    assert_eq!(c("CHR"), 4);
    assert_eq!(c("LNG"), DataModel::HOST.long_size as i64);
    assert_eq!(c("PAREN"), 4);
    assert_eq!(c("VAR"), 40);
    assert_eq!(c("ELEM"), 4);
    assert_eq!(c("DEREF"), 8);
    assert_eq!(c("MEMBER"), 12);
    assert_eq!(c("DOT"), 8);
    assert_eq!(c("ARROW_ELEM"), 4);
    assert_eq!(c("ALIGN"), 8);
    assert_eq!(c("OFF"), 16);
    assert_eq!(c("TYPE_THEN_MORE"), 8);
    // Reading memory, calls, and `void` are not constants.
    let e = err("extern int v; int a[v];");
    assert!(e.message().contains("reading an object"), "{e}");
    assert!(err("int f(void); int a[sizeof f()];")
        .message()
        .contains("function call"));
    assert!(err("int a[sizeof *(void *)0];").message().contains("void"));
    assert!(err("int a[sizeof(*(struct nope *)0)];")
        .message()
        .contains("incomplete"));
}
