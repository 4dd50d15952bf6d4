//! The `linker::Arguments` fast path on x86-64 Windows: a call of at most four scalar
//! arguments, not variadic, is made straight from Rust with the argument registers loaded
//! from the slots — no stub. The Microsoft x64 convention gives argument `i < 4` the `i`-th of
//! rcx, rdx, r8, r9 if it is an integer, pointer or bool, or xmm`i` if it is a float; each slot
//! is loaded into both (as for a variadic call), so only the count picks the code, and the
//! callee reads the register of its parameter's class. The caller reserves the 32-byte home
//! area below the return address. The slots hold small integers extended to 64 bits and a
//! `float`'s bits in the low 32 bits.
//!
//! # Invariants
//! - Calls are made from `asm!` blocks without `nostack` (the stack pointer is call-aligned
//!   at the block's start) that move it down by the 32-byte home area around the `call` and
//!   back, with `clobber_abi("C")` (the Microsoft x64 caller-saved set).
//! - [`path_of`] gives a path only to signatures this module can call: no capture, not
//!   variadic, at most four arguments, all scalars, a non-bool scalar or void return.

use std::ffi::c_void;

use crate::abi::CallPlan;
use crate::backend::{ArgKind, RetKind, Slots, SlotsPath};
use crate::layout::ScalarKind;

/// The slots path of a signature (see the module documentation).
pub(crate) fn path_of(plan: &CallPlan, args: &[ArgKind], ret: RetKind, capture: bool) -> SlotsPath {
    let scalars = args.len() <= 4 && args.iter().all(|a| matches!(a, ArgKind::Scalar(_)));
    if capture || plan.is_variadic() || !scalars {
        return SlotsPath::None;
    }
    match ret {
        RetKind::Scalar(ScalarKind::F32 | ScalarKind::F64) => SlotsPath::Float,
        RetKind::Scalar(ScalarKind::Bool) | RetKind::Group { .. } => SlotsPath::None,
        RetKind::Void | RetKind::Scalar(_) => SlotsPath::Int,
    }
}

/// Calls `target` with the arguments of kind word `kinds` (`linker::arguments`; at most four)
/// from `slots`; returns rax (`xmm0 = false`) or xmm0's low 64 bits. With a constant `kinds`
/// the count folds to one `asm!` block.
///
/// # Safety
/// `slots[i]` is initialised for every non-zero kind byte `i` of `kinds`; `target` is a
/// function, not variadic, of exactly those arguments, returning in rax (`xmm0 = false`: an
/// integer, a pointer or nothing) or xmm0; its contract is the caller's.
#[inline(always)]
pub(crate) unsafe fn call(kinds: u64, slots: &Slots, target: *const c_void, xmm0: bool) -> u64 {
    let n = (0..4).take_while(|i| (kinds >> (8 * i)) as u8 != 0).count();
    let mut s = [0u64; 4];
    for (i, v) in s.iter_mut().enumerate().take(n) {
        // SAFETY: kind byte `i` is not zero (caller).
        *v = unsafe { slots[i].assume_init() };
    }
    macro_rules! asm_call {
        ($($gr:tt $xr:tt $i:tt)*) => {{
            let (rax, x0): (u64, f64);
            // SAFETY: a Microsoft x64 call (see the module invariants) with the argument
            // registers the callee reads and its home area; it clobbers only what the
            // convention lets it (`clobber_abi("C")`); it may read and write memory as its
            // contract allows.
            unsafe {
                std::arch::asm!(
                    "sub rsp, 32",
                    "call {t}",
                    "add rsp, 32",
                    t = in(reg) target,
                    $(in($gr) s[$i], in($xr) f64::from_bits(s[$i]),)*
                    lateout("rax") rax,
                    lateout("xmm0") x0,
                    clobber_abi("C"),
                );
            }
            if xmm0 { x0.to_bits() } else { rax }
        }};
    }
    match n {
        0 => asm_call!(),
        1 => asm_call!("rcx" "xmm0" 0),
        2 => asm_call!("rcx" "xmm0" 0 "rdx" "xmm1" 1),
        3 => asm_call!("rcx" "xmm0" 0 "rdx" "xmm1" 1 "r8" "xmm2" 2),
        _ => asm_call!("rcx" "xmm0" 0 "rdx" "xmm1" 1 "r8" "xmm2" 2 "r9" "xmm3" 3),
    }
}
