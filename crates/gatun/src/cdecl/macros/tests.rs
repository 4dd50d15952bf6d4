//! The macro table and evaluator on preprocessor output written by hand (`#define` lines as
//! `cc -E -P -dD` prints them); `tests/cdecl_macros.rs` checks real headers against the C
//! compiler.

use std::collections::BTreeMap;

use super::{evaluate, split_definitions, Macro, MacroKind};
use crate::cdecl::{Constant, Declarations};
use crate::layout::DataModel;

/// The macros of `defines` (one `#define`/`#undef` per line), evaluated against the
/// declarations `decls`, and the declarations afterwards.
fn macros_of(decls: &str, defines: &str) -> (BTreeMap<String, Macro>, Declarations) {
    let mut d = Declarations::parse(decls).unwrap();
    let (rest, defs) = split_definitions(defines);
    assert_eq!(rest.trim(), "", "only directive lines were given");
    let m = evaluate(&mut d.state, &defs).into_iter().collect();
    (m, d)
}

/// The constant macro `name` of `m`, or a panic saying what it is instead.
fn constant(m: &BTreeMap<String, Macro>, name: &str) -> Constant {
    match m.get(name).map(Macro::kind) {
        Some(MacroKind::Constant(c)) => c.clone(),
        other => panic!("`{name}` is {other:?}"),
    }
}

/// The reason macro `name` of `m` is not a constant, or a panic.
fn reason(m: &BTreeMap<String, Macro>, name: &str) -> String {
    match m.get(name).map(Macro::kind) {
        Some(MacroKind::NotConstant { reason }) => reason.clone(),
        other => panic!("`{name}` is {other:?}, not NotConstant"),
    }
}

/// `long`'s constant with value `v` on this target.
fn long(v: i64) -> Constant {
    if DataModel::HOST.long_size == 8 {
        Constant::I64(v)
    } else {
        Constant::I32(v as i32)
    }
}

/// `size_t`'s constant with value `v`.
fn size_t(v: u64) -> Constant {
    if usize::BITS == 64 {
        Constant::U64(v)
    } else {
        Constant::U32(v as u32)
    }
}

#[test]
fn integer_macros_take_their_c_types() {
    let (m, _) = macros_of(
        "typedef unsigned int mode_t;",
        "#define A 1\n#define B 1u\n#define C 1L\n#define D 0xffffffff\n#define E 4294967296\n\
         #define F 0x7fffffffffffffff\n#define G 0xffffffffffffffff\n#define H ((int)0x10)\n\
         #define I (mode_t)0\n#define J ((unsigned char)-1)\n#define K ((_Bool)2)\n\
         #define L (1 ? 2 : 3u)\n#define M (-1 < 0U)\n#define N 'a'\n#define O 00\n\
         #define P ((short)-2)\n#define Q 2147483648\n#define R 1ULL << 63\n\
         #define EXT (__extension__ 1)\n#define EXT_CAST ((__extension__ long long) 1)\n",
    );
    assert_eq!(constant(&m, "A"), Constant::I32(1));
    assert_eq!(constant(&m, "B"), Constant::U32(1));
    assert_eq!(constant(&m, "C"), long(1));
    assert_eq!(constant(&m, "D"), Constant::U32(u32::MAX));
    assert_eq!(constant(&m, "E"), Constant::I64(1 << 32));
    assert_eq!(constant(&m, "F"), Constant::I64(i64::MAX));
    assert_eq!(constant(&m, "G"), Constant::U64(u64::MAX));
    assert_eq!(constant(&m, "H"), Constant::I32(16));
    assert_eq!(constant(&m, "I"), Constant::U32(0));
    assert_eq!(constant(&m, "J"), Constant::U8(255));
    assert_eq!(constant(&m, "K"), Constant::Bool(true));
    assert_eq!(constant(&m, "L"), Constant::U32(2));
    assert_eq!(constant(&m, "M"), Constant::I32(0));
    assert_eq!(constant(&m, "N"), Constant::I32(97));
    assert_eq!(constant(&m, "O"), Constant::I32(0));
    assert_eq!(constant(&m, "P"), Constant::I16(-2));
    // Too large for `int`; `long` on LP64, `long long` on Windows: 64 bits either way.
    assert_eq!(constant(&m, "Q"), Constant::I64(2147483648));
    assert_eq!(constant(&m, "R"), Constant::U64(1 << 63));
    assert_eq!(constant(&m, "EXT"), Constant::I32(1));
    assert_eq!(constant(&m, "EXT_CAST"), Constant::I64(1));
}

