//! The x86-64 System V register rules of the upcall fast paths: which signatures take the
//! integer-register path, the register-shape path and the typed free-register path, and the
//! segment write of the register-shape dispatcher.
//!
//! A signature has a register *shape* ([`register_shape`]) when every argument (at most
//! [`SHAPE_ARGS`]) is a scalar or a struct/union of one or two eightbytes passed in argument
//! registers, and the return is `void`, a scalar, or a struct/union returned in at most two
//! registers (rax, rdx, xmm0, xmm1): nothing on the stack, no hidden return pointer. The
//! [`RegisterShape`] records, per argument, a fixed record (no plan moves, no iterators over a
//! `Vec`); the stub jumps to the shape entry for the number of integer and vector argument
//! registers used (rounded up: 0, 2, 4 or 6 and 0, 2, 4 or 8), which stores only those.
//!
//! A struct argument each of whose eightbytes has its own register, in consecutive frame words
//! (both in integer registers, or both in vector registers, in order), is not copied
//! ([`SHAPE_IN_PLACE`]): its segment points into the frame, which lives for the whole upcall,
//! like a copy. Any other struct argument is copied word by word ([`SHAPE_COPIED`]); an
//! eightbyte that is padding only (passed in no register) is copied as zeroes
//! ([`SHAPE_COPIED_LOW`]), so the segment never covers another argument's register or
//! unwritten frame words.
//!
//! The integer-register path ([`int_register_args`]) takes at most [`INT_PATH_ARGS`]
//! arguments: SysV has six integer argument registers, and the context takes the one after
//! the last argument. The free register of a typed stub ([`free_register`]) is where the SysV
//! plan of the signature with one more pointer parameter puts that pointer.
//!
//! The classification is compiled on every host for the dispatchers' unit tests (which decode
//! SysV register frames everywhere); [`write_segment_value`] only where this backend runs.

use crate::abi::{CallPlan, Location, Register, ReturnPlan};
use crate::backend::upcall::{
    RegisterShape, ShapeArg, ShapeRetMove, UpcallArgKind, UpcallRetKind, RET_GROUP, RET_II,
    RET_INT_WORD, RET_IV, RET_SCALAR, RET_VECTOR_WORD, RET_VI, RET_VOID, RET_VV, SHAPE_ARGS,
    SHAPE_COPIED, SHAPE_COPIED_LOW, SHAPE_IN_PLACE, SHAPE_SCALAR, VECTOR_WORD,
};
use crate::layout::FunctionDescriptor;
use crate::layout::{MemoryLayout, ScalarKind};
#[cfg(gatun_backend = "x86_64_sysv")]
use crate::{memory::MemorySegment, value::Value};

/// The most arguments the integer-register path takes.
pub(crate) const INT_PATH_ARGS: usize = 5;

/// The integer-register path's argument count: `Some(n)` when the `n` arguments (at most
/// [`INT_PATH_ARGS`]) are scalars in rdi, rsi, .. in order and the result is `void` or a scalar
/// in rax.
pub(crate) fn int_register_args(args: &[UpcallArgKind], ret: UpcallRetKind) -> Option<usize> {
    let in_order = args.len() <= INT_PATH_ARGS
        && args.iter().enumerate().all(
            |(i, a)| matches!(*a, UpcallArgKind::Scalar(_, Location::Int(n)) if n as usize == i),
        );
    let ret_in_rax = matches!(
        ret,
        UpcallRetKind::Void | UpcallRetKind::Scalar(_, Register::Int(0))
    );
    (in_order && ret_in_rax).then_some(args.len())
}

