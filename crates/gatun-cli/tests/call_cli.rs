//! End-to-end tests of `gatun call`: the built binary calling real libc, libm and libz
//! functions, and rejecting bad input with exit status 2 and one line on stderr. Compiled for
//! the Linux targets where gatun executes calls: x86-64, AArch64, RISC-V 64, s390x and PPC64LE
//! (the cross targets under qemu-user, whose sysroots may lack libz: its cases say so and skip).
#![cfg(all(
    target_os = "linux",
    not(miri),
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "s390x",
        all(target_arch = "powerpc64", target_endian = "little")
    )
))]

mod common;

use common::{gatun, one_line_error};

fn call(args: &[&str]) -> String {
    let out = gatun().arg("call").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    String::from_utf8(out.stdout).unwrap()
}

/// Whether `libz.so.1` loads for this target. The sysroots the RISC-V 64, s390x and PPC64LE
/// tests run in under qemu-user hold only the C library, so there the cases calling libz say so
/// and skip; on x86-64 and AArch64 (CI installs zlib for both) its absence fails the test.
fn have_libz() -> bool {
    let loads = gatun()
        .args(["call", "-l", "libz.so.1", "const char *zlibVersion(void)"])
        .output()
        .unwrap()
        .status
        .success();
    assert!(
        loads || !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")),
        "libz.so.1 does not load: install zlib"
    );
    if !loads {
        eprintln!("libz.so.1 is not installed for this target: its calls are skipped");
    }
    loads
}

fn call_fails(args: &[&str]) -> String {
    let mut all = vec!["call"];
    all.extend_from_slice(args);
    one_line_error(&all)
}

#[test]
fn libc_libm_libz() {
    assert_eq!(call(&["size_t strlen(const char*)", "hello"]), "5\n");
    assert_eq!(
        call(&["-l", "libm.so.6", "double pow(double, double)", "2", "10"]),
        "1024\n"
    );
    assert_eq!(call(&["int abs(int)", "-42"]), "42\n");
    if !have_libz() {
        return;
    }
    // crc32("hello") = 0x3610a686
    assert_eq!(
        call(&[
            "-l",
            "libz.so.1",
            "unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned int len)",
            "0",
            "hello",
            "5"
        ]),
        "907060870\n"
    );
}

#[test]
fn errno_capture() {
    assert_eq!(
        call(&["--errno", "int open(const char*, int)", "/nonexistent", "0"]),
        "-1 (errno 2: No such file or directory)\n"
    );
    // open is variadic in libc's own declaration; the fixed part is two arguments.
    assert_eq!(
        call(&[
            "--errno",
            "int open(const char *path, int flags, ...);",
            "/nonexistent",
            "0"
        ]),
        "-1 (errno 2: No such file or directory)\n"
    );
}

