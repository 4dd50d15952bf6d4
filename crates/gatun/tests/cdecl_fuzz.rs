//! No input makes `gatun::cdecl` panic or overflow the stack: proptest feeds it random bytes,
//! random token soups and mutated valid declarations (the GNU C of system headers included:
//! `mode`/`vector_size`/`transparent_union` attributes, `__asm__` labels, inline bodies,
//! `_Static_assert`, types without layout, bitfields, VLA parameters, typed constants, floating,
//! address and `sizeof` expressions), through both `Declarations::add` and
//! `Declarations::type_layout`, and checks that every error renders with a position inside the
//! input.
//!
//! The normal run tries 21,000 inputs (7,000 per generator). The full campaign — 1,050,000
//! inputs, 350,000 per generator — is `#[ignore]`d; run it with
//! `cargo test -p gatun --test cdecl_fuzz -- --ignored` (a few minutes in a debug build).
//! Inputs that once failed live in `tests/cdecl_corpus/` (run by `tests/cdecl_corpus.rs`).

use gatun::cdecl::Declarations;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Tokens and fragments the soup is made of: keywords, typedef names, punctuation, numbers,
/// GNU extensions, directives, and the odd broken literal.
const TOKENS: &[&str] = &[
    "int",
    "char",
    "short",
    "long",
    "unsigned",
    "signed",
    "float",
    "double",
    "void",
    "_Bool",
    "bool",
    "const",
    "volatile",
    "restrict",
    "struct",
    "union",
    "enum",
    "typedef",
    "extern",
    "static",
    "inline",
    "size_t",
    "uint8_t",
    "int64_t",
    "FILE",
    "long double",
    "_Complex",
    "__int128",
    "_Alignas",
    "sizeof",
    "_Alignof",
    "__attribute__",
    "((packed))",
    "((aligned(8)))",
    "packed",
    "aligned",
    "__asm__",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ";",
    ",",
    "*",
    "...",
    ":",
    "=",
    "+",
    "-",
    "<<",
    ">>",
    "?",
    "!",
    "~",
    "/",
    "%",
    "0",
    "1",
    "3",
    "16",
    "0x7fffffffffffffff",
    "18446744073709551615",
    "99999999999999999999",
    "1.5",
    "'a'",
    "'\\x41'",
    "'",
    "\"s\"",
    "\"",
    "x",
    "y",
    "f",
    "point",
    "node",
    "RED",
    "__attribute__((mode(DI)))",
    "__attribute__((__mode__(__word__)))",
    "__attribute__((vector_size(16)))",
    "__attribute__((transparent_union))",
    "__attribute__((nonnull(1), format(printf, 1, 2)))",
    "__attribute__((frobnicate))",
    "mode",
    "vector_size",
    "__asm__(\"\" \"label\")",
    "_Static_assert",
    "__builtin_va_list",
    "va_list",
    "_Float128",
    "_Float32",
    "_Float64x",
    "__float128",
    "__complex__",
    "__extension__",
    "__inline",
    "__restrict",
    "static inline",
    "0U",
    "1UL",
    "0xffffffffu",
    "(unsigned char)",
    "__builtin_offsetof",
    "static int v =",
    "= { 1, { 2 } }",
    "typedef int t[];",
    "(int)",
    "n",
    "->",
    ".",
    "&",
    "&&",
    "||",
    "==",
    "1.5f",
    "0x1p-3",
    "1e308",
    "1.0L",
    "L'x'",
    "u8\"s\" \"t\"",
    "(void *)",
    "(struct point *)0",
    "(double)",
    "(float)",
    "sizeof v",
    "extern int v[4];",
    "\n#pragma pack(push, 1)\n",
    "\n#pragma pack(pop)\n",
    "\n#pragma pack(2)\n",
    "\n#pragma pack()\n",
    "\n#include <x.h>\n",
    "\n# 1 \"f\"\n",
    "/*",
    "*/",
    "//",
    "\n",
    "\t",
    "é",
    "\\",
    "@",
    "\0",
];

