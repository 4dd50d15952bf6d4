//! libffi-rs (`libffi::middle::Cif::call`), what Rust users reach for today to call a C function
//! described at run time: the peer the `libffi_*` rows measure.
//!
//! gatun-bench links the system libffi (Debian's 3.4.4, crate feature `system`), the same one
//! a user of a distribution's packages gets; the bundled copy is not built.

use std::ffi::c_void;

use libffi::middle::{Arg, Cif, CodePtr, Ret, Type};

use crate::natives::Native;

/// A [`Cif`] plus the code pointer it calls, movable to the thread that runs the body.
pub struct PeerCall {
    /// The call interface (argument and return types).
    pub cif: Cif,
    /// The target.
    pub code: CodePtr,
}

// SAFETY: an `ffi_cif` and its `ffi_type` descriptions are plain data owned by the `Cif`
// (boxed, never shared); libffi keeps no thread-affine state in them, so moving them to
// another thread is sound. `PeerCall` is not `Sync` and is used by one thread at a time.
unsafe impl Send for PeerCall {}

impl PeerCall {
    /// A call interface for `native` with `args` and `ret`.
    pub fn new(native: Native, args: impl IntoIterator<Item = Type>, ret: Type) -> PeerCall {
        let args: Vec<Type> = args.into_iter().collect();
        PeerCall {
            cif: Cif::new(args, ret),
            code: CodePtr(native.address() as *mut c_void),
        }
    }

    /// `Cif::call`: calls the target with `args`, returning its scalar result.
    ///
    /// # Safety
    /// The Cif must describe the target, `args` must match it, and `R` must be its return type.
    #[inline(always)]
    pub unsafe fn call<R>(&self, args: &[Arg]) -> R {
        // SAFETY: the caller's contract.
        unsafe { self.cif.call::<R>(self.code, args) }
    }

    /// `Cif::call_return_into`: calls the target, writing its result into `ret`.
    ///
    /// # Safety
    /// As [`PeerCall::call`]; `ret` must be large enough for the return type.
    #[inline(always)]
    pub unsafe fn call_return_into(&self, args: &[Arg], ret: Ret) {
        // SAFETY: the caller's contract.
        unsafe { self.cif.call_return_into(self.code, args, ret) }
    }
}

/// `struct { double x, y; }` for libffi.
pub fn double_point() -> Type {
    Type::structure([Type::f64(), Type::f64()])
}

/// `struct { long a, b, c; }` for libffi.
pub fn long3() -> Type {
    Type::structure([Type::c_long(), Type::c_long(), Type::c_long()])
}