/// The integer argument register (0..6: rdi, rsi, rdx, rcx, r8, r9) of a pointer parameter
/// appended to `descriptor`'s, whose SysV plan is `plan`, if it is in a register and adds no
/// stack bytes.
pub(crate) fn free_register(descriptor: &FunctionDescriptor, plan: &CallPlan) -> Option<usize> {
    let mut extended: Vec<MemoryLayout> = descriptor.argument_layouts().to_vec();
    extended.push(crate::layout::ValueLayout::ADDRESS.into());
    let with_context = match descriptor.return_layout() {
        Some(r) => FunctionDescriptor::of(r.clone(), extended),
        None => FunctionDescriptor::of_void(extended),
    };
    let ext = super::classify::plan(&with_context, None).ok()?;
    match ext.args.last().map(|a| a.moves.as_slice()) {
        Some([m]) if ext.stack_bytes == plan.stack_bytes => match m.to {
            Location::Int(n) => Some(n as usize),
            _ => None,
        },
        _ => None,
    }
}

/// The frame word of an argument location, if it is an argument register.
fn arg_word(loc: Location) -> Option<u8> {
    match loc {
        Location::Int(n) if n < 6 => Some(n),
        Location::Vector(n) if n < 8 => Some(VECTOR_WORD as u8 + n),
        _ => None,
    }
}

/// The frame word of a return register (SysV rax, rdx, xmm0, xmm1).
fn ret_word(r: Register) -> Option<u8> {
    match r {
        Register::Int(0) => Some(RET_INT_WORD as u8),
        Register::Int(1) => Some(RET_INT_WORD as u8 + 1),
        Register::Vector(n) if n < 2 => Some(RET_VECTOR_WORD as u8 + n),
        _ => None,
    }
}

