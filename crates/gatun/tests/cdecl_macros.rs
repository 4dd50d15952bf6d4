//! The macros of real headers against the C compiler: for `fcntl.h`, `errno.h`, `netdb.h`,
//! `sqlite3.h`, `zlib.h` and `jansson.h`, every macro `Declarations::from_headers` evaluated as
//! a constant is compiled into a C program after the header — as a file-scope `static const`
//! initializer (so gcc must find it constant too), its C type named by `_Generic` (or, for an
//! address, `__builtin_classify_type`), its value printed exactly (integers in decimal,
//! floating values as their bits, strings as their bytes and `sizeof`) — and what the program
//! prints must equal gatun's value and kind for every one of them.
//!
//! The macro set itself is checked against `cc -E -dM`: the same names, the function-like
//! ones listed as `FunctionLike` with the same parameters, the object-like ones never. Each
//! header must give at least a minimum number of constants of its own (names not starting
//! with `__`), and names every program using it needs (`O_RDONLY`, `EINVAL`, `SQLITE_OK`, ...)
//! must be among them, so the test cannot pass by evaluating nothing. A header that is not
//! installed is skipped with a message.
#![cfg(all(target_os = "linux", not(miri)))]

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::process::{Command, Stdio};

use gatun::cdecl::{Constant, Declarations, HeaderOptions, MacroKind};
use gatun::layout::{DataModel, ScalarKind};

/// Runs the target's C compiler with `args` and `input` on its standard input.
fn cc(args: &[&str], input: &str) -> std::process::Output {
    let mut child = Command::new(gatun_test_natives::CC)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the C compiler runs");
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(input.as_bytes()).expect("write to cc");
    drop(stdin);
    child.wait_with_output().expect("cc finishes")
}

/// The macros `cc -E -dM` reports after `#include <header>`: name → parameters (`None` for
/// an object-like macro).
fn dm_macros(header: &str) -> BTreeMap<String, Option<Vec<String>>> {
    let out = cc(
        &["-E", "-dM", "-x", "c", "-"],
        &format!("#include <{header}>\n"),
    );
    assert!(out.status.success(), "cc -dM {header}");
    let mut macros = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(rest) = line.strip_prefix("#define ") else {
            continue;
        };
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let params = rest[end..].strip_prefix('(').map(|p| {
            p[..p.find(')').expect("closed parameter list")]
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| {
                    if p == "..." {
                        "__VA_ARGS__".to_string()
                    } else {
                        p.trim_end_matches("...").trim().to_string()
                    }
                })
                .collect()
        });
        macros.insert(rest[..end].to_string(), params);
    }
    macros
}

/// The C type of a constant of kind `kind` as the program's `TYPE` macro names it.
fn kind_name(c: &Constant) -> &'static str {
    c.kind().map_or("string", ScalarKind::name)
}

