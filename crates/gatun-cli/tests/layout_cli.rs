//! End-to-end tests of `gatun layout`: the built binary on good and bad C types.

mod common;

use common::{gatun, one_line_error};

fn stdout_of(args: &[&str]) -> String {
    let out = gatun().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn struct_with_holes() {
    let out = stdout_of(&["layout", "struct S { char c; double d; int i[3]; }"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "struct S: size 32, alignment 8", "{out}");
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no {name} in\n{out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row(" c: ")[..3], ["0", "1", "1"]);
    assert_eq!(row(" d: ")[..3], ["8", "8", "8"]);
    assert_eq!(row(" i: ")[..3], ["16", "12", "4"]);
    assert!(
        out.contains("     1      7           /* hole: 7 bytes */"),
        "{out}"
    );
    assert!(
        out.contains("    28      4           /* trailing padding: 4 bytes */"),
        "{out}"
    );
    assert!(out.contains("padding: 11 bytes in 2 holes"), "{out}");
    if cfg!(all(target_arch = "x86_64", not(windows))) {
        assert!(
            out.contains("SysV x86-64: MEMORY (larger than 16 bytes"),
            "{out}"
        );
    }
    if cfg!(target_arch = "aarch64") {
        // 32 bytes, not an HFA (a char, a double, ints): by reference (AAPCS64 B.3).
        assert!(out.contains("AAPCS64: INDIRECT (over 16 bytes"), "{out}");
    }
    if cfg!(all(target_arch = "x86_64", windows)) {
        assert!(out.contains("Win64: BY REFERENCE (32 bytes"), "{out}");
    }
    if cfg!(target_arch = "riscv64") {
        // Over 2×XLEN: by reference to a caller copy (LP64D).
        assert!(out.contains("LP64D: INDIRECT (over 16 bytes"), "{out}");
    }
    if cfg!(target_arch = "s390x") {
        // Not 1, 2, 4 or 8 bytes: by reference.
        assert!(out.contains("s390x: INDIRECT (32 bytes"), "{out}");
    }
    if cfg!(all(target_arch = "powerpc64", target_endian = "little")) {
        // ELFv2 passes it by value in four doublewords.
        assert!(
            out.contains("ELFv2: AGGREGATE of 32 bytes (4 doublewords"),
            "{out}"
        );
    }
}

#[test]
fn eightbyte_classification() {
    let out = stdout_of(&["layout", "struct m { double x; long n; }"]);
    assert!(out.starts_with("struct m: size 16, alignment 8"), "{out}");
    if cfg!(all(target_arch = "x86_64", not(windows))) {
        assert!(out.contains("eightbyte 0 (bytes 0..=7): SSE"), "{out}");
        assert!(out.contains("eightbyte 1 (bytes 8..=15): INTEGER"), "{out}");
    }
    let out = stdout_of(&[
        "layout",
        "struct __attribute__((packed)) p { char c; int x; }",
    ]);
    assert!(out.starts_with("struct p: size 5, alignment 1"), "{out}");
    if cfg!(all(target_arch = "x86_64", not(windows))) {
        assert!(out.contains("MEMORY (a misaligned field"), "{out}");
    }
}

#[test]
fn scalars_typedefs_and_preceding_declarations() {
    assert!(stdout_of(&["layout", "size_t"]).starts_with("u64: size 8, alignment 8"));
    assert!(stdout_of(&["layout", "int[3]"]).starts_with("[3:i32]: size 12, alignment 4"));
    let out = stdout_of(&[
        "layout",
        "struct A { int x; }; struct B { struct A a; char c; }",
    ]);
    assert!(out.starts_with("struct B: size 8, alignment 4"), "{out}");
    assert!(out.contains("a: struct"), "{out}");
    assert!(out.contains("x: i32"), "{out}");
    let out = stdout_of(&["layout", "typedef struct { float x, y; } vec2;"]);
    assert!(out.starts_with("struct vec2: size 8, alignment 4"), "{out}");
    if cfg!(target_arch = "riscv64") {
        assert!(
            out.contains("LP64D: FLOATS (f32 at byte 0 and f32 at byte 4"),
            "{out}"
        );
    }
    if cfg!(target_arch = "s390x") {
        // Two floats are not one float-like member: their 8-byte image in a GPR.
        assert!(out.contains("s390x: SMALL of 8 bytes"), "{out}");
        let out = stdout_of(&["layout", "struct f { struct { float x; } in; }"]);
        assert!(out.contains("s390x: FLOAT_STRUCT of 4 bytes"), "{out}");
        let out = stdout_of(&["layout", "struct t { char c[3]; }"]);
        assert!(out.contains("s390x: INDIRECT (3 bytes"), "{out}");
    }
    if cfg!(all(target_arch = "powerpc64", target_endian = "little")) {
        assert!(out.contains("ELFv2: HFA of 2 float"), "{out}");
    }
    if cfg!(all(target_arch = "x86_64", windows)) {
        assert!(out.contains("Win64: INTEGER (8 bytes"), "{out}");
        let out = stdout_of(&["layout", "struct t { char c[3]; }"]);
        assert!(out.contains("Win64: BY REFERENCE (3 bytes"), "{out}");
        let out = stdout_of(&["layout", "double"]);
        assert!(out.contains("Win64: FLOAT"), "{out}");
    }
}

#[test]
fn json_output() {
    let out = stdout_of(&["layout", "--json", "struct v { float x; char c; }"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["type"], "struct v");
    assert_eq!(v["size"], 8);
    assert_eq!(v["alignment"], 4);
    assert_eq!(v["fields"][1]["name"], "c");
    assert_eq!(v["fields"][1]["offset"], 4);
    assert_eq!(v["holes"][0], serde_json::json!({ "offset": 5, "size": 3 }));
    if cfg!(all(target_arch = "x86_64", not(windows))) {
        assert_eq!(v["sysv_x86_64"]["class"], "REGISTERS");
        assert_eq!(
            v["sysv_x86_64"]["eightbytes"],
            serde_json::json!(["INTEGER"])
        );
    }
    if cfg!(all(target_arch = "x86_64", windows)) {
        // 8 bytes: an integer in a GPR although its first field is a float.
        assert_eq!(
            v["win64"],
            serde_json::json!({ "class": "INTEGER", "bytes": 8 })
        );
    }
    if cfg!(target_arch = "s390x") {
        assert_eq!(
            v["s390x"],
            serde_json::json!({ "class": "SMALL", "size": 8 })
        );
    }
    if cfg!(all(target_arch = "powerpc64", target_endian = "little")) {
        assert_eq!(
            v["elfv2"],
            serde_json::json!({ "class": "AGGREGATE", "align16": false })
        );
    }
    if cfg!(target_arch = "riscv64") {
        // A float and a char: FLOAT_INT (one fa and one a register).
        assert_eq!(v["lp64d"], serde_json::json!({ "class": "FLOAT_INT" }));
    }
    if cfg!(target_arch = "aarch64") {
        // 8 bytes, not an HFA (the char): one x register (B.4, C.10).
        assert_eq!(
            v["aapcs64"],
            serde_json::json!({ "class": "COMPOSITE", "units": 1, "align16": false })
        );
    }
}

#[test]
fn aapcs64_classes_of_hfas_on_aarch64() {
    if !cfg!(target_arch = "aarch64") {
        return;
    }
    let out = stdout_of(&["layout", "struct p { double x, y, z; }"]);
    assert!(out.contains("AAPCS64: HFA of 3 double"), "{out}");
    let out = stdout_of(&[
        "layout",
        "--json",
        "struct q { float v[2]; struct { float w; } s; }",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["aapcs64"],
        serde_json::json!({ "class": "HFA", "member": "float", "count": 3 })
    );
}

#[test]
fn unknown_type_is_one_line_and_status_2() {
    let err = one_line_error(&["layout", "struct S { foo x; }"]);
    assert_eq!(err, "gatun: 1:12: error: unknown type name `foo`\n");
}

#[test]
fn unterminated_struct_is_one_line_and_status_2() {
    let err = one_line_error(&["layout", "struct S { char c; double d;"]);
    assert!(
        err.contains("1:10: error: unterminated `struct` body"),
        "{err}"
    );
}

#[test]
fn other_bad_types() {
    for (decl, part) in [
        ("", "end of input"),
        ("long double", "long double"),
        ("struct b { int f : 33; }", "33 bits wide"),
        ("void", "no layout"),
        ("int f(void);", "declaration of `f`"),
        ("struct S { char c; } x y", "expected"),
    ] {
        let err = one_line_error(&["layout", decl]);
        assert!(err.contains(part), "{decl:?}: {err}");
    }
}

/// Runs `gatun args…` with a 10 s watchdog (the cases below take milliseconds; before the
/// hardening they never returned).
fn prompt_output(args: &[&str]) -> std::process::Output {
    gatun()
        .args(args)
        .timeout(std::time::Duration::from_secs(10))
        .output()
        .unwrap_or_else(|e| panic!("{args:?} did not return promptly: {e}"))
}

const ZERO_SIZE_ELEMENTS: &str =
    "struct e {}; struct s { int x; struct e z[4611686018427387904]; };";

#[test]
fn zero_size_elements_with_a_huge_count() {
    let decl = format!("{ZERO_SIZE_ELEMENTS} struct s");
    let out = prompt_output(&["layout", &decl]);
    assert!(out.status.success());
    let out = String::from_utf8(out.stdout).unwrap();
    assert!(out.starts_with("struct s: size 4, alignment 4"), "{out}");
    assert!(out.contains("z: [4611686018427387904:struct]"), "{out}");
    if cfg!(all(target_arch = "x86_64", not(windows))) {
        assert!(out.contains("eightbyte 0 (bytes 0..=3): INTEGER"), "{out}");
    }
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn zero_size_elements_with_a_huge_count_as_call_argument_and_result() {
    // `abs` reads the struct's int from edi; `labs` returns a long whose low half is `x`.
    let decl = format!("{ZERO_SIZE_ELEMENTS} int abs(struct s)");
    let out = prompt_output(&["call", &decl, "{-5}"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "5\n");
    let decl = format!("{ZERO_SIZE_ELEMENTS} struct s labs(long)");
    let out = prompt_output(&["call", &decl, "-5"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "{x = 5, z = {}}\n");
}

fn shared_unions(levels: usize) -> String {
    let mut src = String::from("union U0 { int a; int b; };");
    for i in 1..=levels {
        src.push_str(&format!(
            " union U{i} {{ union U{} a; union U{} b; }};",
            i - 1,
            i - 1
        ));
    }
    format!("{src} union U{levels}")
}

#[test]
fn a_forty_level_shared_union_is_listed_up_to_a_bound() {
    let decl = shared_unions(40);
    let out = prompt_output(&["layout", &decl]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("union U40: size 4, alignment 4"), "{text}");
    let fields = text
        .lines()
        .filter(|l| l.contains(": union") || l.contains(": i32"))
        .count();
    assert_eq!(fields, 2000);
    assert!(text.contains("more field not shown (at most 2000 are listed)"));
    assert!(text.contains("padding: 0 bytes in 0 holes among the fields shown"));
    if cfg!(all(target_arch = "x86_64", not(windows))) {
        assert!(
            text.contains("eightbyte 0 (bytes 0..=3): INTEGER"),
            "{text}"
        );
    }
    let out = prompt_output(&["layout", "--json", &decl]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["size"], 4);
    assert_eq!(v["fields"][0]["name"], "a");
    // A small union is listed whole.
    let out = prompt_output(&["layout", &shared_unions(3)]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("not shown"), "{text}");
    assert!(text.contains("padding: 0 bytes in 0 holes\n"), "{text}");
}

#[test]
fn nesting_deeper_than_the_bound_is_one_line_error() {
    let decl = format!("int{}", "[1]".repeat(64));
    let err = one_line_error(&["layout", &decl]);
    assert!(err.contains("nested more than 64 levels"), "{err}");
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn huge_by_value_struct_arguments_are_rejected_before_any_allocation() {
    for (count, bytes) in [
        (1usize << 24, 1usize << 27),
        (1 << 58, 1 << 61),
        (1 << 59, 1 << 62),
    ] {
        let decl = format!("struct big {{ long a[{count}]; }}; int abs(struct big)");
        let err = one_line_error(&["call", &decl, "{1}"]);
        assert!(
            err.contains(&format!(
                "the call needs {bytes} bytes of stack arguments; gatun's executor supports at most 1048576"
            )),
            "{err}"
        );
    }
}

#[test]
// glibc's x86-64 `struct stat`, through the system C preprocessor.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn types_from_headers() {
    let out = gatun()
        .args(["layout", "-i", "sys/stat.h", "struct stat"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // glibc's `struct stat`: 144 bytes on x86-64, 128 on AArch64 (the generic layout).
    let size = if cfg!(all(target_arch = "x86_64", not(windows))) {
        144
    } else {
        128
    };
    assert!(
        text.starts_with(&format!("struct stat: size {size}, alignment 8\n")),
        "{text}"
    );
    assert!(text.contains("st_mode: u32"), "{text}");
}

/// Where the C compiler puts each bit-field of `struct TAG` (defined by `src`): `(name, bit
/// offset from the record's start, width)`, found by setting the field to all ones in a
/// zeroed record and reading which bits changed, numbered in the target's bit order (from each
/// byte's least significant bit on a little-endian target, its most significant on a
/// big-endian one, as `gatun layout` numbers them). The program is built with the target's
/// compiler and run through the target's runner under emulation.
#[cfg(target_os = "linux")]
fn c_bit_fields(src: &str, tag: &str, fields: &[&str]) -> Vec<(String, usize, usize)> {
    let mut prog = format!(
        "#include <stdio.h>\n#include <string.h>\n{src};\n\
         #if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__\n#define BIT(i) (7 - (i) % 8)\n\
         #else\n#define BIT(i) ((i) % 8)\n#endif\n\
         int main(void) {{ struct {tag} s;\n"
    );
    for f in fields {
        prog.push_str(&format!(
            "memset(&s, 0, sizeof s); s.{f} = -1; {{ unsigned char *p = (unsigned char *)&s; \
             int first = -1, n = 0; for (unsigned i = 0; i < sizeof s * 8; i++) \
             if (p[i / 8] >> BIT(i) & 1) {{ if (first < 0) first = i; n++; }} \
             printf(\"{f} %d %d\\n\", first, n); }}\n"
        ));
    }
    prog.push_str("return 0; }\n");
    let dir = std::env::temp_dir().join(format!("gatun-layout-bits-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join("bits.c");
    let exe = dir.join("bits");
    std::fs::write(&c, prog).unwrap();
    let built = std::process::Command::new(gatun_test_natives::CC)
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(built.success());
    let out = gatun_test_natives::target_command(&exe).output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let found: Vec<(String, usize, usize)> = text
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (
                w[0].to_string(),
                w[1].parse().unwrap(),
                w[2].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(found.len(), fields.len(), "{text}");
    found
}

#[test]
fn bit_fields_are_listed_by_name_and_count_as_used() {
    let b = "struct B { int a:3; int b:5; signed char c; }";
    let out = stdout_of(&["layout", b]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "struct B: size 4, alignment 4", "{out}");
    assert_eq!(
        lines[2..6],
        [
            "     0                  a: i32:3 (bit offset 0, width 3)",
            "     0                  b: i32:5 (bit offset 3, width 5)",
            "     1      1      1    c: i8",
            "     2      2           /* trailing padding: 2 bytes */",
        ],
        "{out}"
    );
    // a and b fill byte 0: the only padding is the 2 bytes after c, as pahole counts it.
    assert_eq!(lines[6], "padding: 2 bytes in 1 hole", "{out}");
    let v: serde_json::Value = serde_json::from_str(&stdout_of(&["layout", "--json", b])).unwrap();
    assert_eq!(
        v["fields"][1],
        serde_json::json!({ "name": "b", "type": "i32:5", "offset": 0, "bit_offset": 3, "bit_width": 5 })
    );
    assert_eq!(v["holes"], serde_json::json!([{ "offset": 2, "size": 2 }]));

    // Bits no bit-field uses are a bit hole; an untagged record is found too. Every position
    // is the C compiler's.
    let h = "struct H { char x; int a:3; long long y:20; short z:9; unsigned char w; }";
    let out = stdout_of(&["layout", "--json", h]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["fields"].as_array().map(Vec::len), Some(5), "{out}");
    #[cfg(target_os = "linux")]
    for (name, bit, width) in c_bit_fields(h, "H", &["a", "y", "z"]) {
        let f = v["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name.as_str())
            .unwrap_or_else(|| panic!("no {name} in {out}"));
        let at = f["offset"].as_u64().unwrap() * 8 + f["bit_offset"].as_u64().unwrap();
        assert_eq!(
            (at as usize, f["bit_width"].as_u64().unwrap() as usize),
            (bit, width),
            "{name}: {out}"
        );
    }
    let text = stdout_of(&["layout", h]);
    assert!(text.contains("/* bit hole: "), "{text}");
    assert!(text.contains(" unused bit"), "{text}");
    let anonymous = stdout_of(&[
        "layout",
        "struct { unsigned ready:1; unsigned level:4; short n; }",
    ]);
    assert!(
        anonymous.contains("level: u32:4 (bit offset 1, width 4)"),
        "{anonymous}"
    );
    assert!(
        anonymous.contains("/* bit hole: 3 bits at bit offset 5 */"),
        "{anonymous}"
    );
}

#[test]
fn undeclared_and_undefined_types_are_told_apart() {
    let e = one_line_error(&["layout", "struct tm"]);
    assert_eq!(
        e,
        "gatun: 1:1: error: `struct tm` is not declared, so it has no layout (add -i time.h)\n"
    );
    let e = one_line_error(&["layout", "struct mine"]);
    assert!(e.contains("`struct mine` is not declared"), "{e}");
    assert!(e.contains("add -i with the header that defines it"), "{e}");
    // A real forward declaration keeps its message.
    let e = one_line_error(&["layout", "struct fwd; struct fwd"]);
    assert!(
        e.contains("`struct fwd` is incomplete (declared but never defined)"),
        "{e}"
    );
    let e = one_line_error(&["layout", "z_stream"]);
    assert!(
        e.contains("unknown type name `z_stream` (add -i zlib.h)"),
        "{e}"
    );
}

#[test]
// glibc's headers, through the system C preprocessor with the preprocessor's options.
#[cfg(target_os = "linux")]
fn preprocessor_options_apply_to_layout_headers() {
    let dir = std::env::temp_dir().join(format!("gatun-layout-headers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("gatun_layout_test.h"),
        "struct sized { char c[SIZE]; };\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let out = stdout_of(&[
        "layout",
        "-I",
        d,
        "-D",
        "SIZE=12",
        "-i",
        "gatun_layout_test.h",
        "struct sized",
    ]);
    assert!(
        out.starts_with("struct sized: size 12, alignment 1"),
        "{out}"
    );
    let first = dir.join("first.h");
    std::fs::write(&first, "#define SIZE 5\n").unwrap();
    let out = stdout_of(&[
        "layout",
        "-include",
        first.to_str().unwrap(),
        "-I",
        d,
        "-i",
        "gatun_layout_test.h",
        "struct sized",
    ]);
    assert!(
        out.starts_with("struct sized: size 5, alignment 1"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
