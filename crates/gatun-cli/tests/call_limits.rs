//! `gatun call` refusing a call whose arguments need more stack than gatun's executor supports
//! (1 MiB): the reason first, the descriptor shortened, one line.
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

use common::one_line_error;

fn call_fails(args: &[&str]) -> String {
    let mut all = vec!["call"];
    all.extend_from_slice(args);
    one_line_error(&all)
}

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("gatun-cli-limits-{}-{name}", std::process::id()))
}

/// The start of the one-line error for a call needing more stack for its arguments than
/// gatun's executor supports (1 MiB).
fn assert_too_much_stack(e: &str) {
    assert!(
        e.starts_with("gatun: invalid function descriptor: the call needs "),
        "{}",
        &e[..e.len().min(400)]
    );
    assert!(
        e.contains("gatun's executor supports at most 1048576"),
        "{e}"
    );
    assert!(e.len() < 400, "{} characters: {e}", e.len());
    assert!(e.trim_end().ends_with("…)"), "{e}");
}

#[test]
fn a_rejected_descriptor_says_why_first_and_briefly() {
    // 131,200 double parameters, declared by a header (the declaration is longer than Linux's
    // 128 KiB limit for one command-line word): each takes an 8-byte stack slot once the
    // registers are used (or from the first, in PPC64LE's parameter save area), more than
    // 1 MiB on every target.
    let n = 131_200;
    let dir = temp_path("many-doubles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("many.h"),
        format!("int abs({});\n", vec!["double"; n].join(", ")),
    )
    .unwrap();
    let mut args = vec!["-I", dir.to_str().unwrap(), "-i", "many.h", "abs"];
    args.extend(std::iter::repeat_n("1", n));
    let e = call_fails(&args);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_too_much_stack(&e);
    assert!(e.contains("(descriptor: (f64, f64, "), "{e}");
}

#[test]
fn a_rejected_struct_descriptor_names_the_struct() {
    // 32,800 parameters of a 32-byte struct of four doubles, where it travels by value: on the
    // stack once the registers are used (SysV: a MEMORY-class struct; AArch64: an HFA after
    // v0..v7; PPC64LE: an HFA, its doublewords in the parameter save area), 1,049,600 and
    // 1,048,960 bytes of stack arguments, more than gatun's 1 MiB. (A typedef keeps the
    // declaration under Linux's 128 KiB limit for one command-line word.) RISC-V 64 and s390x
    // pass it by reference, 8 bytes each.
    if cfg!(any(target_arch = "riscv64", target_arch = "s390x")) {
        return;
    }
    let n = 32_800;
    let params = vec!["Q"; n].join(", ");
    let decl = format!("typedef struct {{ double a, b, c, d; }} Q; int abs({params})");
    let mut args = vec![decl.as_str()];
    args.extend(std::iter::repeat_n("{1}", n));
    let e = call_fails(&args);
    assert_too_much_stack(&e);
    assert!(
        e.contains("(descriptor: ([f64(a) f64(b) f64(c) f64(d)](Q), "),
        "{e}"
    );
}