#[test]
fn floating_string_and_address_macros() {
    let (m, _) = macros_of(
        "typedef void (*destructor)(void *);",
        "#define D 1.5\n#define F 1.5f\n#define THIRD ((float)1 / 3)\n#define SIX (2.0 * 3)\n\
         #define MIX (1.0f + 2)\n#define HEX 0x1.8p1\n#define LD 1.0L\n#define CMP (0.1 + 0.2 == 0.3)\n\
         #define S \"a\" \"b\\n\"\n#define W L\"x\"\n#define NUL ((void *)0)\n\
         #define ALL_ONES ((destructor)-1)\n#define FIVE ((char *)0 + 5)\n#define INTS ((int *)8 - 1)\n\
         #define DIFF ((int *)16 - (int *)8)\n#define TRUNC ((int)-2.9)\n#define BIG ((int)1e10)\n",
    );
    assert_eq!(constant(&m, "D"), Constant::F64(1.5));
    assert_eq!(constant(&m, "F"), Constant::F32(1.5));
    assert_eq!(constant(&m, "THIRD"), Constant::F32(1.0 / 3.0));
    assert_eq!(constant(&m, "SIX"), Constant::F64(6.0));
    assert_eq!(constant(&m, "MIX"), Constant::F32(3.0));
    assert_eq!(constant(&m, "HEX"), Constant::F64(3.0));
    if !DataModel::HOST.long_double_is_double {
        assert!(reason(&m, "LD").contains("long double"));
    }
    assert_eq!(constant(&m, "CMP"), Constant::I32(0));
    assert_eq!(constant(&m, "S").as_bytes(), Some(&b"ab\n"[..]));
    assert!(reason(&m, "W").contains("wide"));
    assert_eq!(constant(&m, "NUL"), Constant::Address(0));
    assert_eq!(
        constant(&m, "ALL_ONES"),
        Constant::Address(u64::MAX >> (64 - usize::BITS))
    );
    assert_eq!(constant(&m, "FIVE"), Constant::Address(5));
    assert_eq!(constant(&m, "INTS"), Constant::Address(4));
    assert_eq!(constant(&m, "DIFF"), Constant::I64(2)); // ptrdiff_t
    assert_eq!(constant(&m, "TRUNC"), Constant::I32(-2));
    assert!(reason(&m, "BIG").contains("out of range"));
}

#[test]
fn expansion_is_textual_rescanned_and_ends_on_cycles() {
    let (m, _) = macros_of(
        "enum { E = 3 };",
        "#define A 1\n#define B (A + 1)\n#define C B * 2\n#define X 1 + 1\n#define Y X * 2\n\
         #define P Q\n#define Q P\n#define S S\n#define E E\n#define CHAIN B\n",
    );
    assert_eq!(constant(&m, "C"), Constant::I32(4));
    // Textual: `1 + 1 * 2`, not the value of X times 2.
    assert_eq!(constant(&m, "Y"), Constant::I32(3));
    assert!(
        reason(&m, "P").contains("`P` is not a constant"),
        "{}",
        reason(&m, "P")
    );
    assert!(reason(&m, "Q").contains("`Q` is not a constant"));
    assert!(reason(&m, "S").contains("`S` is not a constant"));
    // `#define E E` names the enumeration constant, as glibc's `#define SOCK_STREAM SOCK_STREAM`.
    assert_eq!(constant(&m, "E"), Constant::I32(3));
    assert_eq!(constant(&m, "CHAIN"), Constant::I32(2));
}

