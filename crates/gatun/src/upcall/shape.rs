//! The register-shape path of the dynamic upcall dispatcher (taken by x86-64 System V stubs).
//!
//! A signature has a register *shape* when every argument (at most [`SHAPE_ARGS`]) is a scalar
//! or a struct/union of one or two eightbytes passed in argument registers, and the return is
//! `void`, a scalar, or a struct/union returned in at most two registers: nothing on the stack,
//! no hidden return pointer. For such a signature the [`ShapePath`] precomputes, per argument,
//! a fixed record (no plan moves, no iterators over a `Vec`), and the dispatcher is a
//! [`gatun_upcall_dispatch_shape`] monomorphised for the argument count and the return class,
//! whose address is the context's first word. The stub jumps to the x86-64 entry for the
//! number of integer and vector argument registers used (rounded up), which stores only those
//! into an [`super::UpcallFrame`], calls the dispatcher and loads the return registers from the frame.
//!
//! A struct argument each of whose eightbytes has its own register, in consecutive frame words
//! (both in integer registers, or both in vector registers, in order), is not copied: its
//! segment points into the frame, which lives for the whole upcall, like a copy. Any other
//! struct argument is copied word by word into a 16-byte slot of a buffer on the dispatcher's
//! stack; an eightbyte that is padding only (passed in no register) is copied as zeroes, so
//! the segment never covers another argument's register or unwritten frame words.
//!
//! # Invariants
//! - Every `word` of a [`ShapeArg`] is an argument-register word of the frame (below 17), and a
//!   struct's segment lies inside the frame's register words or inside its copy slot.
//! - Every [`ShapeRetMove`] lies inside the return layout (`offset + size <= ret_size`) and
//!   names a return word of the frame (18..22).

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::{
    abort_panicked, abort_upcall, args_context, return_mismatch, write_scalar_value, ArgKind,
    Context, RetKind, ScalarArg, UpcallArgs, RET_INT_WORD, RET_VECTOR_WORD, VECTOR_WORD,
};
use crate::abi::{CallPlan, Location, Register, ReturnPlan};
use crate::backend::load_low_bytes;
use crate::error::Result;
use crate::layout::ScalarKind;
use crate::memory::MemorySegment;
use crate::value::Value;

/// The most arguments the register-shape path takes.
pub(super) const SHAPE_ARGS: usize = 8;

/// [`ShapeArg::kind`]: a scalar in frame word `word`.
const SCALAR: u8 = 0;
/// [`ShapeArg::kind`]: a struct whose bytes are frame words `word`, `word + 1` (in place).
const IN_PLACE: u8 = 1;
/// [`ShapeArg::kind`]: a struct whose eightbytes are frame words `word` and `word2` (copied).
const COPIED: u8 = 2;
/// [`ShapeArg::kind`]: a struct of two eightbytes whose first is frame word `word` and whose
/// second is padding only (passed in no register): copied, the second eightbyte zeroed.
const COPIED_LOW: u8 = 3;

/// [`ShapePath`]'s return class: `void`.
const RET_VOID: u8 = 0;
/// [`ShapePath`]'s return class: a scalar in frame word `ret_word`.
const RET_SCALAR: u8 = 1;
/// [`ShapePath`]'s return class: a struct in registers, per `ret_moves`.
const RET_GROUP: u8 = 2;
/// [`ShapePath`]'s return classes of a 16-byte struct returned as two whole eightbytes, bytes
/// 0..8 and 8..16: in rax and rdx, rax and xmm0, xmm0 and rax, xmm0 and xmm1 (constant return
/// words: nothing of the context is read after the closure).
const RET_II: u8 = 3;
const RET_IV: u8 = 4;
const RET_VI: u8 = 5;
const RET_VV: u8 = 6;

/// The frame words of the two eightbytes of return class `C` (one of [`RET_II`]..[`RET_VV`]).
const fn pair_words(c: u8) -> (usize, usize) {
    match c {
        RET_II => (RET_INT_WORD, RET_INT_WORD + 1),
        RET_IV => (RET_INT_WORD, RET_VECTOR_WORD),
        RET_VI => (RET_VECTOR_WORD, RET_INT_WORD),
        _ => (RET_VECTOR_WORD, RET_VECTOR_WORD + 1),
    }
}

