//! The register path ([`Path::Registers`](super::super::context::Path::Registers)): scalars
//! and structs passed in registers (at most [`INLINE_ARGS`] arguments), the return `void`, a
//! scalar or a struct in registers. Struct arguments are copied from their register words
//! into a buffer on the dispatcher's stack.
//!
//! Invariant: a [`RegisterPath`]'s moves lie inside the 128-byte copy buffer and inside each
//! struct, and name only register words of the frame (checked when it is made).

use std::mem::MaybeUninit;

use super::super::abort::{group_return_mismatch, guard, return_mismatch};
use super::super::context::Context;
use super::super::UpcallArgs;
use super::{write_scalar_value, ScalarArg, INLINE_ARGS};
use crate::abi::{CallPlan, Location, ReturnPlan};
use crate::backend::upcall::{
    return_word, UpcallArgKind, UpcallEntries, UpcallFrame, UpcallRetKind, RET_VECTOR_WORD,
    VECTOR_WORD,
};
use crate::backend::Native;
use crate::backend::{load_low_bytes, store_low_bytes};
use crate::error::Result;
use crate::layout::ScalarKind;
use crate::memory::MemorySegment;
use crate::value::Value;

/// One register part of a struct argument: `size` bytes of frame word `word` go to byte `dst`
/// of the dispatcher's copy buffer.
#[derive(Debug, Clone, Copy)]
struct RegisterMove {
    word: u8,
    size: u8,
    dst: u16,
}

/// One argument of a [`RegisterPath`].
#[derive(Debug, Clone, Copy)]
enum RegisterArg {
    Scalar(ScalarArg),
    /// A struct copy at byte `offset` of the copy buffer, `size` bytes.
    Group {
        offset: u16,
        size: u16,
    },
}

/// Bytes of the dispatcher's stack buffer for register-passed struct argument copies (all of
/// SysV's 14 argument registers, or AAPCS64's 16, fit).
const REGISTER_COPY_BYTES: usize = 128;

/// The stack buffer of [`REGISTER_COPY_BYTES`] (16-aligned: no register-passed struct has a
/// larger alignment, since its size is a multiple of it and at most 16 bytes per argument
/// under the SysV rules, 64 under AAPCS64's HFA rules with 16-byte members at the most).
#[repr(C, align(16))]
struct RegisterCopies([MaybeUninit<u8>; REGISTER_COPY_BYTES]);

/// The upcall path of a signature whose arguments (at most [`INLINE_ARGS`]) are scalars and
/// structs passed in registers and whose return is `void`, a scalar or a struct in registers:
/// struct arguments are copied from their registers into a buffer on the dispatcher's stack
/// (they live for the upcall, like a linker-stack frame), and a struct result is loaded into
/// the return registers straight from the segment the closure returns. No linker-stack frame,
/// no per-move plan interpretation.
#[derive(Debug)]
pub(crate) struct RegisterPath {
    /// The arguments.
    args: Box<[RegisterArg]>,
    /// The register parts of the struct arguments.
    moves: Box<[RegisterMove]>,
    /// For a struct return: `size` bytes at `dst` of the result go to frame word `word` (a
    /// return register word); `dst` is the offset in the struct here.
    ret_moves: Box<[RegisterMove]>,
    /// Whether some struct argument has bytes no move writes (padding): the copy buffer is
    /// then zeroed before the moves, so the closure reads zeroes there.
    pub(crate) padded: bool,
}