#[test]
fn function_like_macros_are_listed_and_invoked_inside_object_like_ones() {
    let (m, _) = macros_of(
        "",
        "#define F(x) ((x) + 1)\n#define G F(2)\n#define CAT(a, b) a ## b\n#define H CAT(12, 34)\n\
         #define INT64_C(c) c ## L\n#define MAXI INT64_C(9223372036854775807)\n\
         #define STR(x) #x\n#define V STR(1 +  \"a\\n\")\n#define FIRST(a, ...) a\n\
         #define W FIRST(7, 8, 9)\n#define OPT(a, ...) a __VA_OPT__(+ 1)\n#define O1 OPT(1, x)\n\
         #define O0 OPT(1)\n#define F2(a, b) a\n#define BAD F2(1)\n#define NAMED(args...) FIRST(args)\n\
         #define N NAMED(5, 6)\n#define EMPTY(a) a ## 1\n#define E1 EMPTY()\n#define LATE F\n\
         #define NOARG() 42\n#define K NOARG()\n#define COMMA(f, a...) f(0, ## a)\n\
         #define CM COMMA(FIRST)\n#define PASTE_BAD CAT(+, /)\n",
    );
    assert_eq!(
        m["F"].kind(),
        &MacroKind::FunctionLike {
            params: vec!["x".into()]
        }
    );
    assert_eq!(m["F"].replacement(), "(x) ((x) + 1)");
    assert_eq!(
        m["FIRST"].kind(),
        &MacroKind::FunctionLike {
            params: vec!["a".into(), "__VA_ARGS__".into()]
        }
    );
    assert_eq!(constant(&m, "G"), Constant::I32(3));
    assert_eq!(constant(&m, "H"), Constant::I32(1234));
    assert_eq!(constant(&m, "MAXI"), Constant::I64(i64::MAX));
    assert_eq!(constant(&m, "V").as_str(), Some("1 + \"a\\n\""));
    assert_eq!(constant(&m, "W"), Constant::I32(7));
    assert_eq!(constant(&m, "O1"), Constant::I32(2));
    assert_eq!(constant(&m, "O0"), Constant::I32(1));
    assert!(
        reason(&m, "BAD").contains("takes 2 arguments, 1 given"),
        "{}",
        reason(&m, "BAD")
    );
    assert_eq!(constant(&m, "N"), Constant::I32(5));
    assert_eq!(constant(&m, "E1"), Constant::I32(1));
    // A function-like macro's name without arguments stays a name.
    assert!(reason(&m, "LATE").contains("`F` is not a constant"));
    assert_eq!(constant(&m, "K"), Constant::I32(42));
    assert_eq!(constant(&m, "CM"), Constant::I32(0));
    assert!(reason(&m, "PASTE_BAD").contains("pasting"));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "hundreds of thousands of expansion steps: slow under Miri"
)]
fn expansion_work_is_bounded() {
    // Each level doubles the expansion: 2^40 tokens unbounded.
    let (m, _) = macros_of(
        "",
        "#define A0 1\n#define A1 (A0 + A0)\n#define A2 (A1 + A1)\n",
    );
    assert_eq!(constant(&m, "A2"), Constant::I32(4));
    let mut defines = String::from("#define A0 1\n");
    for i in 1..=40 {
        defines.push_str(&format!("#define A{i} (A{p} + A{p})\n", p = i - 1));
    }
    let (m, _) = macros_of("", &defines);
    let r = reason(&m, "A40");
    assert!(
        r.contains("tokens") || r.contains("steps") || r.contains("budget"),
        "{r}"
    );
    // Each of many short macros expands to 2^11 tokens: together they exceed the work the
    // table's size allows, so the later ones are not evaluated (the work stays linear in the
    // size of the definitions).
    let mut many = String::from("#define D0 1\n");
    for i in 1..=11 {
        many.push_str(&format!("#define D{i} (D{p} + D{p})\n", p = i - 1));
    }
    for i in 0..300 {
        many.push_str(&format!("#define X{i} D11\n"));
    }
    let (m, _) = macros_of("", &many);
    let over = m
        .values()
        .filter(
            |m| matches!(m.kind(), MacroKind::NotConstant { reason } if reason.contains("budget")),
        )
        .count();
    assert!(over > 200, "{over} macros over the budget");
    // Arguments nested past the bound.
    let mut deep = String::from("#define ID(x) x\n#define DEEP ");
    deep.push_str(&"ID(".repeat(200));
    deep.push('1');
    deep.push_str(&")".repeat(200));
    deep.push('\n');
    let (m, _) = macros_of("", &deep);
    assert!(
        reason(&m, "DEEP").contains("nested"),
        "{}",
        reason(&m, "DEEP")
    );
}

