//! The scalar path ([`Path::Scalar`](super::super::context::Path::Scalar)): every argument a
//! scalar in a register (at most [`INLINE_ARGS`]), the return `void` or a scalar.

use std::mem::MaybeUninit;

use super::super::abort::return_mismatch;
use super::super::context::Context;
use super::super::UpcallArgs;
use super::{write_scalar_value, ScalarArg, INLINE_ARGS};
use crate::abi::Location;
use crate::backend::upcall::{
    return_word, UpcallArgKind, UpcallEntries, UpcallFrame, UpcallRetKind, VECTOR_WORD,
};
use crate::backend::Native;
use crate::error::Result;
use crate::layout::ScalarKind;
use crate::value::Value;

/// The upcall path of a signature whose arguments are all scalars in registers (at most
/// [`INLINE_ARGS`]) and whose return is `void` or a scalar: each argument's `Value` is written
/// straight from its frame word (a tag byte and the 64-bit register image as payload), the
/// result's bits go straight to their return word. No linker-stack frame, no return segment,
/// no per-kind dispatch.
#[derive(Debug)]
pub(crate) struct ScalarPath {
    /// The arguments.
    pub(crate) args: Box<[ScalarArg]>,
    /// `None` for `void`, else the kind and the frame word of its return register.
    pub(crate) ret: Option<(ScalarKind, usize)>,
}

impl ScalarPath {
    /// The scalar path of a signature, or `None` if an argument is a struct or on the stack,
    /// there are more than [`INLINE_ARGS`], or the return is a struct.
    pub(crate) fn of(args: &[UpcallArgKind], ret: UpcallRetKind) -> Option<ScalarPath> {
        if args.len() > INLINE_ARGS {
            return None;
        }
        let args = args
            .iter()
            .map(|a| match *a {
                UpcallArgKind::Scalar(kind, Location::Int(n)) if (n as usize) < VECTOR_WORD => {
                    Some((kind, n as usize))
                }
                UpcallArgKind::Scalar(kind, Location::Vector(n)) if n < 8 => {
                    Some((kind, VECTOR_WORD + n as usize))
                }
                _ => None,
            })
            .map(|a| {
                a.map(|(kind, word)| ScalarArg {
                    tag: crate::value::scalar_tag(kind),
                    word: word as u8,
                    is_bool: kind == ScalarKind::Bool,
                })
            })
            .collect::<Option<Box<[_]>>>()?;
        let ret = match ret {
            UpcallRetKind::Void => None,
            UpcallRetKind::Scalar(kind, reg) => Some((kind, return_word(reg))),
            UpcallRetKind::Group(_) => return None,
        };
        Some(ScalarPath { args, ret })
    }
}

/// Decodes the arguments of a signature with a [`ScalarPath`], runs the closure and encodes
/// its result into `frame` (an error is returned, for the caller's guard to abort on).
///
/// # Safety
/// `frame` holds the registers of a C call of `ctx`'s descriptor type; `fast` is `ctx`'s.
#[inline(always)]
pub(crate) unsafe fn dispatch_scalar(
    ctx: &Context<'_>,
    fast: &ScalarPath,
    frame: &mut UpcallFrame,
) -> Result<()> {
    let words = (frame as *mut UpcallFrame).cast::<u64>();
    let mut inline = [const { MaybeUninit::<Value<'_>>::uninit() }; INLINE_ARGS];
    for (slot, a) in inline.iter_mut().zip(fast.args.iter()) {
        // SAFETY: `a.word` is below 17, a register word of the 192-byte frame (`ScalarPath::of`);
        // `slot` is one of the inline values; `a.tag` is a scalar kind's tag.
        unsafe { write_scalar_value(slot.as_mut_ptr(), *a, words.add(a.word as usize).read()) };
    }
    // SAFETY: the first `args.len()` (at most INLINE_ARGS) slots were written just above.
    let values =
        unsafe { std::slice::from_raw_parts(inline.as_ptr().cast::<Value<'_>>(), fast.args.len()) };
    let args = UpcallArgs {
        values,
        ret: None,
        ctx: (ctx as *const Context<'_>).cast(),
    };
    let result = (ctx.closure)(&args)?;
    match fast.ret {
        None => {
            if !matches!(result, Value::Void) {
                return Err(return_mismatch("void", &result));
            }
        }
        Some((kind, word)) => {
            let bits = result
                .scalar_bits(kind)
                .ok_or_else(|| return_mismatch(kind, &result))?;
            let bits = Native::scalar_return_bits(kind, bits);
            // SAFETY: `word` is a return word of the frame (18..24, `ScalarPath::of`).
            unsafe { words.add(word).write(bits) };
        }
    }
    Ok(())
}

/// The return image of a scalar-path result (0 for `void`), or the mismatch error.
#[cold]
#[inline(never)]
pub(crate) fn scalar_result_bits(fast: Option<&ScalarPath>, result: &Value<'_>) -> Result<u64> {
    match fast.and_then(|f| f.ret) {
        None => match result {
            Value::Void => Ok(0),
            v => Err(return_mismatch("void", v)),
        },
        Some((kind, _)) => match result.scalar_bits(kind) {
            Some(bits) => Ok(bits),
            None => Err(return_mismatch(kind, result)),
        },
    }
}
