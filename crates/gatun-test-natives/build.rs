//! Builds gatun's C test natives: every `../gatun/tests/native/*.c`, plus the generated
//! property-test checkers (`prop_checkers.c`, downcall and upcall checkers written from
//! `../gatun/tests/prop/sigs.rs`), is compiled with the target's C compiler (found through the
//! `cc` crate: the system `cc` for a native build, `aarch64-linux-gnu-gcc` for an
//! `aarch64-unknown-linux-gnu` cross build, or whatever `CC_<target>`/`CC` names) into one
//! shared library, `libgatun_test_natives.so` (`gatun_test_natives.dll` for Windows), in
//! `OUT_DIR`. Its absolute path is passed to `src/lib.rs` as the compile-time environment
//! variable `GATUN_TEST_NATIVES`, which exports it as `PATH`.
//!
//! Every Linux target builds the library, native or cross, and so does `x86_64-pc-windows-gnu`
//! (with `x86_64-w64-mingw32-gcc`); other targets and Miri skip it (the path is still set, so
//! dependents compile, but no file exists there). The Windows DLL links libgcc statically and
//! needs no pthreads (the C sources use `CreateThread` under `_WIN32`), so it imports only
//! system DLLs that Wine has (kernel32, msvcrt, ws2_32). `cdecl_layouts.c` is left out of it:
//! its header is written for LP64 (a `long` bitfield of 60 bits) and only the Linux suite
//! reads it.
//!
//! Two more compile-time variables serve tests that use the C compiler or start target
//! programs: `GATUN_TEST_CC`, the compiler the library is built with (`cc` where none is
//! built), and `GATUN_TEST_RUNNER`, the command that runs a target program on the build host:
//! empty for a native build; for a Linux cross build to another architecture
//! `$CARGO_TARGET_<TRIPLE>_RUNNER` if set, else `qemu-<arch> -L /` (the runner
//! `.cargo/config.toml` gives cargo for `aarch64-unknown-linux-gnu`), or for RISC-V 64, s390x
//! and PPC64LE `qemu-riscv64 -L /usr/riscv64-linux-gnu`, `qemu-s390x -L /usr/s390x-linux-gnu`,
//! `qemu-ppc64le -L /usr/powerpc64le-linux-gnu` (likewise).

use std::path::{Path, PathBuf};

// The random signatures of the property tests (gatun's tests/downcall_prop.rs and
// tests/upcall_prop.rs).
include!("../gatun/tests/prop/sigs.rs");