/// Valid declarations the mutator starts from.
const SEEDS: &[&str] = &[
    "int open(const char *path, int flags, ...);",
    "struct point { char tag; double x, y; };",
    "typedef struct node { int v; struct node *next; void (*visit)(struct node *); } node_t;",
    "void (*signal(int sig, void (*handler)(int)))(int);",
    "enum color { RED, GREEN = 5, BLUE }; struct b { char n[BLUE * 2]; };",
    "#pragma pack(push, 1)\nstruct p { char c; int x; };\n#pragma pack(pop)\n",
    "struct __attribute__((packed)) s { char c; long l; } __attribute__((aligned(4)));",
    "union u { int i; float f; char b[sizeof(double)]; };",
    "typedef int (*cmp_t)(const void *, const void *); void qsort(void *, size_t, size_t, cmp_t);",
    "struct f { uint32_t n; uint16_t data[]; }; _Alignas(16) extern int aligned_var;",
    "struct o { struct { int a; union { char c; double d; }; }; int m[2][3]; };",
    "typedef int register_t __attribute__((__mode__(__word__))); typedef int v4 __attribute__((vector_size(16)));",
    "extern int fscanf(FILE *__restrict s, const char *__restrict f, ...) __asm__(\"\" \"__isoc99_fscanf\");",
    "static __inline unsigned int bswap(unsigned int x) { return ((x & 0xff000000u) >> 24) | (x << 24); }",
    "_Static_assert(sizeof(int) == 4, \"int\"); struct s { int a; _Static_assert(1, \"x\"); };",
    "typedef struct { long long a; long double b; } max_align_t; long double sqrtl(long double);",
    "_Complex double csqrt(_Complex double); __int128 w(void); int vprintf(const char *, __builtin_va_list);",
    "struct bits { unsigned a : 1, : 0; int b : 3; }; int regexec(int n, int m[__restrict n]);",
    "typedef union { int *a; void *b; } arg __attribute__((transparent_union)); int take(arg);",
    "enum { A = ~0U, B = (unsigned char)-1, C = 1 << 31, D = -1 < 0U, E = (int)((1UL << 7) << 24) };",
    "struct in { char c; double d[3]; }; enum { O = __builtin_offsetof(struct in, d[2]) };",
    "static const struct { const char *n; } names[] = { { \"a\" }, { \"b\" } }; typedef int *list_t[];",
    "struct s { int m[3]; } one; extern double d; enum { A = sizeof one.m[1] + sizeof d, B = (int)(2.5 * 2), C = (unsigned long)&((struct s *)0)->m[2], D = sizeof \"ab\" \"c\" };",
    "enum e { X = 2147483647, Y }; typedef int big __attribute__((aligned(1ull << 62)));",
];

fn check(src: &str) {
    let mut d = Declarations::new();
    match d.add(src) {
        Ok(_) => {
            for f in d.functions() {
                let _ = f.descriptor.to_string();
                for i in 0..f.descriptor.argument_layouts().len() {
                    let _ = d.callback(&f.name, i);
                }
            }
            for name in d.unlinkable_functions() {
                assert!(d.try_function(name).is_err());
            }
        }
        Err(e) => {
            let rendered = e.to_string();
            assert!(rendered.contains('^'), "no caret: {rendered}");
            assert!(e.span().start <= src.len() && e.span().end <= src.len());
            assert!(e.line() >= 1 && e.line() <= src.split('\n').count());
            assert!(!e.message().is_empty());
        }
    }
    if let Err(e) = Declarations::new().type_layout(src) {
        let _ = e.to_string();
        assert!(e.span().end <= src.len());
    }
}

fn bytes() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<u8>(), 0..160)
        .prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec((prop::sample::select(TOKENS), 0..3usize), 0..48).prop_map(|toks| {
        let mut s = String::new();
        for (t, sep) in toks {
            s.push_str(t);
            s.push_str([" ", "", "\n"][sep]);
        }
        s
    })
}

#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, &'static str),
    Duplicate(usize, usize),
    Replace(usize, u8),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1..8usize).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), prop::sample::select(TOKENS)).prop_map(|(a, t)| Edit::Insert(a, t)),
        (any::<usize>(), 1..24usize).prop_map(|(a, n)| Edit::Duplicate(a, n)),
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Edit::Replace(a, b)),
    ]
}