impl RegisterPath {
    /// The register path of a signature, or `None` (stack or by-reference arguments, a
    /// memory return, too many arguments or copies over [`REGISTER_COPY_BYTES`]).
    pub(crate) fn of(
        args: &[UpcallArgKind],
        ret: UpcallRetKind,
        plan: &CallPlan,
    ) -> Option<RegisterPath> {
        if args.len() > INLINE_ARGS
            || plan.hidden_return_pointer.is_some()
            || (matches!(ret, UpcallRetKind::Group(_))
                && !matches!(plan.ret, ReturnPlan::Registers(_)))
        {
            return None;
        }
        let word = |loc: Location| match loc {
            Location::Int(n) if (n as usize) < VECTOR_WORD => Some(n as usize),
            Location::Vector(n) if n < 8 => Some(VECTOR_WORD + n as usize),
            _ => None,
        };
        let mut used = 0usize;
        let mut padded = false;
        let mut moves = Vec::new();
        let mut out = Vec::with_capacity(args.len());
        for (kind, ap) in args.iter().zip(&plan.args) {
            out.push(match *kind {
                UpcallArgKind::Scalar(kind, loc) => RegisterArg::Scalar(ScalarArg {
                    tag: crate::value::scalar_tag(kind),
                    word: word(loc)? as u8,
                    is_bool: kind == ScalarKind::Bool,
                }),
                UpcallArgKind::Group { size, align } => {
                    let offset = used.checked_next_multiple_of(align)?;
                    used = offset.checked_add(size)?;
                    if used > REGISTER_COPY_BYTES || align > 16 {
                        return None;
                    }
                    // The moves of one struct do not overlap: fewer bytes than its size leave
                    // padding the moves do not write.
                    let moved: usize = ap.moves.iter().map(|m| m.size as usize).sum();
                    padded |= moved < size;
                    for m in &ap.moves {
                        if m.offset as usize + m.size as usize > size {
                            return None;
                        }
                        moves.push(RegisterMove {
                            word: word(m.to)? as u8,
                            size: m.size,
                            dst: (offset + m.offset as usize) as u16,
                        });
                    }
                    RegisterArg::Group {
                        offset: offset as u16,
                        size: size as u16,
                    }
                }
                UpcallArgKind::ByReference { .. } => return None,
            });
        }
        let ret_moves = match (&plan.ret, ret) {
            (ReturnPlan::Registers(ms), UpcallRetKind::Group(size)) => ms
                .iter()
                .map(|m| {
                    (m.offset as usize + m.size as usize <= size).then_some(RegisterMove {
                        word: return_word(m.from) as u8,
                        size: m.size,
                        dst: m.offset as u16,
                    })
                })
                .collect::<Option<Box<[_]>>>()?,
            _ => Box::new([]),
        };
        Some(RegisterPath {
            args: out.into(),
            moves: moves.into(),
            ret_moves,
            padded,
        })
    }
}

