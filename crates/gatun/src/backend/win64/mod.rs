//! The Win64 backend: Microsoft x64 calling convention classification into a
//! [`CallPlan`](crate::abi::CallPlan) ([`classify`], public as `gatun::abi::win64`). Pure data,
//! compiled and tested on every host; there is no Win64 executor yet, so no handle is linked
//! through it (on Windows the native backend is `unsupported`).

pub mod classify;