fn main() {
    let native_dir = Path::new("../gatun/tests/native");
    println!("cargo:rerun-if-changed=../gatun/tests/native");
    println!("cargo:rerun-if-changed=build.rs");
    for sigs in [
        "sigs.rs",
        "sigs_lp64d.rs",
        "sigs_ppc64le.rs",
        "sigs_s390x.rs",
    ] {
        println!("cargo:rerun-if-changed=../gatun/tests/prop/{sigs}");
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let miri = std::env::var_os("CARGO_CFG_MIRI").is_some();
    let windows = target_os == "windows";
    let lib = out.join(if windows {
        "gatun_test_natives.dll"
    } else {
        "libgatun_test_natives.so"
    });
    let target = std::env::var("TARGET").expect("TARGET");
    let host = std::env::var("HOST").expect("HOST");
    let target_arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let host_arch = host.split('-').next().unwrap_or_default();
    let runner_var = format!(
        "CARGO_TARGET_{}_RUNNER",
        target.to_uppercase().replace(['-', '.'], "_")
    );
    println!("cargo:rerun-if-env-changed={runner_var}");
    let runner = if target_os != "linux" || target_arch == host_arch {
        String::new()
    } else {
        std::env::var(&runner_var)
            .ok()
            .filter(|r| !r.trim().is_empty())
            .unwrap_or_else(|| {
                // The target's libraries: Debian's multiarch ones in `/` for AArch64, the
                // cross toolchain's sysroot for RISC-V 64, s390x and PPC64LE (as
                // `.cargo/config.toml` runs them). qemu names PPC64LE `ppc64le`.
                let little = std::env::var("CARGO_CFG_TARGET_ENDIAN").is_ok_and(|e| e == "little");
                match target_arch.as_str() {
                    "riscv64" => "qemu-riscv64 -L /usr/riscv64-linux-gnu".to_string(),
                    "s390x" => "qemu-s390x -L /usr/s390x-linux-gnu".to_string(),
                    "powerpc64" if little => {
                        "qemu-ppc64le -L /usr/powerpc64le-linux-gnu".to_string()
                    }
                    _ => format!("qemu-{target_arch} -L /"),
                }
            })
    };
    println!("cargo:rustc-env=GATUN_TEST_RUNNER={runner}");

    let mut sources: Vec<PathBuf> = std::fs::read_dir(native_dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "c"))
                // LP64-only declarations, read by the Linux suite only (see the file's docs)
                .filter(|p| !(windows && p.file_name().is_some_and(|n| n == "cdecl_layouts.c")))
                .collect()
        })
        .unwrap_or_default();
    sources.sort();
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
    println!("cargo:rustc-env=GATUN_TEST_NATIVES={}", lib.display());
    // Linux targets (native or cross) and x86-64 Windows get the test library; other targets
    // and Miri skip it.
    let built = target_os == "linux" || (windows && target_arch == "x86_64");
    if sources.is_empty() || !built || miri {
        println!("cargo:rustc-env=GATUN_TEST_CC=cc");
        return;
    }
    // The `cc` crate reads TARGET/HOST from the build-script environment, so for a cross build
    // this is the target's compiler (e.g. `aarch64-linux-gnu-gcc`), not the host's.
    // Generated C checkers for the property tests, compiled into the same library.
    let prop_c = out.join("prop_checkers.c");
    // The generator is told the target's ABI (sigs.rs is shared with the tests, whose `cfg!`
    // would be the target's while this script's is the host's).
    let abi = if windows {
        PropAbi::Win64
    } else if target_arch == "riscv64" {
        PropAbi::Lp64d
    } else if target_arch == "powerpc64" {
        PropAbi::ElfV2
    } else if target_arch == "s390x" {
        PropAbi::S390x
    } else {
        PropAbi::Unix
    };
    std::fs::write(&prop_c, prop_c_source(abi) + &prop_cb_c_source(abi))
        .expect("write prop_checkers.c");
    sources.push(prop_c);
    let mut build = cc::Build::new();
    build.cargo_metadata(false).opt_level(2);
    // Under `-Zsanitizer=address` the `cc` crate adds `-fsanitize=address`, with which gcc
    // links its own `libasan.so` into the library: a second ASan runtime beside the one
    // rustc links statically into the test executable, which then refuses to run ("ASan
    // runtime does not come first"). And rustc's runtime is not exported from the
    // executable, so instrumented code in a library loaded with `dlopen` could not reach it
    // anyway. The natives are therefore left uninstrumented (README, "Sanitizers").
    println!("cargo:rerun-if-env-changed=CARGO_CFG_SANITIZE");
    if std::env::var("CARGO_CFG_SANITIZE").is_ok_and(|s| s.split(',').any(|s| s == "address")) {
        build.flag("-fno-sanitize=address");
    }
    let compiler = build.get_compiler();
    println!(
        "cargo:rustc-env=GATUN_TEST_CC={}",
        compiler.path().display()
    );
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
    .args(&sources);
    if windows {
        // libgcc (emulated TLS of `_Thread_local`) linked in: no libgcc_s DLL to find at run
        // time; ws2_32 for the WSA functions of win64_capture.c.
        cmd.args(["-static-libgcc", "-lws2_32"]);
    } else {
        cmd.args(["-lm", "-lpthread"]);
    }
    let status = cmd.status().expect("run the C compiler");
    assert!(
        status.success(),
        "compiling gatun's tests/native/*.c failed: {cmd:?}"
    );
}