/// The C program that prints every constant of `consts` after `#include <header>`: one line
/// per constant, `NAME TYPE VALUE`.
fn program(header: &str, consts: &[(&str, Constant)]) -> String {
    let model = DataModel::HOST;
    let char_kind = if model.char_signed { "i8" } else { "u8" };
    let (long, ulong) = if model.long_size == 8 {
        ("i64", "u64")
    } else {
        ("i32", "u32")
    };
    let mut p = format!(
        "#include <{header}>\n#include <stdio.h>\n#include <string.h>\n#include <stdint.h>\n\
         #define GATUN_TYPE(x) _Generic((x), _Bool: \"bool\", char: \"{char_kind}\", \
         signed char: \"i8\", unsigned char: \"u8\", short: \"i16\", unsigned short: \"u16\", \
         int: \"i32\", unsigned int: \"u32\", long: \"{long}\", unsigned long: \"{ulong}\", \
         long long: \"i64\", unsigned long long: \"u64\", float: \"f32\", double: \"f64\", \
         _Float32: \"f32\", _Float64: \"f64\", _Float32x: \"f64\", char *: \"string\", \
         default: \"other\")\n"
    );
    let mut body = String::new();
    for (i, (name, c)) in consts.iter().enumerate() {
        match c {
            Constant::F32(_) | Constant::F64(_) => {
                p.push_str(&format!("static const double v{i} = (double)({name});\n"));
                body.push_str(&format!(
                    "{{ unsigned long long u; memcpy(&u, &v{i}, 8); \
                     printf(\"{name} %s %llx\\n\", GATUN_TYPE({name}), u); }}\n"
                ));
            }
            Constant::Address(_) => {
                p.push_str(&format!("static void *const v{i} = (void *)({name});\n"));
                body.push_str(&format!(
                    "printf(\"{name} %s %llu\\n\", __builtin_classify_type({name}) == 5 ? \
                     \"ptr\" : \"other\", (unsigned long long)(uintptr_t)v{i});\n"
                ));
            }
            Constant::String(_) => {
                p.push_str(&format!("static const char v{i}[] = {name};\n"));
                body.push_str(&format!(
                    "printf(\"{name} %s \", GATUN_TYPE({name})); \
                     for (size_t k = 0; k + 1 < sizeof({name}); k++) printf(\"%02x\", \
                     (unsigned char)v{i}[k]); printf(\" %zu\\n\", sizeof({name}));\n"
                ));
            }
            c if c.kind().is_some_and(|k| !k.is_signed()) => {
                p.push_str(&format!(
                    "static const unsigned long long v{i} = (unsigned long long)({name});\n"
                ));
                body.push_str(&format!(
                    "printf(\"{name} %s %llu\\n\", GATUN_TYPE({name}), v{i});\n"
                ));
            }
            _ => {
                p.push_str(&format!(
                    "static const long long v{i} = (long long)({name});\n"
                ));
                body.push_str(&format!(
                    "printf(\"{name} %s %lld\\n\", GATUN_TYPE({name}), v{i});\n"
                ));
            }
        }
    }
    p.push_str("int main(void) {\n");
    p.push_str(&body);
    p.push_str("return 0;\n}\n");
    p
}

/// The value of `c` as the program prints it.
fn printed(c: &Constant) -> String {
    match c {
        Constant::F32(v) => format!("{:x}", f64::from(*v).to_bits()),
        Constant::F64(v) => format!("{:x}", v.to_bits()),
        Constant::Address(a) => a.to_string(),
        Constant::String(s) => {
            let hex: String = s.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex} {}", s.len() + 1)
        }
        Constant::Bool(b) => i32::from(*b).to_string(),
        other => other.as_i128().map(|v| v.to_string()).unwrap_or_default(),
    }
}