/// Decodes the arguments of a signature with a [`RegisterPath`], runs the closure and encodes
/// its result into `frame` (an error is returned, for the caller's guard to abort on).
///
/// # Safety
/// `frame` holds the registers of a C call of `ctx`'s descriptor type; `regs` is `ctx`'s.
#[inline(always)]
pub(crate) unsafe fn dispatch_registers(
    ctx: &Context<'_>,
    regs: &RegisterPath,
    frame: &mut UpcallFrame,
) -> Result<()> {
    let words = (frame as *mut UpcallFrame).cast::<u64>();
    let mut copies = RegisterCopies([MaybeUninit::uninit(); REGISTER_COPY_BYTES]);
    let base = copies.0.as_mut_ptr().cast::<u8>();
    if regs.padded {
        // SAFETY: the buffer has `REGISTER_COPY_BYTES` bytes.
        unsafe { base.write_bytes(0, REGISTER_COPY_BYTES) };
    }
    for m in regs.moves.iter() {
        // SAFETY: `m.word` is a register word of the frame and `m.dst + m.size` lies inside
        // the buffer (`RegisterPath::of`).
        // Whole eightbytes (the common case) without the per-size dispatch.
        unsafe {
            let (dst, bits) = (base.add(m.dst as usize), words.add(m.word as usize).read());
            if m.size == 8 {
                dst.cast::<u64>().write_unaligned(bits);
            } else {
                store_low_bytes(dst, bits, m.size as usize);
            }
        };
    }
    let mut inline = [const { MaybeUninit::<Value<'_>>::uninit() }; INLINE_ARGS];
    for (slot, a) in inline.iter_mut().zip(regs.args.iter()) {
        match *a {
            // SAFETY: as in `dispatch_scalar`.
            RegisterArg::Scalar(s) => unsafe {
                write_scalar_value(slot.as_mut_ptr(), s, words.add(s.word as usize).read())
            },
            RegisterArg::Group { offset, size } => {
                // SAFETY: the copy lies inside the buffer, which outlives the segment (the
                // closure cannot keep it: `UpcallArgs`); its bytes were written by the moves
                // above, or zeroed before them (bytes no move writes: `padded`).
                slot.write(Value::Segment(unsafe {
                    MemorySegment::from_raw_parts(base.add(offset as usize), size as usize)
                }));
            }
        }
    }
    // SAFETY: the first `args.len()` (at most INLINE_ARGS) slots were written just above.
    let values =
        unsafe { std::slice::from_raw_parts(inline.as_ptr().cast::<Value<'_>>(), regs.args.len()) };
    // The largest register-returned struct: an HFA of four doubles in v0..v3 (AAPCS64).
    let mut image = [0u64; 4];
    let image_ptr = image.as_mut_ptr().cast::<u8>();
    let ret = match ctx.ret {
        UpcallRetKind::Group(size) => {
            // SAFETY: a register-returned struct has at most 32 bytes; `image` outlives the
            // segment, which the closure cannot keep, and is read below only through
            // `image_ptr`.
            Some(unsafe { MemorySegment::from_raw_parts(image_ptr, size.min(32)) })
        }
        _ => None,
    };
    let args = UpcallArgs {
        values,
        ret,
        ctx: (ctx as *const Context<'_>).cast(),
    };
    let result = (ctx.closure)(&args)?;
    match ctx.ret {
        UpcallRetKind::Void => {
            if !matches!(result, Value::Void) {
                return Err(return_mismatch("void", &result));
            }
        }
        UpcallRetKind::Scalar(k, reg) => {
            let bits = result
                .scalar_bits(k)
                .ok_or_else(|| return_mismatch(k, &result))?;
            frame.set_return(reg, Native::scalar_return_bits(k, bits));
        }
        UpcallRetKind::Group(size) => {
            let src: *const u8 = match result {
                Value::Void => image_ptr,
                Value::Segment(s) if s.byte_size() >= size => s.as_ptr(),
                v => return Err(group_return_mismatch(size, &v)),
            };
            for m in regs.ret_moves.iter() {
                // SAFETY: a return move lies inside the struct (`dst + size <= size of the
                // layout`, `RegisterPath::of`), which `src` holds: the closure's segment of at
                // least that size, or the 32-byte image; `m.word` is a return word of the
                // frame.
                unsafe {
                    let p = src.add(m.dst as usize);
                    let bits = if m.size == 8 {
                        p.cast::<u64>().read_unaligned()
                    } else {
                        load_low_bytes(p, m.size as usize)
                    };
                    let vector = m.word as usize >= RET_VECTOR_WORD;
                    let bits = Native::group_return_bits(vector, m.size as usize, bits);
                    words.add(m.word as usize).write(bits);
                }
            }
        }
    }
    Ok(())
}

/// [`dispatch_registers`] under [`guard`], out of line (inlined, it made the scalar path's
/// code in the caller larger and slower on AArch64).
///
/// # Safety
/// As [`dispatch_registers`].
#[inline(never)]
pub(crate) unsafe fn run_registers(
    ctx: &Context<'_>,
    regs: &RegisterPath,
    frame: &mut UpcallFrame,
) {
    // SAFETY: forwarded.
    guard(&ctx.descriptor, || unsafe {
        dispatch_registers(ctx, regs, frame)
    })
}
