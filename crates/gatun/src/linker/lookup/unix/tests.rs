use super::*;
use libloading::os::unix::{RTLD_GLOBAL, RTLD_LAZY, RTLD_LOCAL, RTLD_NOW};

/// Debian bookworm's `/usr/lib/x86_64-linux-gnu/libm.so`, verbatim.
const DEBIAN_LIBM: &str = "/* GNU ld script\n*/\nOUTPUT_FORMAT(elf64-x86-64)\n\
GROUP ( /lib/x86_64-linux-gnu/libm.so.6  AS_NEEDED ( /lib/x86_64-linux-gnu/libmvec.so.1 ) )\n";

/// Debian bookworm's `/usr/lib/x86_64-linux-gnu/libc.so`, verbatim.
const DEBIAN_LIBC: &str =
    "/* GNU ld script\n   Use the shared library, but some functions are only in\n   \
the static library, so try that secondarily.  */\nOUTPUT_FORMAT(elf64-x86-64)\n\
GROUP ( /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc_nonshared.a  \
AS_NEEDED ( /lib64/ld-linux-x86-64.so.2 ) )\n";

fn input(path: &str, as_needed: bool) -> ScriptInput {
    ScriptInput {
        path: path.into(),
        as_needed,
    }
}

#[test]
fn ld_script_libm_names_libm_so_6_then_libmvec_as_needed() {
    let inputs = parse_ld_script(DEBIAN_LIBM);
    assert_eq!(
        inputs,
        [
            input("/lib/x86_64-linux-gnu/libm.so.6", false),
            input("/lib/x86_64-linux-gnu/libmvec.so.1", true),
        ]
    );
    assert_eq!(inputs[0].soname(), "libm.so.6");
}

#[test]
fn ld_script_libc_skips_static_archives() {
    assert_eq!(
        parse_ld_script(DEBIAN_LIBC),
        [
            input("/lib/x86_64-linux-gnu/libc.so.6", false),
            input("/lib64/ld-linux-x86-64.so.2", true),
        ]
    );
}

#[test]
fn ld_script_input_commas_and_dash_l() {
    // INPUT with commas and -l names; a word inside a comment is not an input.
    let script = "INPUT(libfoo.so.1, -lbar) /* GROUP ( libnot.so ) */ SEARCH_DIR(/x)";
    assert_eq!(
        parse_ld_script(script),
        [input("libfoo.so.1", false), input("libbar.so", false)]
    );
}

#[test]
fn ld_script_without_group_or_input_names_nothing() {
    assert!(parse_ld_script("OUTPUT_FORMAT(elf64-x86-64)\nSEARCH_DIR(/usr/lib)").is_empty());
    assert!(parse_ld_script("\u{7f}ELF garbage (((").is_empty());
    // An unterminated comment hides everything after it.
    assert!(parse_ld_script("/* GROUP ( libm.so.6 )").is_empty());
}

#[test]
#[cfg_attr(miri, ignore)] // reads the file system
fn ld_script_hint_only_for_invalid_elf_header() {
    assert_eq!(
        ld_script_hint("libnope.so: cannot open shared object file: No such file or directory"),
        None
    );
    // The file named by the message must exist and be a script.
    assert_eq!(
        ld_script_hint("/nonexistent/libx.so: invalid ELF header"),
        None
    );
}

#[test]
fn load_flags_map_to_dlopen_modes() {
    let mode = |global, lazy| LoadFlags { global, lazy }.mode();
    assert_eq!(LoadFlags::default().mode(), RTLD_NOW | RTLD_LOCAL);
    assert_eq!(mode(true, false), RTLD_NOW | RTLD_GLOBAL);
    assert_eq!(mode(false, true), RTLD_LAZY | RTLD_LOCAL);
    assert_eq!(mode(true, true), RTLD_LAZY | RTLD_GLOBAL);
}

#[test]
fn system_libraries_by_target() {
    let apple = SystemLibraries::for_target(true, false);
    assert_eq!(apple, SystemLibraries::LibSystem);
    assert!(!apple.libc_by_dladdr());
    assert_eq!(apple.named(), ["/usr/lib/libSystem.B.dylib"]);
    let glibc = SystemLibraries::for_target(false, true);
    assert_eq!(glibc, SystemLibraries::GlibcAndLibm);
    assert!(glibc.libc_by_dladdr());
    assert_eq!(glibc.named(), ["libm.so.6"]);
    let other = SystemLibraries::for_target(false, false);
    assert_eq!(other, SystemLibraries::Libc);
    assert!(other.libc_by_dladdr());
    assert!(other.named().is_empty());
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    assert_eq!(SystemLibraries::NATIVE, SystemLibraries::GlibcAndLibm);
}