/// The register shape of a signature by the SysV register rules (see the module
/// documentation), or `None`.
pub(crate) fn register_shape(
    args: &[UpcallArgKind],
    ret: UpcallRetKind,
    plan: &CallPlan,
) -> Option<RegisterShape> {
    if args.len() > SHAPE_ARGS || plan.hidden_return_pointer.is_some() {
        return None;
    }
    let mut path = RegisterShape {
        len: args.len() as u8,
        class: RET_VOID,
        gprs: 0,
        vectors: 0,
        args: [ShapeArg::default(); SHAPE_ARGS],
        ret_kind: ScalarKind::I32,
        ret_word: 0,
        ret_size: 0,
        ret_moves: [ShapeRetMove::default(); 2],
        ret_moves_len: 0,
    };
    let (mut gprs, mut vectors) = (0u8, 0u8);
    let mut used = |w: u8| {
        if w < VECTOR_WORD as u8 {
            gprs = gprs.max(w + 1);
        } else {
            vectors = vectors.max(w - VECTOR_WORD as u8 + 1);
        }
    };
    for ((kind, ap), slot) in args.iter().zip(&plan.args).zip(path.args.iter_mut()) {
        *slot = match *kind {
            UpcallArgKind::Scalar(k, loc) => {
                let word = arg_word(loc)?;
                used(word);
                ShapeArg {
                    kind: SHAPE_SCALAR,
                    tag: crate::value::scalar_tag(k),
                    word,
                    word2: word,
                    is_bool: k == ScalarKind::Bool,
                    size: 0,
                }
            }
            UpcallArgKind::Group { size, align } => {
                let m = &ap.moves;
                if size == 0 || size > 16 || m.is_empty() || m.len() > 2 || align > 16 {
                    return None;
                }
                let w0 = arg_word(m[0].to)?;
                let w1 = match m.get(1) {
                    Some(m1) => arg_word(m1.to)?,
                    None => w0,
                };
                used(w0);
                used(w1);
                // The eightbytes in order: the first at 0 (8 bytes if there is a second),
                // the second at 8, within the struct.
                let shaped = m[0].offset == 0
                    && m[m.len() - 1].offset as usize + m[m.len() - 1].size as usize <= size
                    && (m.len() == 1 || (m[0].size == 8 && m[1].offset == 8));
                if !shaped {
                    return None;
                }
                // In place only when every eightbyte has its own register, in consecutive
                // frame words: a segment over a padding-only eightbyte's word would cover
                // the next frame word (another argument's register, or stale data).
                let in_place =
                    align <= 8 && m.len() == size.div_ceil(8) && (m.len() == 1 || w1 == w0 + 1);
                ShapeArg {
                    // Two eightbytes in one move: the second is padding only (no
                    // register), copied as zeroes.
                    kind: match () {
                        _ if in_place => SHAPE_IN_PLACE,
                        _ if m.len() < size.div_ceil(8) => SHAPE_COPIED_LOW,
                        _ => SHAPE_COPIED,
                    },
                    tag: 0,
                    word: w0,
                    word2: w1,
                    is_bool: false,
                    size: size as u8,
                }
            }
            UpcallArgKind::ByReference { .. } => return None,
        };
    }
    path.gprs = match gprs {
        0 => 0,
        1 | 2 => 2,
        3 | 4 => 4,
        _ => 6,
    };
    path.vectors = match vectors {
        0 => 0,
        1 | 2 => 2,
        3 | 4 => 4,
        _ => 8,
    };
    let class = match (ret, &plan.ret) {
        (UpcallRetKind::Void, _) => RET_VOID,
        (UpcallRetKind::Scalar(k, r), _) => {
            path.ret_kind = k;
            path.ret_word = ret_word(r)?;
            RET_SCALAR
        }
        (UpcallRetKind::Group(size), ReturnPlan::Registers(moves)) => {
            if size > 16 || moves.len() > 2 {
                return None;
            }
            path.ret_size = size as u8;
            for (m, slot) in moves.iter().zip(path.ret_moves.iter_mut()) {
                if m.offset as usize + m.size as usize > size || m.size == 0 || m.size > 8 {
                    return None;
                }
                *slot = ShapeRetMove {
                    word: ret_word(m.from)?,
                    offset: m.offset as u8,
                    size: m.size,
                };
            }
            path.ret_moves_len = moves.len() as u8;
            let pair = |a: u8, b: u8| (a, b) == (path.ret_moves[0].word, path.ret_moves[1].word);
            let (i0, v0) = (RET_INT_WORD as u8, RET_VECTOR_WORD as u8);
            let whole = size == 16
                && moves.len() == 2
                && (
                    moves[0].offset,
                    moves[0].size,
                    moves[1].offset,
                    moves[1].size,
                ) == (0, 8, 8, 8);
            match () {
                _ if whole && pair(i0, i0 + 1) => RET_II,
                _ if whole && pair(i0, v0) => RET_IV,
                _ if whole && pair(v0, i0) => RET_VI,
                _ if whole && pair(v0, v0 + 1) => RET_VV,
                _ => RET_GROUP,
            }
        }
        (UpcallRetKind::Group(_), _) => return None,
    };
    path.class = class;
    Some(path)
}

/// Writes `Value::Segment` of `len` bytes at `ptr` into `slot` with its first 16 bytes (the
/// tag word and the segment's first field) as one 16-byte store: a closure that copies the
/// whole `Value` (`Ok(args[0])`) loads those 16 bytes at once, and a load spanning two smaller
/// stores cannot be forwarded from them (a store-forwarding stall). SysV's
/// [`UpcallEntries::write_segment_value`](crate::backend::upcall::UpcallEntries::write_segment_value).
///
/// # Safety
/// `slot` is valid for writes of a `Value`; `ptr .. ptr + len` is a valid segment for the
/// upcall (non-null).
#[cfg(gatun_backend = "x86_64_sysv")]
#[inline(always)]
pub(crate) unsafe fn write_segment_value(slot: *mut Value<'_>, ptr: *mut u8, len: usize) {
    // SAFETY: `Value` is `#[repr(C, u8)]`: the tag in its first byte (the rest of the first
    // word padding), the segment's two fields from offset 8 in `segment_fields`' order (the
    // unit tests compare the result with the portable write). The assembly stores the tag word
    // and the segment's first field (the pointer, with its provenance, or the length) as one
    // 16 bytes, what two 8-byte writes of them would leave; the second field is written here.
    unsafe {
        let tag = crate::value::value_tag(&Value::Segment(MemorySegment::NULL)) as usize;
        let (first, second) = segment_fields(ptr, len);
        std::arch::asm!(
            "movq {lo}, {tag}",
            "movq {hi}, {first}",
            "punpcklqdq {lo}, {hi}",
            "movups xmmword ptr [{slot}], {lo}",
            tag = in(reg) tag,
            first = in(reg) first,
            slot = in(reg) slot,
            lo = out(xmm_reg) _,
            hi = out(xmm_reg) _,
            options(nostack, preserves_flags),
        );
        slot.cast::<*mut u8>().add(2).write(second);
    }
}

