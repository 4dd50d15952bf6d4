//! `gatun call` with the names of constants where numbers go: enumeration constants and macros
//! of the `-i` headers (`O_RDONLY`, `UV_TIMER`, `M_PI`, `ZLIB_VERSION`), checked against what
//! the target's C compiler makes of the same names. Compiled for the Linux targets where gatun
//! executes calls (x86-64, AArch64, RISC-V 64, s390x, PPC64LE); a header that is not installed
//! skips its case with a message.
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

use common::gatun;
use common::one_line_error;

/// What a C program including `headers` prints with `printf(format, expr)`, compiled by the
/// target's compiler (`-l` libraries linked); `None`, with a message, when it does not compile
/// (a header or library is not installed).
fn c_prints(headers: &[&str], libs: &[&str], format: &str, expr: &str) -> Option<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let includes: String = headers
        .iter()
        .chain(&["stdio.h"])
        .map(|h| format!("#include <{h}>\n"))
        .collect();
    let source =
        format!("{includes}int main(void) {{ printf(\"{format}\", {expr}); return 0; }}\n");
    let dir = std::env::temp_dir().join(format!(
        "gatun-cli-constants-{}-{}",
        std::process::id(),
        expr.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    ));
    std::fs::create_dir_all(&dir).ok()?;
    let exe = dir.join("probe");
    let mut child = Command::new(gatun_test_natives::CC)
        .args(["-w", "-x", "c", "-o"])
        .arg(&exe)
        .arg("-")
        .args(libs.iter().map(|l| format!("-l{l}")))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(source.as_bytes()).ok()?;
    let built = child.wait_with_output().ok()?;
    if !built.status.success() {
        println!(
            "skipped `{expr}`: {}",
            String::from_utf8_lossy(&built.stderr)
                .lines()
                .next()
                .unwrap_or("")
        );
        return None;
    }
    let out = gatun_test_natives::target_command(&exe).output().ok()?;
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(out.stdout).ok()
}

/// Runs `gatun call ARGS` and returns its standard output (it must succeed).
fn call(args: &[&str]) -> String {
    let out = gatun().arg("call").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The first word of the last line of `out` (the call's result, after what the callee
/// printed).
fn result_word(out: &str) -> &str {
    out.lines()
        .last()
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or("")
}

#[test]
fn an_enumeration_constant_of_a_header_is_a_number() {
    // What C's uv_handle_size(UV_TIMER) returns (sizeof(uv_timer_t): 152 on x86-64); skipped
    // where the target's libuv is not installed.
    let Some(expected) = c_prints(&["uv.h"], &["uv"], "%zu", "uv_handle_size(UV_TIMER)") else {
        return;
    };
    let out = call(&[
        "-l",
        "libuv.so.1",
        "-i",
        "uv.h",
        "uv_handle_size",
        "UV_TIMER",
    ]);
    assert_eq!(result_word(&out), expected);
}

#[test]
fn macro_constants_are_numbers_strings_and_typed_variadic_arguments() {
    // An integer macro for an `int` parameter: abs(EINVAL) is EINVAL.
    if let Some(einval) = c_prints(&["errno.h"], &[], "%d", "EINVAL") {
        let out = call(&["-i", "errno.h", "-i", "stdlib.h", "abs", "EINVAL"]);
        assert_eq!(result_word(&out), einval);
        // A variadic argument takes the constant's own type (`int` here).
        let out = call(&[
            "-i", "errno.h", "-i", "stdio.h", "printf", "<%d>\n", "EINVAL",
        ]);
        assert!(out.starts_with(&format!("<{einval}>")), "{out}");
    }
    // open(2) with O_RDONLY opens for reading: a descriptor, not -1.
    let out = call(&["-i", "fcntl.h", "open", "/etc/passwd", "O_RDONLY"]);
    let fd: i32 = result_word(&out).parse().unwrap();
    assert!(fd >= 0, "{out}");
    // A floating macro for a `double` parameter.
    if let Some(pi) = c_prints(&["math.h"], &[], "%.17g", "M_PI") {
        let out = call(&["-i", "math.h", "fabs", "M_PI"]);
        let ours: f64 = result_word(&out).parse().unwrap();
        assert_eq!(ours, pi.parse::<f64>().unwrap());
    }
    // A string macro for a `const char *` parameter.
    if let Some(len) = c_prints(&["zlib.h", "string.h"], &[], "%zu", "strlen(ZLIB_VERSION)") {
        let out = call(&["-i", "zlib.h", "-i", "string.h", "strlen", "ZLIB_VERSION"]);
        assert_eq!(result_word(&out), len);
    }
}

#[test]
fn an_unknown_name_for_a_number_is_a_one_line_error() {
    let e = one_line_error(&[
        "call",
        "-i",
        "fcntl.h",
        "open",
        "/etc/passwd",
        "O_NOT_A_FLAG",
    ]);
    assert!(e.contains("`O_NOT_A_FLAG`"), "{e}");
    // A macro that is not a constant is no number either.
    let e = one_line_error(&["call", "-i", "errno.h", "-i", "stdlib.h", "abs", "errno"]);
    assert!(e.contains("`errno`"), "{e}");
}
