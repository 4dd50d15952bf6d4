//! Builds the benchmark natives: every `native/*.c` is compiled with `-O2` by the `cc` crate into
//! the static library `libgatun_bench_natives.a`, linked into this crate, so the benchmark bodies
//! call the C functions directly through `extern "C"` declarations (see `src/natives.rs`) and hand
//! their addresses to gatun's and libffi's handles. Cross builds to non-Linux targets skip
//! them (they type-check only).

use std::path::{Path, PathBuf};

fn main() {
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
    // A cross build to a non-Linux target (CI's type-check for aarch64-apple-darwin) has no C
    // compiler for it: the natives are left out, so such a build checks but does not link.
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let cross = std::env::var("TARGET").ok() != std::env::var("HOST").ok();
    if cross && target_os != "linux" {
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