fn mutated() -> impl Strategy<Value = String> {
    (
        prop::sample::select(SEEDS),
        prop::collection::vec(edit(), 1..6),
    )
        .prop_map(|(seed, edits)| {
            let mut b = seed.as_bytes().to_vec();
            for e in edits {
                let len = b.len().max(1);
                match e {
                    Edit::Delete(a, n) => {
                        let a = a % len;
                        let end = (a + n).min(b.len());
                        if a < end {
                            b.drain(a..end);
                        }
                    }
                    Edit::Insert(a, t) => {
                        let a = a % (b.len() + 1);
                        b.splice(a..a, t.bytes());
                    }
                    Edit::Duplicate(a, n) => {
                        let a = a % len;
                        let end = (a + n).min(b.len());
                        if a < end {
                            let piece = b[a..end].to_vec();
                            b.splice(a..a, piece);
                        }
                    }
                    Edit::Replace(a, byte) => {
                        if !b.is_empty() {
                            let a = a % b.len();
                            b[a] = byte;
                        }
                    }
                }
            }
            String::from_utf8_lossy(&b).into_owned()
        })
}

fn run<S: Strategy<Value = String>>(strategy: S, cases: u32) {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    runner
        .run(&strategy, |src| {
            check(&src);
            Ok(())
        })
        .unwrap();
}

/// Cases per test: 7,000 where the suite runs natively (x86-64, and Windows under Wine), 1,000
/// under qemu (the parser is the same code on every target; the emulator runs it far slower).
const QUICK: u32 = if cfg!(target_arch = "x86_64") {
    7_000
} else {
    1_000
};
const FULL: u32 = 350_000;

#[test]
fn fuzz_random_bytes() {
    run(bytes(), QUICK);
}

#[test]
fn fuzz_token_soup() {
    run(soup(), QUICK);
}

#[test]
fn fuzz_mutated_declarations() {
    run(mutated(), QUICK);
}

/// The full campaign: 3 x 350,000 = 1,050,000 inputs.
#[test]
#[ignore = "1,050,000 inputs; run with --ignored"]
fn fuzz_million() {
    run(bytes(), FULL);
    run(soup(), FULL);
    run(mutated(), FULL);
}

#[test]
fn pathological_inputs() {
    for src in [
        "(".repeat(100_000),
        "*".repeat(100_000),
        "int x".to_string() + &"[1]".repeat(100_000),
        "struct { ".repeat(50_000),
        "int f(".repeat(50_000),
        "int a[".to_string() + &"-".repeat(100_000) + "1];",
        "int a[".to_string() + &"(".repeat(100_000),
        "enum e { A = ".to_string() + &"~".repeat(100_000) + "0 };",
        "/*".repeat(10_000),
        "\"".repeat(10_001),
        "__attribute__((".repeat(10_000),
        "#pragma pack(push, 1)\n".repeat(10_000),
        "static inline int f(void) ".to_string() + &"{".repeat(100_000),
        "int f(int a[".to_string() + &"n[".repeat(50_000),
        "int f(int a[".to_string() + &"(".repeat(50_000) + "n",
        "_Static_assert(".repeat(10_000),
        "typedef int x __attribute__((mode(".repeat(10_000),
        "__asm__(\"".to_string() + &"\" \"".repeat(10_000),
        "void f(".to_string() + &"void (*g)(".repeat(30) + &")".repeat(31) + ";",
        "enum { A = ".to_string() + &"(unsigned char)".repeat(30_000) + "-1 };",
        (1..5_000)
            .map(|i| format!("typedef t{} t{i}[1];", i - 1))
            .fold("typedef int t0;".to_string(), |a, b| a + &b),
        (1..5_000)
            .map(|i| format!("struct s{i} {{ struct s{} m; }};", i - 1))
            .fold("struct s0 { int x; };".to_string(), |a, b| a + &b),
    ] {
        check(&src);
    }
}