#[test]
fn variadic_buffers_and_strings() {
    assert_eq!(
        call(&[
            "int snprintf(char *buf, size_t n, const char *fmt, ...)",
            "[32]",
            "32",
            "%d|%s|%.2f|%ld",
            "42",
            "hi",
            "1.5",
            "-5000000000"
        ]),
        "22\nargument 1: \"42|hi|1.50|-5000000000\"\n"
    );
    let out = gatun()
        .env("GATUN_CLI_TEST", "from the environment")
        .args(["call", "char *getenv(const char *name)", "GATUN_CLI_TEST"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "from the environment\n"
    );
    assert_eq!(
        call(&["char *getenv(const char *)", "GATUN_SURELY_UNSET_VARIABLE"]),
        "NULL\n"
    );
}

/// The literal `{s_addr}` of a `struct in_addr` holding 127.0.0.1: its bytes 127, 0, 0, 1 in
/// memory (network order), read as a `uint32_t` in the target's byte order.
fn localhost() -> String {
    format!("{{{:#010x}}}", u32::from_ne_bytes([127, 0, 0, 1]))
}

#[test]
fn struct_arguments_and_returns() {
    let div = "typedef struct { int quot; int rem; } div_t; div_t div(int, int)";
    assert_eq!(call(&[div, "17", "5"]), "{quot = 3, rem = 2}\n");
    let out = call(&["--json", div, "17", "5"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["function"], "div");
    assert_eq!(v["result"], serde_json::json!({ "quot": 3, "rem": 2 }));
    // Members in declaration order in the JSON text too.
    assert!(out.contains(r#""result":{"quot":3,"rem":2}"#), "{out}");
    // A struct argument by value: inet_ntoa(struct in_addr) with 127.0.0.1 (network order).
    assert_eq!(
        call(&[
            "struct in_addr { uint32_t s_addr; }; char *inet_ntoa(struct in_addr in)",
            &localhost()
        ]),
        "127.0.0.1\n"
    );
}

#[test]
fn huge_array_results_print_a_bounded_line() {
    // A 16 MiB struct return (MEMORY class: getpid ignores the hidden pointer, so the buffer
    // is what gatun allocated): 1,000 elements printed, the rest counted.
    let decl = "struct big { char a[1 << 24]; }; struct big getpid(void)";
    let out = call(&[decl]);
    assert!(out.len() < 10_000, "{} bytes of output", out.len());
    assert!(
        out.ends_with(&format!(", … ({} more)}}}}\n", (1 << 24) - 1000)),
        "{}",
        &out[out.len().saturating_sub(80)..]
    );
    assert_eq!(out.matches(", ").count(), 1000);
    let v: serde_json::Value = serde_json::from_str(&call(&["--json", decl])).unwrap();
    let a = v["result"]["a"].as_array().unwrap();
    assert_eq!(a.len(), 1001);
    assert_eq!(a[1000], format!("… ({} more)", (1 << 24) - 1000));
}

#[test]
fn json_output() {
    let out = call(&[
        "--json",
        "--errno",
        "int open(const char*, int)",
        "/nonexistent",
        "0",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["result"], -1);
    assert_eq!(v["errno"], 2);
    assert_eq!(v["errno_message"], "No such file or directory");
    assert_eq!(v["descriptor"], "(ptr, i32)i32");
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let e = call_fails(&["size_t strlen(const chr *)", "x"]);
    assert!(e.contains("unknown type name `chr`"), "{e}");
    let e = call_fails(&["int gatun_no_such_function(int)", "1"]);
    assert!(
        e.contains("symbol `gatun_no_such_function` not found"),
        "{e}"
    );
    let e = call_fails(&["struct p { int x; ", "1"]);
    assert!(e.contains("never closed"), "{e}");
    let e = call_fails(&["size_t strlen(const char *)", "a", "b"]);
    assert!(
        e.contains("wrong argument count: `strlen` takes 1 argument, 2 given"),
        "{e}"
    );
    let e = call_fails(&["int abs(int)", "twelve"]);
    assert!(e.contains("non-numeric argument"), "{e}");
    let e = call_fails(&["int abs(int)", "99999999999"]);
    assert!(e.contains("out of range"), "{e}");
    let e = call_fails(&["-l", "libgatun_does_not_exist.so.7", "int abs(int)", "1"]);
    assert!(
        e.contains("cannot load library libgatun_does_not_exist.so.7"),
        "{e}"
    );
    let e = call_fails(&["-l", "/nonexistent/libx.so", "int abs(int)", "1"]);
    assert!(e.contains("cannot load library"), "{e}");
    let e = call_fails(&["struct s { int a; }", "1"]);
    assert!(e.contains("declares no function"), "{e}");
    let e = call_fails(&[
        "typedef struct { int quot; int rem; } div_t; div_t div(int, int)",
        "1",
        "x",
    ]);
    assert!(e.contains("non-numeric"), "{e}");
    let e = call_fails(&[
        "struct in_addr { uint32_t s_addr; }; char *inet_ntoa(struct in_addr in)",
        "{1, 2}",
    ]);
    assert!(
        e.contains("too many values in the literal: 2 given, the struct takes 1"),
        "{e}"
    );
    let e = call_fails(&["long double fabsl(long double)", "1"]);
    assert!(e.contains("long double"), "{e}");
}

#[test]
fn unclosed_prototype_reports_end_of_input_where_the_user_stopped() {
    // The tool appends the optional `;`; the error must not point at it.
    let decl = "size_t strlen(const char*";
    let e = call_fails(&[decl, "hello"]);
    assert!(e.contains("found end of input"), "{e}");
    assert!(!e.contains("found `;`"), "{e}");
    assert!(
        e.contains(&format!("1:{}:", decl.len() + 1)),
        "column right after the input: {e}"
    );
}

#[test]
fn options_after_the_declaration_and_arguments() {
    let out = call(&["size_t strlen(const char*)", "hello", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["result"], 5);
    assert_eq!(
        call(&["int open(const char*, int)", "/nonexistent", "--errno", "0"]),
        "-1 (errno 2: No such file or directory)\n"
    );
    assert_eq!(
        call(&["double pow(double, double)", "2", "10", "-l", "libm.so.6"]),
        "1024\n"
    );
    assert_eq!(
        call(&["double pow(double, double)", "--lib=libm.so.6", "2", "10"]),
        "1024\n"
    );
    // Negative numbers stay arguments; after `--` everything is an argument.
    assert_eq!(call(&["int abs(int)", "-5", "--json"]).trim(), {
        r#"{"descriptor":"(i32)i32","function":"abs","result":5}"#
    });
    assert_eq!(
        call(&["double fabs(double)", "-1.5"]),
        "1.5\n",
        "negative floats are arguments"
    );
    assert_eq!(call(&["size_t strlen(const char*)", "--", "--json"]), "6\n");
    assert_eq!(call(&["--", "size_t strlen(const char*)", "-lx"]), "3\n");
    // Hex integers for floating-point parameters.
    assert_eq!(call(&["double fabs(double)", "0x10"]), "16\n");
}

#[test]
fn two_functions_in_one_declaration_is_an_error_naming_both() {
    let e = call_fails(&["int abs(int); int labs(long);", "-5"]);
    assert!(e.contains("declares 2 functions"), "{e}");
    assert!(e.contains("`abs`") && e.contains("`labs`"), "{e}");
}

#[test]
fn c_stdout_is_flushed_before_the_result() {
    // stdout is a pipe here, so C's stdout is fully buffered: without the flush, "hi 5" would
    // come out at exit, after the result.
    assert_eq!(
        call(&["int printf(const char*, ...)", "hi %d\n", "5"]),
        "hi 5\n5\n"
    );
    assert_eq!(
        call(&["--json", "int puts(const char*)", "first"]),
        "first\n{\"descriptor\":\"(ptr)i32\",\"function\":\"puts\",\"result\":6}\n"
    );
}

#[test]
fn library_load_error_names_the_path_once() {
    let e = call_fails(&["-l", "/nonexistent/libx.so", "int abs(int)", "1"]);
    assert_eq!(e.matches("/nonexistent/libx.so").count(), 1, "{e}");
}

#[test]
fn out_parameters_are_shown_by_type() {
    assert_eq!(
        call(&[
            "int sscanf(const char *, const char *, ...)",
            "42 1.5 word",
            "%d %lf %3s",
            "&int",
            "&double",
            "&char[4]",
        ]),
        "3\nargument 3: 42\nargument 4: 1.5\nargument 5: \"wor\"\n"
    );
    assert_eq!(
        call(&[
            "-l",
            "libm.so.6",
            "double frexp(double, int *)",
            "48",
            "&int"
        ]),
        "0.75\nargument 2: 6\n"
    );
    // An out-parameter is allocated and zeroed before the call: at most 2^30 bytes, as a
    // `[N]` buffer.
    let e = call_fails(&["size_t strlen(const char *)", "&char[8589934592]"]);
    assert!(
        e.contains("argument 1: `&char[8589934592]` is 8589934592 bytes; an out-parameter may be at most 2^30 bytes"),
        "{e}"
    );
    // A `char *` out-parameter prints as the string it points to.
    assert_eq!(
        call(&["double strtod(const char *, char **)", "2.5rest", "&char *"]),
        "2.5\nargument 2: \"rest\"\n"
    );
    // `&TYPE=VALUE` initializes; a struct out-parameter prints as a brace literal.
    assert_eq!(
        call(&[
            "void *memcpy(void *, const void *, size_t)",
            "&struct { int a; int b; }",
            "&struct { int a; int b; }={7, -8}",
            "8",
        ])
        .lines()
        .skip(1)
        .collect::<Vec<_>>(),
        ["argument 1: {a = 7, b = -8}", "argument 2: {a = 7, b = -8}"]
    );
    let out = call(&[
        "--json",
        "-l",
        "libm.so.6",
        "double modf(double, double *)",
        "2.25",
        "&double",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["result"], 0.25);
    // 2.0 is written `2`, in JSON as in text (one float rule for both).
    assert!(out.contains(r#""value":2}"#), "{out}");
    assert_eq!(v["out"][0]["value"].as_f64(), Some(2.0));
    assert_eq!(v["out"][0]["type"], "double");
    // Any pointer to a character type, also through a typedef of `char`; other pointers
    // print as addresses.
    let strtod = "typedef char gchar; double strtod(const char *, gchar **)";
    for ty in ["&gchar *", "&const char*", "&unsigned char *"] {
        assert_eq!(
            call(&[strtod, "2.5rest", ty]),
            "2.5\nargument 2: \"rest\"\n",
            "{ty}"
        );
    }
    let out = call(&[strtod, "2.5rest", "&void *"]);
    assert!(out.starts_with("2.5\nargument 2: 0x"), "{out}");
    // Text after `&` that is not a type is an error (see
    // `unresolved_literals_are_errors_and_nothing_is_called`); after `--` it is a string.
    assert_eq!(
        call(&["size_t strlen(const char *)", "--", "&notatype"]),
        "9\n"
    );
}

#[test]
fn buffers_that_are_not_text_print_as_hex() {
    assert_eq!(
        call(&[
            "void *memcpy(void *, const void *, size_t)",
            "[4]",
            "&int=0x01020304",
            "4"
        ])
        .lines()
        .skip(1)
        .collect::<Vec<_>>(),
        [
            // The int's bytes in memory: in the target's byte order.
            if cfg!(target_endian = "little") {
                "argument 1: [04 03 02 01]"
            } else {
                "argument 1: [01 02 03 04]"
            },
            "argument 2: 16909060"
        ]
    );
    assert_eq!(
        call(&[
            "--hex",
            "int snprintf(char *, size_t, const char *, ...)",
            "[4]",
            "4",
            "hi"
        ]),
        "2\nargument 1: [68 69 00 00]\n"
    );
    let out = call(&[
        "--json",
        "void *memset(void *, int, size_t)",
        "[3]",
        "255",
        "3",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["buffers"],
        serde_json::json!([{ "argument": 1, "hex": "ff ff ff" }])
    );
}

#[test]
fn unknown_options_after_the_declaration_are_errors() {
    let e = call_fails(&["int abs(int)", "--bogus"]);
    assert!(e.contains("unknown option '--bogus'"), "{e}");
    assert!(e.contains("after `--`"), "{e}");
    let e = call_fails(&["int abs(int)", "5", "-x"]);
    assert!(e.contains("'-x'"), "{e}");
    let e = call_fails(&["--bogus", "int abs(int)", "5"]);
    assert!(e.contains("'--bogus'"), "{e}");
    // After `--` it is an argument (here a string).
    assert_eq!(
        call(&["size_t strlen(const char*)", "--", "--bogus"]),
        "7\n"
    );
    // Negative numbers, infinities included, are arguments.
    assert_eq!(
        call(&["-l", "libm.so.6", "double fabs(double)", "-inf"]),
        "inf\n"
    );
}

#[test]
fn struct_literals_may_leave_out_inner_braces() {
    // `struct w` wraps an in_addr: `{0x0100007f}` (on a little-endian target) initializes
    // w.a.s_addr by brace elision.
    let decl = "struct in_addr { uint32_t s_addr; }; struct w { struct in_addr a; }; \
                char *inet_ntoa(struct w)";
    let addr = localhost();
    assert_eq!(call(&[decl, &addr]), "127.0.0.1\n");
    assert_eq!(call(&[decl, &format!("{{{{{addr}}}}}")]), "127.0.0.1\n");
}

#[test]
fn floats_are_shortest_and_json_spells_nan_and_infinities() {
    assert_eq!(
        call(&["-l", "libm.so.6", "double pow(double, double)", "10", "300"]),
        "1e300\n"
    );
    assert_eq!(call(&["double atof(const char *)", "0.1"]), "0.1\n");
    assert_eq!(
        call(&["float strtof(const char *, char **)", "0.1", "NULL"]),
        "0.1\n"
    );
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["--json", "-l", "libm.so.6"];
        all.extend_from_slice(args);
        serde_json::from_str(&call(&all)).unwrap()
    };
    assert_eq!(json(&["double log(double)", "0"])["result"], "-inf");
    assert_eq!(json(&["double exp(double)", "1000"])["result"], "inf");
    assert_eq!(json(&["double nan(const char *)", ""])["result"], "NaN");
    assert_eq!(
        json(&["float strtof(const char *, char **)", "0.1", "NULL"])["result"],
        serde_json::json!(0.1)
    );
}

#[test]
fn headers_declare_what_is_called() {
    if have_libz() {
        headers_declare_libz_functions();
    }
    // Header types for out-parameters: stat(2) fills a `struct stat`.
    let out = call(&["--json", "-i", "sys/stat.h", "stat", "/", "&struct stat"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["result"], 0);
    assert_eq!(v["out"][0]["type"], "struct stat");
    // Members by name (their order differs between targets).
    let mode = v["out"][0]["value"]["st_mode"].as_u64().unwrap();
    assert_eq!(mode & 0o170000, 0o040000, "/ is a directory");
    assert!(v["out"][0]["value"]["st_mtim"]["tv_sec"].as_i64().unwrap() > 0);
    // Errors: one line each.
    let e = call_fails(&["-i", "zlib.h", "gatun_not_in_zlib", "1"]);
    assert!(e.contains("`gatun_not_in_zlib`"), "{e}");
    let e = call_fails(&["-i", "gatun_no_such_header.h", "f", "1"]);
    assert!(e.contains("gatun_no_such_header.h: No such file"), "{e}");
    let e = call_fails(&["crc32", "0"]);
    assert!(e.contains("is only a name"), "{e}");
}

/// `headers_declare_what_is_called`'s calls into libz.
fn headers_declare_libz_functions() {
    // With -i the declaration may be just the function's name.
    assert_eq!(
        call(&[
            "-l",
            "libz.so.1",
            "-i",
            "zlib.h",
            "crc32",
            "0",
            "hello",
            "5"
        ]),
        "907060870\n"
    );
    // Options after the name, and a prototype that uses the header's types.
    assert_eq!(
        call(&[
            "crc32",
            "0",
            "hello",
            "5",
            "--include=zlib.h",
            "-llibz.so.1"
        ]),
        "907060870\n"
    );
    assert_eq!(
        call(&[
            "-i",
            "zlib.h",
            "-l",
            "libz.so.1",
            "uLong adler32(uLong adler, const Bytef *buf, uInt len)",
            "1",
            "hello",
            "5"
        ]),
        "103547413\n"
    );
}

#[test]
fn header_functions_returning_char_pointers_print_strings() {
    assert_eq!(
        call(&["-i", "string.h", "strerror", "2"]),
        "No such file or directory\n"
    );
    let out = gatun()
        .args([
            "call",
            "-i",
            "stdlib.h",
            "getenv",
            "GATUN_CLI_HEADER_TEST",
            "--json",
        ])
        .env("GATUN_CLI_HEADER_TEST", "from the header")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], "from the header");
    // An explicit prototype through a character typedef, and `const unsigned char *`.
    assert_eq!(
        call(&["typedef char gchar; gchar *strerror(int)", "2"]),
        "No such file or directory\n"
    );
    assert_eq!(
        call(&["const unsigned char *strerror(int)", "2"]),
        "No such file or directory\n"
    );
    // Other pointers still print as addresses.
    assert!(call(&["void *strerror(int)", "2"]).starts_with("0x"));
}

#[test]
fn usage_errors_are_one_complete_line() {
    let e = call_fails(&[]);
    assert_eq!(
        e.trim_end(),
        "gatun: missing required argument <DECL> (usage: gatun call [OPTIONS] <DECL> [ARGS]...)"
    );
    let e = one_line_error(&["layout"]);
    assert_eq!(
        e.trim_end(),
        "gatun: missing required argument <DECL> (usage: gatun layout [OPTIONS] <DECL>)"
    );
    // A stray word is an extra argument, not an option.
    let e = one_line_error(&["layout", "int", "extra"]);
    assert!(e.contains("unexpected extra argument 'extra'"), "{e}");
    assert!(!e.contains("option"), "{e}");
    assert!(e.contains("(usage: gatun layout [OPTIONS] <DECL>)"), "{e}");
}

#[test]
fn json_errors_are_a_json_object_on_stderr() {
    for args in [
        &["call", "--json", "int abs(int)", "x"][..],
        &["call", "int abs(int)", "x", "--json"],
        &["call", "--json"],
        &["layout", "--json", "struct S { foo x; }"],
        &["layout", "--json", "int", "extra"],
    ] {
        let out = gatun().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        let v: serde_json::Value = serde_json::from_str(&err).unwrap();
        let message = v["error"].as_str().unwrap();
        assert!(
            !message.is_empty() && !message.starts_with("gatun:"),
            "{err}"
        );
        assert_eq!(v.as_object().unwrap().len(), 1, "{err}");
    }
    // After `--`, `--json` is an argument, so the error is plain text.
    let e = call_fails(&["int abs(int)", "--", "--json"]);
    assert!(e.contains("`--json`"), "{e}");
}

#[test]
fn numbers_that_do_not_fit_the_parameter_say_why() {
    for (text, shown) in [("1.5", "`1.5`"), ("1e3", "`1e3`"), ("-0.0", "`-0.0`")] {
        let e = call_fails(&["int abs(int)", text]);
        assert!(
            e.contains(&format!(
                "argument 1: {shown} is not an integer (the type is i32)"
            )),
            "{e}"
        );
        assert!(!e.contains("non-numeric"), "{e}");
    }
    let e = call_fails(&["int abs(int)", "twelve"]);
    assert!(e.contains("non-numeric"), "{e}");
    // A finite number too large for the type is an error, not an infinity.
    let e = call_fails(&["-l", "libm.so.6", "double fabs(double)", "1e999"]);
    assert!(e.contains("`1e999` is out of range for double"), "{e}");
    let e = call_fails(&["-l", "libm.so.6", "float fabsf(float)", "1e39"]);
    assert!(e.contains("`1e39` is out of range for float"), "{e}");
    let e = call_fails(&["int printf(const char *, ...)", "%f", "-1e999"]);
    assert!(
        e.contains("argument 2: `-1e999` is out of range for double"),
        "{e}"
    );
    // Infinities written as such are still passed.
    assert_eq!(
        call(&["-l", "libm.so.6", "double fabs(double)", "-Infinity"]),
        "inf\n"
    );
    assert_eq!(
        call(&["-l", "libm.so.6", "double fabs(double)", "1e308"]),
        "1e308\n"
    );
}

/// A path in the temporary directory unique to this test process and `name`.
fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("gatun-cli-{}-{name}", std::process::id()))
}

#[test]
fn unresolved_literals_are_errors_and_nothing_is_called() {
    // `cli_mark_and_fill` creates its first argument as a file, then writes 4 KiB through its
    // second: the file exists exactly when the function was called.
    let lib = gatun_test_natives::PATH;
    let declared_only =
        "struct cli_record; int cli_mark_and_fill(const char *, struct cli_record *)";
    let defined = "struct cli_record { long values[512]; }; \
                   int cli_mark_and_fill(const char *, struct cli_record *)";
    let cases: [(&str, &str, &str); 6] = [
        (
            declared_only,
            "&struct cli_record",
            "argument 2: '&struct cli_record': struct cli_record is declared but never defined",
        ),
        (
            defined,
            "&struct cli_recrod",
            "argument 2: '&struct cli_recrod': struct cli_recrod is not declared",
        ),
        (defined, "&cli_record", "unknown type name `cli_record`"),
        (
            defined,
            "struct cli_record",
            "`struct cli_record` names a type",
        ),
        (defined, "[4096", "bad buffer size in `[4096`"),
        (
            defined,
            "{1}",
            "a struct literal cannot be passed for a pointer",
        ),
    ];
    for (i, (decl, word, message)) in cases.iter().enumerate() {
        let marker = temp_path(&format!("unresolved-{i}"));
        let _ = std::fs::remove_file(&marker);
        let e = call_fails(&["-l", lib, decl, marker.to_str().unwrap(), word]);
        assert!(e.contains(message), "{word}: {e}");
        assert!(!marker.exists(), "{word}: the function was called ({e})");
    }
    // The same call with a type that resolves: called, and the record printed by name.
    let marker = temp_path("resolved");
    let out = call(&[
        "-l",
        lib,
        defined,
        marker.to_str().unwrap(),
        "&struct cli_record",
    ]);
    assert!(marker.exists());
    std::fs::remove_file(&marker).unwrap();
    let value = 0x5a5a_5a5a_5a5a_5a5a_u64 as i64;
    assert!(
        out.starts_with(&format!("1\nargument 2: {{values = {{{value}, {value}, ")),
        "{}",
        &out[..80.min(out.len())]
    );
    // After `--` such words are text: `fopen` creates a file of that name.
    let dir = temp_path("literal-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let out = gatun()
        .current_dir(&dir)
        .args([
            "call",
            "void *fopen(const char *, const char *)",
            "--",
            "&int",
            "w",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(dir.join("&int").exists(), "`&int` after `--` is a string");
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        call(&["size_t strlen(const char *)", "--", "&struct stat"]),
        "12\n"
    );
}

#[test]
fn the_issues_typos_are_errors() {
    // Each of these once called the function with the text as a buffer it wrote past.
    let e = call_fails(&[
        "int stat(const char*, struct stat*)",
        "/etc/passwd",
        "&struct stat",
    ]);
    assert!(
        e.contains("'&struct stat': struct stat is declared but never defined")
            && e.contains("(add -i sys/stat.h)"),
        "{e}"
    );
    let e = call_fails(&[
        "int stat(const char*, void*)",
        "/etc/passwd",
        "&struct stat",
    ]);
    assert!(
        e.contains("'&struct stat': struct stat is not declared (add -i sys/stat.h)"),
        "{e}"
    );
    let e = call_fails(&[
        "struct tm *localtime_r(const long *, struct tm *)",
        "&long=0",
        "&struct tm",
    ]);
    assert!(
        e.contains("'&struct tm': struct tm is") && e.contains("add -i time.h"),
        "{e}"
    );
    let e = call_fails(&[
        "-l",
        "libm.so.6",
        "double frexp(double, int*)",
        "48",
        "&itn",
    ]);
    assert!(e.contains("'&itn': unknown type name `itn`"), "{e}");
    // A type name for a pointer to a non-character type is an out-parameter without its `&`;
    // for a `char *` it is text.
    let e = call_fails(&["-l", "libm.so.6", "double frexp(double, int*)", "48", "int"]);
    assert!(e.contains("write `&int` for an out-parameter"), "{e}");
    assert_eq!(call(&["size_t strlen(const char *)", "int"]), "3\n");
    // With the header, the same call works and prints the struct by member name.
    let out = call(&["-i", "time.h", "localtime_r", "&long=0", "&struct tm"]);
    assert!(
        out.contains("argument 2: {tm_sec = 0, tm_min = 0, "),
        "{out}"
    );
    assert!(out.contains("tm_year = 70"), "{out}");
}

#[test]
fn preprocessor_options_for_headers() {
    // strcasestr is declared only under _GNU_SOURCE.
    let e = call_fails(&["-i", "string.h", "strcasestr", "Hello", "ELL"]);
    assert!(e.contains("`strcasestr`"), "{e}");
    assert_eq!(
        call(&[
            "-D",
            "_GNU_SOURCE",
            "-i",
            "string.h",
            "strcasestr",
            "Hello",
            "ELL"
        ]),
        "ello\n"
    );
    assert_eq!(
        call(&[
            "strcasestr",
            "Hello",
            "ELL",
            "-D_GNU_SOURCE",
            "-i",
            "string.h"
        ]),
        "ello\n"
    );
    // -I finds a header of our own, -D selects what it declares, -include reads a file first.
    let dir = temp_path("headers");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("gatun_cli_test.h"),
        "static inline int gatun_twice(int x) { return 2 * x; }\n\
         #ifdef GATUN_WANT_LABS\nlong labs(long);\n#endif\n\
         #ifdef GATUN_FROM_INCLUDE\nint abs(int);\n#endif\n",
    )
    .unwrap();
    std::fs::write(dir.join("first.h"), "#define GATUN_FROM_INCLUDE 1\n").unwrap();
    let d = dir.to_str().unwrap();
    let e = call_fails(&["-I", d, "-i", "gatun_cli_test.h", "labs", "-5"]);
    assert!(e.contains("`labs`"), "{e}");
    assert_eq!(
        call(&[
            "-I",
            d,
            "-D",
            "GATUN_WANT_LABS=1",
            "-i",
            "gatun_cli_test.h",
            "labs",
            "-5"
        ]),
        "5\n"
    );
    let first = dir.join("first.h");
    assert_eq!(
        call(&[
            "-I",
            d,
            "-include",
            first.to_str().unwrap(),
            "-i",
            "gatun_cli_test.h",
            "abs",
            "-7"
        ]),
        "7\n"
    );
    // A static inline function has no symbol: said so, rather than "not declared".
    let e = call_fails(&["-I", d, "-i", "gatun_cli_test.h", "gatun_twice", "2"]);
    assert!(
        e.contains(
            "`gatun_twice` is static inline in the header (gatun_cli_test.h), not exported by \
             any library"
        ),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    // -D and -I need a header to apply to.
    let e = call_fails(&["-D", "X", "int abs(int)", "1"]);
    assert!(e.contains("-D and -I apply to headers"), "{e}");
}

#[test]
fn a_header_function_without_its_library_says_to_add_it() {
    let e = call_fails(&["-i", "zlib.h", "crc32", "0", "hello", "5"]);
    assert!(e.contains("symbol `crc32` not found"), "{e}");
    assert!(
        e.contains("add -l LIBRARY, the library that exports it, e.g. -l libz.so.1"),
        "{e}"
    );
    // Without headers the plain error.
    let e = call_fails(&["int gatun_nowhere(int)", "1"]);
    assert!(!e.contains("add -l"), "{e}");
}

#[test]
fn strings_behind_pointer_typedefs_print_as_strings() {
    let decl = "typedef const char *png_const_charp; png_const_charp strerror(int)";
    assert_eq!(call(&[decl, "2"]), "No such file or directory\n");
    let v: serde_json::Value = serde_json::from_str(&call(&["--json", decl, "2"])).unwrap();
    assert_eq!(v["result"], "No such file or directory");
    // Out-parameters of such a type too.
    let strtod = "typedef char *charp; double strtod(const char *, charp *)";
    assert_eq!(
        call(&[strtod, "2.5rest", "&charp"]),
        "2.5\nargument 2: \"rest\"\n"
    );
}

#[test]
fn floats_are_written_alike_in_text_and_json() {
    for (args, text) in [
        (["10", "6"], "1e6"),
        (["2", "0.5"], "1.4142135623730951"),
        (["10", "-7"], "1e-7"),
        (["2", "10"], "1024"),
    ] {
        let mut all = vec!["-l", "libm.so.6", "double pow(double, double)"];
        all.extend(args);
        assert_eq!(call(&all), format!("{text}\n"));
        all.insert(0, "--json");
        let out = call(&all);
        assert!(out.contains(&format!(r#""result":{text}}}"#)), "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["result"].as_f64(), text.parse::<f64>().ok(), "{out}");
    }
}

#[test]
fn the_result_starts_on_its_own_line() {
    // Through a pipe (how the tests run the binary): C's stdio output and raw write(2).
    assert_eq!(call(&["int printf(const char*, ...)", "hi"]), "hi\n2\n");
    assert_eq!(
        call(&["long write(int, const void *, size_t)", "1", "abc", "3"]),
        "abc\n3\n"
    );
    // Output that ends its line gets no blank line; JSON starts on its own line too.
    assert_eq!(call(&["int puts(const char*)", "hi"]), "hi\n3\n");
    let out = call(&["--json", "int printf(const char*, ...)", "hi"]);
    assert!(out.starts_with("hi\n{"), "{out}");
    // Into a regular file (open for writing only, as `> file` opens it).
    let path = temp_path("stdout.txt");
    let file = std::fs::File::create(&path).unwrap();
    let status = gatun_test_natives::target_command(env!("CARGO_BIN_EXE_gatun"))
        .args(["call", "int printf(const char*, ...)", "hi"])
        .stdout(file)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "hi\n2\n");
    std::fs::remove_file(&path).unwrap();
    // On a terminal (util-linux `script` gives the command a pseudo-terminal), where C's
    // stdout is line-buffered and nothing is interposed.
    let binary = env!("CARGO_BIN_EXE_gatun");
    if gatun_test_natives::RUNNER.is_empty() && std::path::Path::new("/usr/bin/script").exists() {
        let out = std::process::Command::new("/usr/bin/script")
            .args(["-qec"])
            .arg(format!("{binary} call 'int printf(const char*, ...)' hi"))
            .arg("/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\r\n2\r\n");
    }
}

#[test]
fn bit_fields_of_results_print_by_name_as_the_c_compiler_sets_them() {
    let lib = gatun_test_natives::PATH;
    let decl = "struct cli_bits { int a : 3; unsigned b : 5; signed char c; }; \
                struct cli_bits cli_make_bits(int, unsigned, signed char)";
    assert_eq!(
        call(&["-l", lib, decl, "-3", "21", "7"]),
        "{a = -3, b = 21, c = 7}\n"
    );
    let v: serde_json::Value =
        serde_json::from_str(&call(&["--json", "-l", lib, decl, "3", "31", "-1"])).unwrap();
    assert_eq!(v["result"], serde_json::json!({ "a": 3, "b": 31, "c": -1 }));
}
