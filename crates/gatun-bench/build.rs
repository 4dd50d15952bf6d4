//! Builds the benchmark natives: every `native/*.c` is compiled with `-O2` by the `cc` crate into
//! the static library `libgatun_bench_natives.a`, linked into this crate, so the benchmark bodies
//! call the C functions directly through `extern "C"` declarations (see `src/natives.rs`) and hand
//! their addresses to gatun's and libffi's handles (with the target's C compiler: the AArch64,
//! RISC-V 64 and mingw-w64 cross compilers for those targets). Cross builds to Apple targets
//! skip them (there is no SDK here: they type-check only). It also sets `cfg(libffi_peer)`
//! where the libffi peer rows are built: on Unix targets but RISC-V 64, s390x and PPC64 (see
//! Cargo.toml).

use std::path::{Path, PathBuf};

fn main() {
    // The libffi peer rows: where Cargo.toml links libffi (Unix but RISC-V 64, s390x, PPC64).
    println!("cargo::rustc-check-cfg=cfg(libffi_peer)");
    let family = std::env::var("CARGO_CFG_TARGET_FAMILY").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if family.split(',').any(|f| f == "unix")
        && !["riscv64", "s390x", "powerpc64"].contains(&arch.as_str())
    {
        println!("cargo::rustc-cfg=libffi_peer");
    }
    let native_dir = Path::new("native");
    println!("cargo:rerun-if-changed=native");
    println!("cargo:rerun-if-changed=build.rs");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(native_dir)
        .expect("crates/gatun-bench/native")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
    // A cross build to an Apple target (CI's type-check for aarch64-apple-darwin) has no C
    // compiler and SDK for it: the natives are left out, so such a build checks but does not
    // link. Linux and Windows cross builds compile them with the target's gcc.
    let target_vendor = std::env::var("CARGO_CFG_TARGET_VENDOR").unwrap_or_default();
    let cross = std::env::var("TARGET").ok() != std::env::var("HOST").ok();
    if cross && target_vendor == "apple" {
        return;
    }
    cc::Build::new()
        .files(&sources)
        .opt_level(2)
        .flag("-std=gnu11")
        .warnings(true)
        .warnings_into_errors(true)
        .compile("gatun_bench_natives");
    // cos/sin for unit_rotated.
    println!("cargo:rustc-link-lib=m");
}
