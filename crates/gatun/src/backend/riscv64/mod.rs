//! The RISC-V 64 (LP64D) backend: the compiled-stub compiler (`stub`, encoded by `encode`).
#[cfg(any(test, gatun_backend = "riscv64"))]
pub(crate) mod encode;
#[cfg(any(test, gatun_backend = "riscv64"))]
pub(crate) mod stub;
