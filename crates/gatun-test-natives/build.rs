//! Builds gatun's C test natives: every `../gatun/tests/native/*.c`, plus the generated
//! property-test checkers (`prop_checkers.c`, downcall and upcall checkers written from
//! `../gatun/tests/prop/sigs.rs`), is compiled with the target's C compiler (found through the
//! `cc` crate: the system `cc` for a native build, `aarch64-linux-gnu-gcc` for an
//! `aarch64-unknown-linux-gnu` cross build, or whatever `CC_<target>`/`CC` names) into one
//! shared library, `libgatun_test_natives.so`, in `OUT_DIR`. Its absolute path is passed to
//! `src/lib.rs` as the compile-time environment variable `GATUN_TEST_NATIVES`, which exports it
//! as `PATH`.
//!
//! Every Linux target builds the library, native or cross; non-Linux targets and Miri skip it
//! (the path is still set, so dependents compile, but no file exists there).

use std::path::{Path, PathBuf};

// The random signatures of the property tests (gatun's tests/downcall_prop.rs and
// tests/upcall_prop.rs).
include!("../gatun/tests/prop/sigs.rs");

fn main() {
    let native_dir = Path::new("../gatun/tests/native");
    println!("cargo:rerun-if-changed=../gatun/tests/native");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../gatun/tests/prop/sigs.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let miri = std::env::var_os("CARGO_CFG_MIRI").is_some();
    let lib = out.join("libgatun_test_natives.so");

    let mut sources: Vec<PathBuf> = std::fs::read_dir(native_dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "c"))
                .collect()
        })
        .unwrap_or_default();
    sources.sort();
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
    println!("cargo:rustc-env=GATUN_TEST_NATIVES={}", lib.display());
    // Linux targets (native or cross) get the test library; other targets and Miri skip it.
    if sources.is_empty() || target_os != "linux" || miri {
        return;
    }
    // The `cc` crate reads TARGET/HOST from the build-script environment, so for a cross build
    // this is the target's compiler (e.g. `aarch64-linux-gnu-gcc`), not the host's.
    // Generated C checkers for the property tests, compiled into the same library.
    let prop_c = out.join("prop_checkers.c");
    std::fs::write(&prop_c, prop_c_source() + &prop_cb_c_source()).expect("write prop_checkers.c");
    sources.push(prop_c);
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .opt_level(2)
        .get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args([
        "-shared",
        "-fPIC",
        "-O2",
        "-Wall",
        "-Werror",
        "-std=gnu11",
        "-o",
    ])
    .arg(&lib)
    .args(&sources)
    .arg("-lm")
    .arg("-lpthread");
    let status = cmd.status().expect("run the C compiler");
    assert!(
        status.success(),
        "compiling gatun's tests/native/*.c failed: {cmd:?}"
    );
}
