//! Names the platform conditions once: which ABI backend executes calls on the target, and
//! whether one does at all. Everything in the crate (library, tests, doctests) tests these
//! cfgs instead of spelling out `target_arch`/`target_os`/`miri` combinations.
//!
//! - `gatun_backend = "x86_64_sysv" | "aarch64" | "win64" | "riscv64" | "s390x" | "ppc64le" |
//!   "unsupported"`: the native backend. `aarch64` covers AArch64 Linux (AAPCS64) and Apple
//!   arm64; `riscv64` is RISC-V 64 Linux (LP64D); `s390x` is s390x Linux (the z/Architecture
//!   ELF ABI); `ppc64le` is PowerPC 64 little-endian Linux (the ELFv2 ABI); under Miri (which
//!   cannot run machine code) every target is `unsupported`.
//! - `gatun_executes`: set when the native backend is not `unsupported` (calls run).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(gatun_executes)");
    println!(
        "cargo::rustc-check-cfg=cfg(gatun_backend, values(\"x86_64_sysv\", \"aarch64\", \"win64\", \"riscv64\", \"s390x\", \"ppc64le\", \"unsupported\"))"
    );
    println!("cargo::rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let (arch, os, vendor) = (
        var("CARGO_CFG_TARGET_ARCH"),
        var("CARGO_CFG_TARGET_OS"),
        var("CARGO_CFG_TARGET_VENDOR"),
    );
    let miri = std::env::var_os("CARGO_CFG_MIRI").is_some();
    let little_endian = var("CARGO_CFG_TARGET_ENDIAN") == "little";
    let backend = match (arch.as_str(), os.as_str(), vendor.as_str()) {
        _ if miri => "unsupported",
        ("x86_64", "linux", _) => "x86_64_sysv",
        ("x86_64", "windows", _) => "win64",
        ("aarch64", "linux", _) | ("aarch64", _, "apple") => "aarch64",
        ("riscv64", "linux", _) => "riscv64",
        ("s390x", "linux", _) => "s390x",
        ("powerpc64", "linux", _) if little_endian => "ppc64le",
        _ => "unsupported",
    };
    println!("cargo::rustc-cfg=gatun_backend=\"{backend}\"");
    if backend != "unsupported" {
        println!("cargo::rustc-cfg=gatun_executes");
    }
}
