//! The dispatchers: the Rust side of a stub, one file per path of [`Path`].
//!
//! - [`gatun_upcall_dispatch`] (here): the general entry's dispatcher, which every backend's
//!   entry calls through the context's header; it runs the scalar, register or general path.
//! - [`scalar`]: scalars in registers ([`Path::Scalar`]).
//! - [`registers`]: scalars and structs in registers ([`Path::Registers`]).
//! - [`general`]: any signature, the plan interpreted ([`Path::General`]).
//! - [`int`]: the integer-register path's dispatchers, which the stub jumps to directly
//!   ([`Path::Int`]).
//! - [`shape`]: the register-shape dispatchers, which the backend's shape entries call
//!   ([`Path::Shape`]).
//!
//! Every dispatcher runs the closure under [`guard`](super::abort::guard) or its own
//! `catch_unwind`: an error or a panic aborts the process, never unwinds into C.

use super::abort::check_owner;
use super::context::{Context, Path};
use crate::backend::upcall::{UpcallFrame, UpcallHeader};
#[cfg(test)]
use crate::error::Result;
use crate::value::Value;

pub(crate) mod general;
pub(crate) mod int;
pub(crate) mod registers;
pub(crate) mod scalar;
pub(crate) mod shape;

/// Up to this many arguments are decoded into an array on the Rust stack; more take one heap
/// vector per call.
pub(crate) const INLINE_ARGS: usize = 16;

/// One argument of a scalar-only upcall: its `Value` tag and the frame word holding its bits
/// (an argument register: `gpr[n]` is word `n`, `vector[n]` word `9 + n`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScalarArg {
    /// The `Value` tag of the argument's kind.
    pub(crate) tag: u8,
    /// The frame word of its register.
    pub(crate) word: u8,
    /// Whether the kind is `bool` (normalised to 0 or 1).
    pub(crate) is_bool: bool,
}

/// Writes the `Value` of a scalar argument from its 64-bit register image: the tag, then the
/// image as payload (a `bool` normalised to 0 or 1). Equal to `Value::from_scalar_bits` of the
/// tag's kind (asserted for every kind in the tests): every scalar variant's payload starts at
/// offset 8 and reads only its own bytes, which [`scalar_words`](crate::value::scalar_words)
/// fills with the image's low bytes in the target's byte order.
///
/// # Safety
/// `slot` is valid for writes of a `Value`; `a.tag` is the tag of a scalar kind.
#[inline(always)]
pub(crate) unsafe fn write_scalar_value(slot: *mut Value<'_>, a: ScalarArg, bits: u64) {
    let bits = if a.is_bool {
        (bits as u8 != 0) as u64
    } else {
        bits
    };
    let p = slot.cast::<u64>();
    let [tag, bits] = crate::value::scalar_words(a.tag, bits);
    // SAFETY: `Value` is `#[repr(C, u8)]`, 24 bytes, 8-aligned: the tag byte and padding in
    // the first word, the payload from offset 8 (caller: `slot` is writable).
    unsafe {
        p.write(tag);
        p.add(1).write(bits);
    }
}

/// The general entry's dispatcher (every backend's `upcall_code` entry calls it through
/// [`UpcallHeader::dispatch`]): runs the context's scalar, register or general path under
/// [`guard`](super::abort::guard), which aborts on an error or a panic.
///
/// # Safety
/// Called only by the entry assembly, with the header address from the stub's code (its
/// context's) and a frame as described in the module invariants of [`crate::upcall`].
pub(crate) unsafe extern "C" fn gatun_upcall_dispatch(
    ctx: *const UpcallHeader,
    frame: *mut UpcallFrame,
) {
    // SAFETY: the stub's code holds the address of its live boxed Context, whose header is at
    // offset 0 (module invariants).
    let ctx = unsafe { &*ctx.cast::<Context<'_>>() };
    // SAFETY: the entry passes its own exclusive frame on its stack.
    let frame = unsafe { &mut *frame };
    if ctx.owner != 0 {
        check_owner(ctx);
    }
    match &ctx.path {
        Path::Scalar(fast) | Path::Int { scalar: fast, .. } => {
            // SAFETY: forwarded (the frame is a call of the stub's type).
            super::abort::guard(&ctx.descriptor, || unsafe {
                scalar::dispatch_scalar(ctx, fast, frame)
            })
        }
        // SAFETY: forwarded.
        Path::Registers(regs) => unsafe { registers::run_registers(ctx, regs, frame) },
        // SAFETY: forwarded.
        Path::Shape(_) | Path::General => unsafe { general::run_general(ctx, frame) },
    }
}

/// Decodes the arguments, runs the closure and encodes its result into `frame` (what
/// [`gatun_upcall_dispatch`] does, without the abort; the unit tests call it).
///
/// # Safety
/// `frame` holds the registers and stack-argument address of a C call of `ctx`'s descriptor
/// type (module invariants of [`crate::upcall`]).
#[cfg(test)]
pub(crate) unsafe fn dispatch(ctx: &Context<'_>, frame: &mut UpcallFrame) -> Result<()> {
    match &ctx.path {
        // SAFETY: forwarded.
        Path::Scalar(fast) | Path::Int { scalar: fast, .. } => unsafe {
            scalar::dispatch_scalar(ctx, fast, frame)
        },
        // SAFETY: forwarded.
        Path::Registers(regs) => unsafe { registers::dispatch_registers(ctx, regs, frame) },
        // SAFETY: forwarded.
        Path::Shape(_) | Path::General => unsafe { general::dispatch_general(ctx, frame) },
    }
}