#[test]
fn sizeof_members_and_addresses_of_declared_types() {
    let (m, mut d) = macros_of(
        "struct s { char c; double d; int a[3]; struct { short x, y; }; }; extern int v[10];",
        "#define S1 sizeof(struct s)\n#define S2 sizeof(((struct s *)0)->a)\n#define S3 sizeof v\n\
         #define S4 sizeof \"abc\"\n#define S5 sizeof 1.0f\n#define OFF ((size_t)&((struct s *)0)->d)\n\
         #define ANON ((unsigned long)&((struct s *)0)->y)\n#define S6 sizeof(*(struct s *)0)\n\
         #define S7 sizeof(v[0])\n#define R v\n#define AV (&v)\n#define T ((struct undeclared *)0)\n\
         #define BR { 0 }\n#define TY unsigned long\n#define CALL f(1)\n#define EMPTY\n",
    );
    assert_eq!(constant(&m, "S1"), size_t(32));
    assert_eq!(constant(&m, "S2"), size_t(12));
    assert_eq!(constant(&m, "S3"), size_t(40));
    assert_eq!(constant(&m, "S4"), size_t(4));
    assert_eq!(constant(&m, "S5"), size_t(4));
    assert_eq!(constant(&m, "OFF"), size_t(8));
    assert_eq!(constant(&m, "ANON").as_i64(), Some(30));
    assert_eq!(constant(&m, "S6"), size_t(32));
    assert_eq!(constant(&m, "S7"), size_t(4));
    assert!(reason(&m, "R").contains("reading an object"));
    assert!(reason(&m, "AV").contains("address"), "{}", reason(&m, "AV"));
    assert_eq!(constant(&m, "T"), Constant::Address(0));
    assert!(reason(&m, "BR").contains("braced"));
    assert!(reason(&m, "TY").contains("type"), "{}", reason(&m, "TY"));
    assert!(reason(&m, "CALL").contains("not a constant"));
    assert!(reason(&m, "EMPTY").contains("nothing"));
    // Evaluating `(struct undeclared *)0` declared nothing.
    d.add("union undeclared { int x; };").unwrap();
}

#[test]
fn directives_leave_blank_lines_and_undef_removes() {
    let text =
        "int a;\n#define X 1\n#define X 2\n#define Y 3\n#undef Y\nint b;\r\n#define F(a, b) a\n";
    let (decls, defs) = split_definitions(text);
    assert_eq!(decls, "int a;\n\n\n\n\nint b;\r\n\n");
    assert_eq!(defs.get("X"), Some(&" 2"));
    assert_eq!(defs.get("Y"), None);
    assert_eq!(defs.get("F"), Some(&"(a, b) a"));
}

#[test]
#[cfg_attr(miri, ignore = "thousands of generated tables: slow under Miri")]
fn random_definitions_never_panic() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    const TOKENS: &[&str] = &[
        "M0",
        "M1",
        "M2",
        "F0",
        "F1",
        "V",
        "a",
        "b",
        "__VA_ARGS__",
        "__VA_OPT__",
        "#",
        "##",
        "(",
        ")",
        ",",
        "1",
        "0x10u",
        "2.5f",
        "1e999",
        "'a'",
        "\"s\"",
        "L\"w\"",
        "+",
        "-",
        "*",
        "/",
        "%",
        "<<",
        "?",
        ":",
        "&",
        "->",
        ".",
        "[",
        "]",
        "{",
        "sizeof",
        "(int)",
        "(char *)",
        "(float)",
        "struct",
        "s",
        "E",
        "v",
        "@",
        "\\",
        "\"",
        "'",
        "...",
    ];
    let heads = [
        "M0",
        "M1",
        "M2",
        "F0(a)",
        "F1(a, b)",
        "V(a, ...)",
        "F0()",
        "M0(",
        "V(x...)",
    ];
    let definition = (
        prop::sample::select(heads.to_vec()),
        prop::collection::vec(prop::sample::select(TOKENS.to_vec()), 0..12),
    )
        .prop_map(|(head, body)| format!("#define {head} {}\n", body.join(" ")));
    let table = prop::collection::vec(definition, 1..8).prop_map(|d| d.concat());
    let mut runner = TestRunner::new(Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&table, |defines| {
            let mut d =
                Declarations::parse("struct s { int v[2]; }; enum { E = 1 }; extern int v;")
                    .unwrap();
            let (_, defs) = split_definitions(&defines);
            let evaluated = evaluate(&mut d.state, &defs);
            prop_assert_eq!(evaluated.len(), defs.len());
            for (_, m) in &evaluated {
                if let MacroKind::NotConstant { reason } = m.kind() {
                    prop_assert!(!reason.is_empty());
                }
            }
            // Nothing was declared by evaluating.
            prop_assert!(d.layout("struct s").is_some());
            Ok(())
        })
        .unwrap();
}