/// One argument of a [`ShapePath`].
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ShapeArg {
    /// [`SCALAR`], [`IN_PLACE`], [`COPIED`] or [`COPIED_LOW`].
    kind: u8,
    /// A scalar's `Value` tag.
    tag: u8,
    /// The frame word of the scalar, or of the struct's first eightbyte.
    word: u8,
    /// The frame word of a copied struct's second eightbyte (its first, for one eightbyte).
    word2: u8,
    /// Whether the scalar is a `bool` (normalised to 0 or 1).
    is_bool: bool,
    /// A struct's size in bytes (1..=16).
    size: u8,
}

/// One register part of a struct return: `size` bytes at `offset` of the result go to frame
/// word `word`.
#[derive(Debug, Clone, Copy, Default)]
struct ShapeRetMove {
    word: u8,
    offset: u8,
    size: u8,
}

/// The precomputed decoding of a register-shape signature (see the module documentation).
#[derive(Debug, Clone, Copy)]
pub(super) struct ShapePath {
    /// The dispatcher.
    pub(super) dispatch: ShapeDispatch,
    /// The return class the dispatcher is monomorphised for ([`RET_VOID`]..[`RET_VV`]).
    class: u8,
    /// Integer argument registers the entry stores (rdi.., rounded up to 0, 2, 4 or 6).
    pub(super) gprs: u8,
    /// Vector argument registers the entry stores (xmm0.., rounded up to 0, 2, 4 or 8).
    pub(super) vectors: u8,
    args: [ShapeArg; SHAPE_ARGS],
    /// A scalar return's kind.
    ret_kind: ScalarKind,
    /// A scalar return's frame word.
    ret_word: u8,
    /// A struct return's size in bytes (at most 16).
    ret_size: u8,
    /// A struct return's moves (the first `ret_moves_len`).
    ret_moves: [ShapeRetMove; 2],
    ret_moves_len: u8,
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

impl ShapePath {
    /// The register-shape path of a signature (x86-64 System V register rules), or `None`.
    pub(super) fn of(args: &[ArgKind], ret: RetKind, plan: &CallPlan) -> Option<ShapePath> {
        if args.len() > SHAPE_ARGS || plan.hidden_return_pointer.is_some() {
            return None;
        }
        let mut path = ShapePath {
            dispatch: gatun_upcall_dispatch_shape::<0, RET_VOID>,
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
                ArgKind::Scalar(k, loc) => {
                    let word = arg_word(loc)?;
                    used(word);
                    ShapeArg {
                        kind: SCALAR,
                        tag: crate::value::scalar_tag(k),
                        word,
                        word2: word,
                        is_bool: k == ScalarKind::Bool,
                        size: 0,
                    }
                }
                ArgKind::Group { size, align } => {
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
                            _ if in_place => IN_PLACE,
                            _ if m.len() < size.div_ceil(8) => COPIED_LOW,
                            _ => COPIED,
                        },
                        tag: 0,
                        word: w0,
                        word2: w1,
                        is_bool: false,
                        size: size as u8,
                    }
                }
                ArgKind::ByReference { .. } => return None,
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
            (RetKind::Void, _) => RET_VOID,
            (RetKind::Scalar(k, r), _) => {
                path.ret_kind = k;
                path.ret_word = ret_word(r)?;
                RET_SCALAR
            }
            (RetKind::Group(size), ReturnPlan::Registers(moves)) => {
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
                let pair =
                    |a: u8, b: u8| (a, b) == (path.ret_moves[0].word, path.ret_moves[1].word);
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
            (RetKind::Group(_), _) => return None,
        };
        path.class = class;
        path.dispatch = shape_dispatcher(args.len(), class);
        Some(path)
    }
}

/// A register-shape dispatcher: `(context, frame)`, the frame seen as 64-bit words.
pub(super) type ShapeDispatch = unsafe extern "C" fn(*const c_void, *mut u64);

