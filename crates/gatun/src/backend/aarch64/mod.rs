//! The AArch64 backend: AAPCS64 (Linux) and Apple arm64 classification into a
//! [`CallPlan`](crate::abi::CallPlan) ([`classify`], public as `gatun::abi::aarch64`). Pure data,
//! compiled and tested on every host; there is no AArch64 executor yet, so no handle is linked
//! through it (on an AArch64 host the native backend is `unsupported`).

pub mod classify;

// The AAPCS64 (Linux) compiled-stub compiler: pure data on every host, run on AArch64 Linux.
// Not yet called by an executor; its tests use all of it.
#[allow(dead_code)]
pub(crate) mod encode;
#[allow(dead_code)]
pub(crate) mod stub;