/// Checks every macro of `header` (see the module docs); `min_own` is the least number of
/// constants whose names do not start with `__`, `must` names that must be constants and
/// `function_like` names that must be listed as function-like.
fn check(header: &str, min_own: usize, must: &[&str], function_like: &[&str]) {
    let probe = cc(&["-E", "-x", "c", "-"], &format!("#include <{header}>\n"));
    if !probe.status.success() {
        println!(
            "skipped: {header} is not installed for {} ({})",
            gatun_test_natives::CC,
            String::from_utf8_lossy(&probe.stderr)
                .lines()
                .next()
                .unwrap_or("")
        );
        return;
    }
    let options = HeaderOptions {
        compiler: Some(gatun_test_natives::CC.to_string()),
        ..HeaderOptions::default()
    };
    let decls = Declarations::from_headers([header], &options).expect("the header parses");

    // The macro set is cc's.
    let dm = dm_macros(header);
    let ours: BTreeSet<&str> = decls.macros().map(|(n, _)| n).collect();
    let theirs: BTreeSet<&str> = dm.keys().map(String::as_str).collect();
    assert_eq!(ours, theirs, "{header}: the macros differ from cc -dM's");
    for (name, m) in decls.macros() {
        match (&dm[name], m.kind()) {
            (Some(p), MacroKind::FunctionLike { params }) => {
                assert_eq!(params, p, "{header}: parameters of {name}")
            }
            (Some(_), other) => panic!("{header}: {name} is function-like, gatun says {other:?}"),
            (None, MacroKind::FunctionLike { .. }) => {
                panic!("{header}: {name} is object-like, gatun says function-like")
            }
            (None, _) => {}
        }
    }
    for name in function_like {
        assert!(
            matches!(
                decls.macro_definition(name).map(|m| m.kind()),
                Some(MacroKind::FunctionLike { .. })
            ),
            "{header}: {name} is not listed as function-like"
        );
    }

    let consts: Vec<(&str, Constant)> = decls
        .macros()
        .filter_map(|(n, m)| Some((n, m.constant()?.clone())))
        .collect();
    let own = consts.iter().filter(|(n, _)| !n.starts_with("__")).count();
    assert!(
        own >= min_own,
        "{header}: only {own} constants of its own, expected at least {min_own}"
    );
    for name in must {
        assert!(
            decls.constant(name).is_some(),
            "{header}: {name} is not a constant: {:?}",
            decls.macro_definition(name)
        );
    }

    // gcc's values and types.
    let dir = std::env::temp_dir().join(format!(
        "gatun-macros-{}-{}",
        std::process::id(),
        header.replace(['/', '.'], "_")
    ));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let exe = dir.join("macros");
    let exe_arg = exe.to_str().expect("UTF-8 path");
    let source = program(header, &consts);
    let compiled = cc(&["-w", "-x", "c", "-o", exe_arg, "-"], &source);
    assert!(
        compiled.status.success(),
        "{header}: the C program of its constants does not compile (a macro gatun evaluated \
         is not a constant to gcc):\n{}",
        String::from_utf8_lossy(&compiled.stderr)
            .lines()
            .take(20)
            .collect::<Vec<_>>()
            .join("\n")
    );
    let run = gatun_test_natives::target_command(&exe)
        .output()
        .expect("the program runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(run.status.success(), "{header}: the program failed");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), consts.len(), "{header}: one line per constant");
    let mut mismatches = Vec::new();
    for ((name, c), line) in consts.iter().zip(&lines) {
        let expected = format!("{name} {} {}", kind_name(c), printed(c));
        if *line != expected {
            mismatches.push(format!("  gcc: {line}\n  gatun: {expected}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{header}: {} of {} constants differ:\n{}",
        mismatches.len(),
        consts.len(),
        mismatches.join("\n")
    );
    println!(
        "{header}: {} constants ({own} of its own) agree with gcc in value and type",
        consts.len()
    );
}

#[test]
fn fcntl_h() {
    check(
        "fcntl.h",
        100,
        &[
            "O_RDONLY", "O_WRONLY", "O_CREAT", "AT_FDCWD", "S_IFREG", "F_GETFL",
        ],
        &["__INT64_C", "__GLIBC_PREREQ"],
    );
}

#[test]
fn errno_h() {
    check(
        "errno.h",
        120,
        &["EINVAL", "ENOENT", "EAGAIN", "EWOULDBLOCK"],
        &["__INT64_C"],
    );
}

#[test]
fn netdb_h() {
    check(
        "netdb.h",
        300,
        &[
            "AF_INET",
            "AF_INET6",
            "AI_CANONNAME",
            "NI_MAXHOST",
            "SOCK_STREAM",
            "IPPROTO_TCP",
        ],
        &["IN6_IS_ADDR_LOOPBACK"],
    );
}

#[test]
fn sqlite3_h() {
    check(
        "sqlite3.h",
        300,
        &[
            "SQLITE_OK",
            "SQLITE_IOERR_READ",
            "SQLITE_VERSION",
            "SQLITE_TRANSIENT",
            "SQLITE_STATIC",
        ],
        &[],
    );
}

#[test]
fn zlib_h() {
    check(
        "zlib.h",
        50,
        &[
            "Z_OK",
            "Z_BUF_ERROR",
            "Z_DEFAULT_COMPRESSION",
            "ZLIB_VERSION",
            "Z_NULL",
        ],
        &["deflateInit"],
    );
}

#[test]
fn jansson_h() {
    check(
        "jansson.h",
        30,
        &[
            "JSON_SORT_KEYS",
            "JSON_COMPACT",
            "JSON_MAX_INDENT",
            "JANSSON_VERSION",
        ],
        &["JSON_INDENT", "JSON_REAL_PRECISION"],
    );
}