/// The shape dispatcher for `n` arguments (at most [`SHAPE_ARGS`]) and a return class.
fn shape_dispatcher(n: usize, class: u8) -> ShapeDispatch {
    macro_rules! by_class {
        ($n:literal) => {
            match class {
                RET_VOID => gatun_upcall_dispatch_shape::<$n, RET_VOID>,
                RET_SCALAR => gatun_upcall_dispatch_shape::<$n, RET_SCALAR>,
                RET_II => gatun_upcall_dispatch_shape::<$n, RET_II>,
                RET_IV => gatun_upcall_dispatch_shape::<$n, RET_IV>,
                RET_VI => gatun_upcall_dispatch_shape::<$n, RET_VI>,
                RET_VV => gatun_upcall_dispatch_shape::<$n, RET_VV>,
                _ => gatun_upcall_dispatch_shape::<$n, RET_GROUP>,
            }
        };
    }
    match n {
        0 => by_class!(0),
        1 => by_class!(1),
        2 => by_class!(2),
        3 => by_class!(3),
        4 => by_class!(4),
        5 => by_class!(5),
        6 => by_class!(6),
        7 => by_class!(7),
        _ => by_class!(8),
    }
}

/// Writes `Value::Segment` of `len` bytes at `ptr` into `slot`, on x86-64 with its first 16
/// bytes (the tag word and the pointer) as one 16-byte store: a closure that copies the whole
/// `Value` (`Ok(args[0])`) loads those 16 bytes at once, and a load spanning two smaller stores
/// cannot be forwarded from them (a stall of about 6 ns per upcall, measured).
///
/// # Safety
/// `slot` is valid for writes of a `Value`; `ptr .. ptr + len` is a valid segment for the
/// upcall (non-null).
#[inline(always)]
unsafe fn write_segment_value(slot: *mut Value<'_>, ptr: *mut u8, len: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `Value` is `#[repr(C, u8)]`: the tag in its first byte (the rest of the first
    // word padding), the segment's two fields from offset 8 in `segment_words`' order (the
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
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    // SAFETY: the caller's contract.
    unsafe {
        slot.write(Value::Segment(MemorySegment::from_raw_parts(ptr, len)))
    };
}

/// The words at offsets 8 and 16 of `Value::Segment` over `len` bytes at `ptr` (non-null):
/// `MemorySegment`'s pointer and length in the order its (Rust) layout puts them (the length
/// as a pointer without provenance).
#[cfg(all(target_arch = "x86_64", not(miri)))]
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

/// The copy slots of struct arguments that are not in consecutive frame words (16 bytes each,
/// 16-aligned: no register-passed struct has a larger alignment).
#[repr(C, align(16))]
struct Copies<const N: usize>([[MaybeUninit<u64>; 2]; N]);

