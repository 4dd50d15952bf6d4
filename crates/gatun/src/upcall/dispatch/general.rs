//! The general path ([`Path::General`](super::super::context::Path::General)): any signature
//! the native plan accepts, the plan interpreted argument by argument.
//!
//! By-value struct arguments are copied into one frame of the per-thread
//! [`linker_stack`] (zeroed first, then written move by move, so every byte of a copy is
//! initialised); up to [`INLINE_ARGS`] argument `Value`s live in an array on the Rust stack,
//! more in one heap vector per call. A struct the caller passes by reference is not copied.

use std::mem::MaybeUninit;

use super::super::abort::{guard, return_mismatch};
use super::super::context::Context;
use super::super::UpcallArgs;
use super::INLINE_ARGS;
use crate::abi::{ArgPlan, Register, ReturnPlan};
use crate::backend::store_low_bytes;
use crate::backend::upcall::{UpcallArgKind, UpcallEntries, UpcallFrame, UpcallRetKind};
use crate::backend::Native;
use crate::error::Result;
use crate::memory::{linker_stack, MemorySegment, SegmentAllocator};
use crate::value::Value;

/// [`dispatch_general`] under [`guard`], out of line (its frame is much larger than the scalar
/// path's).
///
/// # Safety
/// As [`dispatch_general`].
#[inline(never)]
pub(crate) unsafe fn run_general(ctx: &Context<'_>, frame: &mut UpcallFrame) {
    // SAFETY: forwarded.
    guard(&ctx.descriptor, || unsafe { dispatch_general(ctx, frame) })
}