/// The words at offsets 8 and 16 of `Value::Segment` over `len` bytes at `ptr` (non-null):
/// `MemorySegment`'s pointer and length in the order its (Rust) layout puts them (the length
/// as a pointer without provenance).
#[cfg(gatun_backend = "x86_64_sysv")]
#[inline(always)]
fn segment_fields(ptr: *mut u8, len: usize) -> (*mut u8, *mut u8) {
    // A segment of length 1 at address 2: is the word at offset 8 the pointer (or the length)?
    // Folded by the compiler.
    // SAFETY: never dereferenced; only its layout is inspected.
    let probe = Value::Segment(unsafe {
        MemorySegment::from_raw_parts(std::ptr::without_provenance_mut(2), 1)
    });
    // SAFETY: `Value` is 24 bytes, 8-aligned; its second word read as an integer.
    let ptr_first = unsafe { (&probe as *const Value<'_>).cast::<u64>().add(1).read() } == 2;
    let len = std::ptr::without_provenance_mut(len);
    if ptr_first {
        (ptr, len)
    } else {
        (len, ptr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::FunctionDescriptor as FD;
    use crate::layout::ValueLayout as V;

    /// The SysV plan of `d`, and its arguments and result as the upcall layer sees them.
    fn kinds(d: &FD) -> (CallPlan, Vec<UpcallArgKind>, UpcallRetKind) {
        let plan = super::super::classify::plan(d, None).unwrap();
        let args = d
            .argument_layouts()
            .iter()
            .zip(&plan.args)
            .map(|(l, ap)| UpcallArgKind::of(l, ap))
            .collect();
        let ret = UpcallRetKind::of(d.return_layout(), &plan.ret);
        (plan, args, ret)
    }

    /// The register shape of `d` by the SysV plan.
    fn shape(d: &FD) -> Option<RegisterShape> {
        let (plan, args, ret) = kinds(d);
        register_shape(&args, ret, &plan)
    }

    fn st<const N: usize>(members: [V; N]) -> MemoryLayout {
        MemoryLayout::c_struct(members).unwrap()
    }

    fn pad(n: usize) -> MemoryLayout {
        MemoryLayout::padding_layout(n).unwrap()
    }

    #[test]
    fn shape_path_is_taken_by_register_signatures_only() {
        let point = st([V::F64, V::F64]);
        let p = shape(&FD::of(point.clone(), [point.clone()])).unwrap();
        assert_eq!((p.gprs, p.vectors), (0, 2));
        assert_eq!(p.args[0].kind, SHAPE_IN_PLACE);
        assert_eq!(p.class, RET_VV);
        // INTEGER + SSE: not consecutive frame words, copied; returned in rax and xmm0.
        let mixed = st([V::I64, V::F64]);
        let p = shape(&FD::of(mixed.clone(), [V::I32.into(), mixed.clone()])).unwrap();
        assert_eq!((p.gprs, p.vectors), (2, 2));
        assert_eq!(
            (p.args[0].kind, p.args[1].kind),
            (SHAPE_SCALAR, SHAPE_COPIED)
        );
        assert_eq!(p.class, RET_IV);
        // 12 bytes in rax and rdx (8 + 4): the general return moves.
        let twelve = st([V::I32; 3]);
        let p = shape(&FD::of(twelve.clone(), [twelve])).unwrap();
        assert_eq!(p.args[0].kind, SHAPE_IN_PLACE);
        assert_eq!(p.class, RET_GROUP);
        assert!(shape(&FD::of(V::F64, [V::F32, V::BOOL])).is_some());
        assert!(shape(&FD::of_void([V::I64; 8])).is_none()); // two on the stack
        assert!(shape(&FD::of_void([V::F64; 9])).is_none()); // more than SHAPE_ARGS
        assert!(shape(&FD::of_void([st([V::I64; 3])])).is_none()); // MEMORY class
        assert!(shape(&FD::of(st([V::I64; 3]), [])).is_none()); // hidden return pointer
        assert!(shape(&FD::of_void([V::F64; 7])).is_some_and(|p| p.vectors == 8));
    }

    #[test]
    fn padding_only_eightbytes_are_copied_and_whole_ones_stay_in_place() {
        // `{ long; 8 bytes of padding }`: one register (rdi); the long after it is in rsi.
        let low = MemoryLayout::c_struct([V::I64.into(), pad(8)]).unwrap();
        let p = shape(&FD::of(V::I64, [low, V::I64.into()])).unwrap();
        assert_eq!(
            (p.args[0].kind, p.args[1].kind),
            (SHAPE_COPIED_LOW, SHAPE_SCALAR)
        );
        assert_eq!(p.gprs, 2);
        // A one-eightbyte struct and a whole two-eightbyte one stay in place.
        let p = shape(&FD::of_void([st([V::I32, V::I32]), st([V::I64, V::I64])])).unwrap();
        assert_eq!(
            (p.args[0].kind, p.args[1].kind),
            (SHAPE_IN_PLACE, SHAPE_IN_PLACE)
        );
    }

    #[test]
    fn integer_register_args_are_in_order_integer_scalars_returning_in_rax() {
        let n = |d: &FD| {
            let (_, args, ret) = kinds(d);
            int_register_args(&args, ret)
        };
        assert_eq!(n(&FD::of(V::I32, [V::I32, V::ADDRESS])), Some(2));
        assert_eq!(n(&FD::of_void([])), Some(0));
        assert_eq!(n(&FD::of_void([V::I64; 5])), Some(5));
        assert_eq!(n(&FD::of_void([V::I64; 6])), None); // no register left for the context
        assert_eq!(n(&FD::of(V::F64, [V::I32])), None); // result in xmm0
        assert_eq!(n(&FD::of_void([V::F64, V::I32])), None); // not in order
    }

    #[test]
    fn the_free_register_follows_the_arguments() {
        let free = |d: &FD| free_register(d, &super::super::classify::plan(d, None).unwrap());
        assert_eq!(free(&FD::of(V::I32, [V::I32, V::F64])), Some(1));
        assert_eq!(free(&FD::of_void([])), Some(0));
        // A MEMORY return takes rdi for the hidden pointer.
        assert_eq!(free(&FD::of(st([V::I64; 3]), [V::I32])), Some(2));
        assert_eq!(free(&FD::of_void([V::I64; 6])), None); // on the stack
    }

    #[cfg(gatun_backend = "x86_64_sysv")]
    #[test]
    fn segment_values_written_in_one_piece_equal_the_portable_ones() {
        let mut bytes = [0u8; 24];
        for len in [0, 1, 16, usize::MAX] {
            let mut slot = std::mem::MaybeUninit::<Value<'_>>::uninit();
            // SAFETY: a writable slot; the segment is never dereferenced.
            let v = unsafe {
                write_segment_value(slot.as_mut_ptr(), bytes.as_mut_ptr(), len);
                slot.assume_init()
            };
            // SAFETY: as above.
            let expected =
                Value::Segment(unsafe { MemorySegment::from_raw_parts(bytes.as_mut_ptr(), len) });
            assert_eq!(v, expected);
            match v {
                Value::Segment(s) => {
                    assert_eq!((s.as_ptr(), s.byte_size()), (bytes.as_mut_ptr(), len))
                }
                _ => unreachable!(),
            }
        }
    }
}