/// The register-shape dispatcher for `N` arguments and return class `C`: builds the `N`
/// [`Value`]s from the frame's argument words per the context's [`ShapePath`], runs the
/// closure (a panic or an error aborts, never unwinds), and writes its result into the
/// frame's return words. The entry loads rax, rdx, xmm0, xmm1 from them.
///
/// # Safety
/// Called by the x86-64 System V shape entry (or a test) with the address of a live context
/// whose `shape` dispatcher is this function and `frame` an exclusive [`super::UpcallFrame`]
/// whose argument-register words hold the registers of a C call of the stub's descriptor type.
pub(super) unsafe extern "C" fn gatun_upcall_dispatch_shape<const N: usize, const C: u8>(
    ctx: *const c_void,
    frame: *mut u64,
) {
    // SAFETY: the entry passes its frame on its stack (caller).
    unsafe { std::hint::assert_unchecked(!frame.is_null()) };
    // SAFETY: the stub's code holds the address of its live boxed Context (caller).
    let ctx = unsafe { &*ctx.cast::<Context<'_>>() };
    // SAFETY: set for contexts that take this path (`Context::with_plan`).
    let path = unsafe { ctx.shape.as_ref().unwrap_unchecked() };
    let mut values = [const { MaybeUninit::<Value<'_>>::uninit() }; N];
    let mut copies = Copies::<N>([[MaybeUninit::uninit(); 2]; N]);
    // Indexed (the zip of the two arrays measured 3 instructions more per call).
    #[allow(clippy::needless_range_loop)]
    for i in 0..N {
        let a = path.args[i];
        let slot = values[i].as_mut_ptr();
        // SAFETY: `a.word` and `a.word2` are argument-register words of the frame (module
        // invariants); a struct's segment lies inside the frame's register words (in place:
        // `size` bytes from `word`, at most two consecutive words) or inside its 16-byte copy
        // slot; both outlive the closure, which cannot keep the segment (`UpcallArgs`).
        unsafe {
            match a.kind {
                SCALAR => write_scalar_value(
                    slot,
                    ScalarArg {
                        tag: a.tag,
                        word: a.word,
                        is_bool: a.is_bool,
                    },
                    frame.add(a.word as usize).read(),
                ),
                IN_PLACE => write_segment_value(
                    slot,
                    frame.add(a.word as usize).cast::<u8>(),
                    a.size as usize,
                ),
                COPIED => {
                    let c = copies.0[i].as_mut_ptr().cast::<u64>();
                    c.write(frame.add(a.word as usize).read());
                    c.add(1).write(frame.add(a.word2 as usize).read());
                    write_segment_value(slot, c.cast::<u8>(), a.size as usize);
                }
                _ => {
                    let c = copies.0[i].as_mut_ptr().cast::<u64>();
                    c.write(frame.add(a.word as usize).read());
                    c.add(1).write(0);
                    write_segment_value(slot, c.cast::<u8>(), a.size as usize);
                }
            }
        }
    }
    // SAFETY: the `N` values were written just above.
    let values = unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<Value<'_>>(), N) };
    // A struct return's image (at most 16 bytes on SysV), zeroed.
    let mut image = [0u64; 2];
    let image_ptr = image.as_mut_ptr().cast::<u8>();
    let ret_size = if C >= RET_II {
        16
    } else {
        path.ret_size as usize
    };
    let ret = if C >= RET_GROUP {
        // SAFETY: `ret_size` is at most 16 (`ShapePath::of`); `image` outlives the segment,
        // which the closure cannot keep, and is read below only through `image_ptr`.
        Some(unsafe { MemorySegment::from_raw_parts(image_ptr, ret_size) })
    } else {
        None
    };
    let args = UpcallArgs {
        values,
        ret,
        ctx: (ctx as *const Context<'_>).cast(),
    };
    let run = AssertUnwindSafe(|| {
        let result = (ctx.closure)(&args);
        if let Ok(v) = &result {
            match C {
                RET_VOID => {
                    if let Value::Void = v {
                        return;
                    }
                }
                RET_SCALAR => {
                    // SAFETY: `args.ctx` is `ctx`, whose shape path this is; read back from memory,
                    // the context needs no callee-saved register on the other paths.
                    let path = unsafe { args_context(&args).shape.as_ref().unwrap_unchecked() };
                    if let Some(bits) = v.scalar_bits(path.ret_kind) {
                        // SAFETY: `ret_word` is a return word of the frame (module invariants).
                        unsafe { frame.add(path.ret_word as usize).write(bits) };
                        return;
                    }
                }
                _ => {
                    let src = match v {
                        Value::Void => Some(image_ptr.cast_const()),
                        Value::Segment(s) if s.byte_size() >= ret_size => {
                            Some(s.as_ptr().cast_const())
                        }
                        _ => None,
                    };
                    if let Some(src) = src {
                        if C >= RET_II {
                            let (w0, w1) = pair_words(C);
                            // SAFETY: `src` holds 16 bytes (the closure's segment of at least
                            // that size, or the image); `w0`, `w1` are return words.
                            unsafe {
                                frame.add(w0).write(src.cast::<u64>().read_unaligned());
                                frame
                                    .add(w1)
                                    .write(src.add(8).cast::<u64>().read_unaligned());
                            }
                            return;
                        }
                        // SAFETY: as for `RET_SCALAR`.
                        let path = unsafe { args_context(&args).shape.as_ref().unwrap_unchecked() };
                        for m in &path.ret_moves[..path.ret_moves_len as usize] {
                            // SAFETY: the move lies inside the return layout (module
                            // invariants), which `src` holds (the closure's segment of at least
                            // that size, or the image); `m.word` is a return word of the frame.
                            unsafe {
                                let p = src.add(m.offset as usize);
                                let bits = if m.size == 8 {
                                    p.cast::<u64>().read_unaligned()
                                } else {
                                    load_low_bytes(p, m.size as usize)
                                };
                                frame.add(m.word as usize).write(bits);
                            }
                        }
                        return;
                    }
                }
            }
        }
        // SAFETY: as above.
        shape_result_abort(unsafe { args_context(&args) }, C, result)
    });
    if let Err(payload) = catch_unwind(run) {
        // SAFETY: as above.
        abort_panicked(unsafe { &args_context(&args).descriptor }, payload);
    }
}

/// Aborts for a closure error or a result of the wrong kind on the shape path.
#[cold]
#[inline(never)]
fn shape_result_abort(ctx: &Context<'_>, class: u8, result: Result<Value<'_>>) -> ! {
    let e = match result {
        Err(e) => e,
        Ok(v) => match (class, ctx.shape.as_ref()) {
            (RET_VOID, _) => return_mismatch("void", &v),
            (RET_SCALAR, Some(p)) => return_mismatch(p.ret_kind, &v),
            (_, p) => super::group_return_mismatch(p.map_or(0, |p| p.ret_size as usize), &v),
        },
    };
    abort_upcall(&ctx.descriptor, format_args!("{e}"))
}

#[cfg(test)]
mod tests {
    //! The shape dispatcher on synthetic register frames (no assembly: Miri-clean), on its own
    //! and against the general path for random signatures of the register shape.

    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::layout::{MemoryLayout, ValueLayout as V};
    use crate::linker::FunctionDescriptor as FD;
    use crate::upcall::{dispatch, dispatch_general, Closure, UpcallFrame};

    fn context(d: &FD, f: Box<Closure<'static>>) -> Context<'static> {
        // The SysV plan on every host: the shape path decodes SysV register frames.
        let plan = crate::backend::x86_64_sysv::classify::plan(d, None).unwrap();
        Context::with_plan(d, plan, f).unwrap()
    }

    fn shape(d: &FD) -> Option<ShapePath> {
        context(d, Box::new(|_| Ok(Value::Void))).shape
    }

    fn st<const N: usize>(members: [V; N]) -> MemoryLayout {
        MemoryLayout::c_struct(members).unwrap()
    }

    fn empty_frame() -> UpcallFrame {
        UpcallFrame {
            gpr: [0; 9],
            vector: [0; 8],
            stack: std::ptr::NonNull::<u64>::dangling().as_ptr().cast(),
            ret_int: [0; 2],
            ret_vector: [0; 4],
        }
    }

    /// Runs the context's shape dispatcher on `frame`, as the entry does.
    fn run_shape(ctx: &Context<'_>, frame: &mut UpcallFrame) {
        let dispatch = ctx.shape_dispatch.expect("a shape dispatcher");
        // SAFETY: the dispatcher is a `gatun_upcall_dispatch_shape` for this context
        // (`ShapePath::of`), and the frame holds register images of the descriptor's
        // arguments.
        unsafe {
            dispatch(
                (ctx as *const Context<'_>).cast(),
                (frame as *mut UpcallFrame).cast(),
            )
        }
    }

    #[test]
    fn segment_values_written_in_one_piece_equal_the_portable_ones() {
        let mut bytes = [0u8; 24];
        for len in [0, 1, 16, usize::MAX] {
            let mut slot = MaybeUninit::<Value<'_>>::uninit();
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

    #[test]
    fn shape_path_is_taken_by_register_signatures_only() {
        let point = st([V::F64, V::F64]);
        let p = shape(&FD::of(point.clone(), [point.clone()])).unwrap();
        assert_eq!((p.gprs, p.vectors), (0, 2));
        assert_eq!(p.args[0].kind, IN_PLACE);
        assert_eq!(p.class, RET_VV);
        // INTEGER + SSE: not consecutive frame words, copied; returned in rax and xmm0.
        let mixed = st([V::I64, V::F64]);
        let p = shape(&FD::of(mixed.clone(), [V::I32.into(), mixed.clone()])).unwrap();
        assert_eq!((p.gprs, p.vectors), (2, 2));
        assert_eq!((p.args[0].kind, p.args[1].kind), (SCALAR, COPIED));
        assert_eq!(p.class, RET_IV);
        // 12 bytes in rax and rdx (8 + 4): the general return moves.
        let twelve = st([V::I32; 3]);
        let p = shape(&FD::of(twelve.clone(), [twelve])).unwrap();
        assert_eq!(p.args[0].kind, IN_PLACE);
        assert_eq!(p.class, RET_GROUP);
        assert!(shape(&FD::of(V::F64, [V::F32, V::BOOL])).is_some());
        assert!(shape(&FD::of_void([V::I64; 8])).is_none()); // two on the stack
        assert!(shape(&FD::of_void([V::F64; 9])).is_none()); // more than SHAPE_ARGS
        assert!(shape(&FD::of_void([st([V::I64; 3])])).is_none()); // MEMORY class
        assert!(shape(&FD::of(st([V::I64; 3]), [])).is_none()); // hidden return pointer
        assert!(shape(&FD::of_void([
            V::F64,
            V::F64,
            V::F64,
            V::F64,
            V::F64,
            V::F64,
            V::F64
        ]))
        .is_some_and(|p| p.vectors == 8));
    }

    #[test]
    fn a_padding_only_eightbyte_is_copied_as_zeroes_not_read_from_the_next_register() {
        // `{ long; 8 bytes of padding }`: one register (rdi); the long after it is in rsi.
        let low = MemoryLayout::c_struct([V::I64.into(), pad(8)]).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let ctx = context(
            &FD::of(V::I64, [low, V::I64.into()]),
            Box::new(move |a: &UpcallArgs<'_>| {
                let seg = a.segment(0)?;
                s.lock().unwrap().push(seg.to_vec());
                // Writes into the struct's copy stay in the copy.
                seg.copy_from_slice(0, &[0xEE; 16])?;
                Ok(Value::I64(a.get::<i64>(1)?))
            }),
        );
        let p = ctx.shape.unwrap();
        assert_eq!((p.args[0].kind, p.args[1].kind), (COPIED_LOW, SCALAR));
        assert_eq!(p.gprs, 2);
        let mut f = empty_frame();
        f.gpr[..2].copy_from_slice(&[0x0101_0101_0101_0101, 0x0202_0202_0202_0202]);
        run_shape(&ctx, &mut f);
        let mut expected = [0u8; 16];
        expected[..8].fill(1);
        assert_eq!(seen.lock().unwrap()[0], expected);
        // The other argument is intact, as the closure saw it and in the frame.
        assert_eq!(f.ret_int[0], 0x0202_0202_0202_0202);
        assert_eq!(f.gpr[1], 0x0202_0202_0202_0202);
        // A one-eightbyte struct and a whole two-eightbyte one stay in place.
        let p = shape(&FD::of_void([st([V::I32, V::I32]), st([V::I64, V::I64])])).unwrap();
        assert_eq!((p.args[0].kind, p.args[1].kind), (IN_PLACE, IN_PLACE));
    }

    /// A deterministic pseudo-random sequence (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn scalar(r: &mut Rng) -> ScalarKind {
        ScalarKind::ALL[r.below(ScalarKind::ALL.len() as u64) as usize]
    }

    fn pad(n: usize) -> MemoryLayout {
        MemoryLayout::padding_layout(n).unwrap()
    }

    /// A scalar or a struct of 1..=4 scalars and padding layouts of at most 16 bytes, some with
    /// an eightbyte of padding only.
    fn layout(r: &mut Rng) -> MemoryLayout {
        // 16-byte structs of each pair of classes (the `RET_II`..`RET_VV` returns).
        let pairs = [
            [V::I64, V::U64],
            [V::ADDRESS, V::F64],
            [V::F64, V::I64],
            [V::F64, V::F64],
        ];
        loop {
            match r.below(8) {
                0..=2 => return V::new(scalar(r)).into(),
                3 => return st(pairs[r.below(4) as usize].clone()),
                4 => {
                    // One eightbyte of padding only: in no register.
                    let v: MemoryLayout = V::new(scalar(r)).into();
                    let tail = 16 - v.byte_size();
                    let lead = 8 - v.byte_size();
                    let members = match r.below(4) {
                        0 => vec![v, pad(tail)],
                        1 => vec![pad(tail), v],
                        2 => vec![pad(16)],
                        _ if lead == 0 => vec![v, pad(8)],
                        _ => vec![pad(lead), v, pad(8)],
                    };
                    return MemoryLayout::c_struct(members).unwrap();
                }
                _ => {}
            }
            let members: Vec<MemoryLayout> = (0..=r.below(4))
                .map(|_| match r.below(4) {
                    0 => pad(1 + r.below(8) as usize),
                    _ => V::new(scalar(r)).into(),
                })
                .collect();
            let s = MemoryLayout::c_struct(members).unwrap();
            if (1..=16).contains(&s.byte_size()) {
                return s;
            }
        }
    }

    /// What the closure saw, per argument: a scalar's `Debug` text or a struct's bytes.
    fn seen(a: &UpcallArgs<'_>) -> Vec<String> {
        a.iter()
            .map(|v| match v {
                Value::Segment(s) => format!("{:?}", s.to_vec()),
                v => format!("{v:?}"),
            })
            .collect()
    }

    #[test]
    fn shape_path_agrees_with_the_general_path_on_random_register_signatures() {
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        let mut taken = [0; RET_VV as usize + 1];
        let mut other = 0;
        // The segment the odd cases return (one case at a time uses it), freed at the end.
        let mut result_buffer = Box::new([0u8; 16]);
        let buffer = result_buffer.as_mut_ptr() as usize;
        for case in 0..1500 {
            let args: Vec<MemoryLayout> = (0..r.below(9)).map(|_| layout(&mut r)).collect();
            let d = match r.below(3) {
                0 => FD::of_void(args),
                _ => FD::of(layout(&mut r), args),
            };
            // The closure's result: derived from what it saw, returned as a value, written
            // into the return segment, or (odd cases) returned as a segment of its own.
            let log = Arc::new(Mutex::new(Vec::new()));
            let make = |log: Arc<Mutex<Vec<Vec<String>>>>| -> Box<Closure<'static>> {
                Box::new(move |a: &UpcallArgs<'_>| {
                    let s = seen(a);
                    let h = s.iter().fold(case as u64, |h, x| {
                        x.bytes()
                            .fold(h, |h, b| h.wrapping_mul(31).wrapping_add(b as u64))
                    });
                    log.lock().unwrap().push(s);
                    Ok(match a.descriptor().return_layout() {
                        None => Value::Void,
                        Some(MemoryLayout::Value(v)) => Value::from_scalar_bits(v.kind(), h),
                        Some(_) => {
                            let bytes = [h.to_le_bytes(), h.rotate_left(17).to_le_bytes()].concat();
                            let ret = a.return_segment().unwrap();
                            if case % 2 == 0 {
                                ret.copy_from_slice(0, &bytes[..ret.byte_size()])?;
                                Value::Void
                            } else {
                                let p = buffer as *mut u8;
                                // SAFETY: the 16-byte `result_buffer`, alive for the whole
                                // test and used by one closure call at a time.
                                unsafe {
                                    p.copy_from_nonoverlapping(bytes.as_ptr(), ret.byte_size());
                                    Value::Segment(MemorySegment::from_raw_parts(p, 16))
                                }
                            }
                        }
                    })
                })
            };
            let ctx = context(&d, make(log.clone()));
            let mut general = empty_frame();
            for w in general.gpr.iter_mut().chain(general.vector.iter_mut()) {
                *w = r.next();
            }
            let mut fast = UpcallFrame { ..general };
            match ctx.shape.map(|p| p.class) {
                Some(class) => {
                    taken[class as usize] += 1;
                    run_shape(&ctx, &mut fast);
                }
                // Register signatures of no shape (a struct with a leading padding-only
                // eightbyte, or one of padding only): the register path against the general.
                None if ctx.plan.stack_bytes == 0 && ctx.plan.hidden_return_pointer.is_none() => {
                    other += 1;
                    // SAFETY: no stack arguments; the frame holds register images of the
                    // arguments.
                    unsafe { dispatch(&ctx, &mut fast) }.unwrap();
                }
                None => continue,
            }
            // SAFETY: no stack arguments; the frame holds register images of the arguments.
            unsafe { dispatch_general(&ctx, &mut general) }.unwrap();
            let log = log.lock().unwrap();
            assert_eq!(log.len(), 2, "{d}");
            assert_eq!(log[0], log[1], "{d}: the arguments differ");
            assert_eq!(
                (fast.ret_int, fast.ret_vector),
                (general.ret_int, general.ret_vector),
                "{d}: the results differ"
            );
        }
        // Every return class, and most signatures, took the shape path.
        assert!(taken.iter().all(|&n| n >= 10), "{taken:?}");
        assert!(taken.iter().sum::<i32>() >= 400, "{taken:?}");
        assert!(other >= 10, "{other}");
        drop(result_buffer);
    }
}