/// Decodes the arguments of any signature (the plan interpreted argument by argument), runs
/// the closure and encodes its result into `frame` (an error is returned, for the caller's
/// guard to abort on).
///
/// # Safety
/// `frame` holds the registers and stack-argument address of a C call of `ctx`'s descriptor
/// type (module invariants of [`crate::upcall`]).
#[inline(always)]
pub(crate) unsafe fn dispatch_general(ctx: &Context<'_>, frame: &mut UpcallFrame) -> Result<()> {
    let copies = if ctx.copies.bytes > 0 {
        Some(linker_stack().push_frame(ctx.copies.bytes, ctx.copies.align)?)
    } else {
        None
    };
    let copies = copies.as_ref();
    let decode = |(kind, ap): (&UpcallArgKind, &ArgPlan)| -> Result<Value<'_>> {
        Ok(match *kind {
            UpcallArgKind::Scalar(k, loc) => {
                // SAFETY: the location belongs to the plan of this call (caller's contract).
                let bits = unsafe { frame.arg(loc) };
                Value::from_scalar_bits(k, bits)
            }
            UpcallArgKind::Group { size, align } => {
                let copy = copies
                    .expect("a frame is pushed when there are struct arguments")
                    .allocate_uninit(size, align)?;
                // Zeroed first: the moves need not write every byte (padding), and the
                // linker stack's memory holds earlier frames' data.
                // SAFETY: the copy is writable for `size` bytes.
                unsafe { copy.as_ptr().write_bytes(0, size) };
                for m in &ap.moves {
                    // SAFETY: the location is readable (caller's contract); the move lies
                    // inside the copy, which has the layout's size.
                    unsafe {
                        store_low_bytes(
                            copy.as_ptr().add(m.offset as usize),
                            frame.arg(m.to),
                            m.size as usize,
                        )
                    };
                }
                Value::Segment(copy)
            }
            UpcallArgKind::ByReference { size, at } => {
                // SAFETY: the location holds the address of the caller's copy of the argument,
                // readable and writable for its size during the call (caller's contract); the
                // segment cannot outlive the upcall (`UpcallArgs`).
                let p = unsafe { frame.arg(at) } as usize as *mut u8;
                // SAFETY: as above.
                Value::Segment(unsafe { MemorySegment::from_raw_parts(p, size) })
            }
        })
    };
    let kinds = ctx.args.iter().zip(&ctx.plan.args);
    let n = ctx.args.len();
    // Only the used prefix of the inline array is written (no 16 x 24-byte fill per call).
    let mut inline = [const { MaybeUninit::<Value<'_>>::uninit() }; INLINE_ARGS];
    let heap: Vec<Value<'_>>;
    let values: &[Value<'_>] = if n <= INLINE_ARGS {
        for (slot, k) in inline.iter_mut().zip(kinds) {
            slot.write(decode(k)?);
        }
        // SAFETY: the first `n` slots were written just above (`Value` is `Copy`: nothing to
        // drop on an early return).
        unsafe { std::slice::from_raw_parts(inline.as_ptr().cast::<Value<'_>>(), n) }
    } else {
        heap = kinds.map(decode).collect::<Result<_>>()?;
        &heap
    };
    // The largest register-returned struct: an HFA of four doubles in v0..v3 (AAPCS64).
    // Zeroed only for a register-returned struct (the one case that reads it).
    let mut image = MaybeUninit::<[u64; 4]>::uninit();
    let image_ptr = image.as_mut_ptr().cast::<u8>();
    let ret = match (ctx.ret, ctx.plan.hidden_return_pointer) {
        (UpcallRetKind::Group(size), Some(loc)) => {
            // SAFETY: the hidden pointer is writable for the return layout's size (caller's
            // contract), for the whole call.
            Some(unsafe { MemorySegment::from_raw_parts(frame.arg(loc) as usize as *mut u8, size) })
        }
        // SAFETY: a register-returned struct has at most 32 bytes; `image` (32 bytes, zeroed
        // here) outlives the segment, which the closure cannot keep, and is read below only
        // through `image_ptr`.
        (UpcallRetKind::Group(size), None) => unsafe {
            image_ptr.write_bytes(0, 32);
            Some(MemorySegment::from_raw_parts(image_ptr, size.min(32)))
        },
        _ => None,
    };
    let args = UpcallArgs {
        values,
        ret,
        ctx: (ctx as *const Context<'_>).cast(),
    };
    let result = (ctx.closure)(&args)?;
    match (ctx.ret, &ctx.plan.ret) {
        (UpcallRetKind::Void, _) => {
            if !matches!(result, Value::Void) {
                return Err(return_mismatch("void", &result));
            }
        }
        (UpcallRetKind::Scalar(k, reg), _) => {
            let bits = result
                .scalar_bits(k)
                .ok_or_else(|| return_mismatch(k, &result))?;
            frame.set_return(reg, Native::scalar_return_bits(k, bits));
        }
        (UpcallRetKind::Group(size), plan) => {
            let dst = ret.expect("a return segment exists for struct returns");
            match result {
                Value::Void => {}
                Value::Segment(s) if s.byte_size() >= size => {
                    if s.address() != dst.address() {
                        dst.copy_from(&s.slice(0, size)?)?;
                    }
                }
                v => {
                    return Err(return_mismatch(
                        format_args!(
                            "a segment of at least {size} bytes, or void after writing the return segment"
                        ),
                        &v,
                    ))
                }
            }
            match plan {
                ReturnPlan::Registers(moves) => {
                    for m in moves {
                        // SAFETY: a register move starts at offset 24 at the most (the last
                        // double of a 32-byte HFA), so 8 bytes lie inside the 32-byte image,
                        // zeroed above for this return kind;
                        // bytes past the move's are the struct's next member or zero, and the
                        // caller reads only the move's low bytes of the register.
                        let bits = unsafe {
                            image_ptr
                                .add(m.offset as usize)
                                .cast::<u64>()
                                .read_unaligned()
                        };
                        let vector = matches!(m.from, Register::Vector(_));
                        let bits = Native::group_return_bits(vector, m.size as usize, bits);
                        frame.set_return(m.from, bits);
                    }
                }
                // SysV and Win64 return the hidden pointer in rax, RV64 in a0; AArch64 need
                // not return it in x0 (AAPCS64 §6.9), where the same store is harmless.
                _ => frame.ret_int[0] = dst.address() as u64,
            }
        }
    }
    Ok(())
}
