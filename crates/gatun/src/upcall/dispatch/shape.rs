//! The register-shape path ([`Path::Shape`]): the backend's shape entry stores only the
//! argument registers a [`RegisterShape`] uses and calls the header's shape dispatcher, a
//! [`gatun_upcall_dispatch_shape`] monomorphised for the argument count and the return class.
//! Scalars are written from their frame words; a struct in place ([`SHAPE_IN_PLACE`]) is a
//! segment over the frame's words, which live for the whole upcall; any other struct is copied
//! into a 16-byte slot of a buffer on the dispatcher's stack. A struct result's image is
//! 16 bytes, zeroed (two eightbytes at the most).
//!
//! The register rules that make a [`RegisterShape`] are the backend's (x86-64 System V:
//! `backend::x86_64_sysv::shape`), with the invariants stated on the type.

use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::super::abort::{
    abort_panicked, abort_upcall, args_context, group_return_mismatch, return_mismatch,
};
use super::super::context::{Context, Path};
use super::super::UpcallArgs;
use super::{write_scalar_value, ScalarArg};
use crate::backend::load_low_bytes;
use crate::backend::upcall::{
    pair_words, UpcallDispatch, UpcallEntries, UpcallFrame, UpcallHeader, RET_GROUP, RET_II,
    RET_IV, RET_SCALAR, RET_VECTOR_WORD, RET_VI, RET_VOID, RET_VV, SHAPE_COPIED, SHAPE_COPIED_LOW,
    SHAPE_IN_PLACE, SHAPE_SCALAR,
};
#[cfg(doc)]
use crate::backend::upcall::{RegisterShape, SHAPE_ARGS};
use crate::backend::Native;
use crate::error::Result;
use crate::memory::MemorySegment;
use crate::value::Value;

/// The shape dispatcher for `n` arguments (at most [`SHAPE_ARGS`]) and return class `class`
/// ([`RegisterShape::class`]).
pub(crate) fn shape_dispatcher(n: usize, class: u8) -> UpcallDispatch {
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

/// The copy slots of struct arguments that are not in consecutive frame words (16 bytes each,
/// 16-aligned: no register-passed struct has a larger alignment).
#[repr(C, align(16))]
struct Copies<const N: usize>([[MaybeUninit<u64>; 2]; N]);

/// The register-shape dispatcher for `N` arguments and return class `C`: builds the `N`
/// [`Value`]s from the frame's argument words per the context's [`RegisterShape`], runs the
/// closure (a panic or an error aborts, never unwinds), and writes its result into the
/// frame's return words. The entry loads rax, rdx, xmm0, xmm1 from them.
///
/// # Safety
/// Called by a backend's shape entry (or a test) with the address of a live context whose
/// header's `shape_dispatch` is this function (its path is then [`Path::Shape`]) and `frame`
/// an exclusive [`UpcallFrame`] whose argument-register words hold the registers of a C call
/// of the stub's descriptor type.
pub(crate) unsafe extern "C" fn gatun_upcall_dispatch_shape<const N: usize, const C: u8>(
    ctx: *const UpcallHeader,
    frame: *mut UpcallFrame,
) {
    let frame = frame.cast::<u64>();
    // SAFETY: the entry passes its frame on its stack (caller).
    unsafe { std::hint::assert_unchecked(!frame.is_null()) };
    // SAFETY: the stub's code holds the address of its live boxed Context (caller).
    let ctx = unsafe { &*ctx.cast::<Context<'_>>() };
    // SAFETY: the header's shape dispatcher is this function only on the shape path
    // (`Context::with_plan`).
    let path = unsafe { ctx.path.shape_unchecked() };
    let mut values = [const { MaybeUninit::<Value<'_>>::uninit() }; N];
    let mut copies = Copies::<N>([[MaybeUninit::uninit(); 2]; N]);
    // Indexed (the zip of the two arrays measured 3 instructions more per call).
    #[allow(clippy::needless_range_loop)]
    for i in 0..N {
        let a = path.args[i];
        let slot = values[i].as_mut_ptr();
        // The entry stored the registers this argument is read from.
        debug_assert!(path.stores(a.word) && path.stores(a.word2), "{a:?}");
        // SAFETY: `a.word` and `a.word2` are argument-register words of the frame (module
        // invariants); a struct's segment lies inside the frame's register words (in place:
        // `size` bytes from `word`, at most two consecutive words) or inside its 16-byte copy
        // slot; both outlive the closure, which cannot keep the segment (`UpcallArgs`).
        unsafe {
            match a.kind {
                SHAPE_SCALAR => write_scalar_value(
                    slot,
                    ScalarArg {
                        tag: a.tag,
                        word: a.word,
                        is_bool: a.is_bool,
                    },
                    frame.add(a.word as usize).read(),
                ),
                SHAPE_IN_PLACE => <Native as UpcallEntries>::write_segment_value(
                    slot,
                    frame.add(a.word as usize).cast::<u8>(),
                    a.size as usize,
                ),
                SHAPE_COPIED => {
                    let c = copies.0[i].as_mut_ptr().cast::<u64>();
                    c.write(frame.add(a.word as usize).read());
                    c.add(1).write(frame.add(a.word2 as usize).read());
                    <Native as UpcallEntries>::write_segment_value(
                        slot,
                        c.cast::<u8>(),
                        a.size as usize,
                    );
                }
                _ => {
                    debug_assert_eq!(a.kind, SHAPE_COPIED_LOW);
                    let c = copies.0[i].as_mut_ptr().cast::<u64>();
                    c.write(frame.add(a.word as usize).read());
                    c.add(1).write(0);
                    <Native as UpcallEntries>::write_segment_value(
                        slot,
                        c.cast::<u8>(),
                        a.size as usize,
                    );
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
        // SAFETY: `ret_size` is at most 16 (`RegisterShape`); `image` outlives the segment,
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
                    let path = unsafe { args_context(&args).path.shape_unchecked() };
                    if let Some(bits) = v.scalar_bits(path.ret_kind) {
                        let bits = Native::scalar_return_bits(path.ret_kind, bits);
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
                        let path = unsafe { args_context(&args).path.shape_unchecked() };
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
                                let vector = m.word as usize >= RET_VECTOR_WORD;
                                let bits = Native::group_return_bits(vector, m.size as usize, bits);
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
        Ok(v) => match (class, &ctx.path) {
            (RET_VOID, _) => return_mismatch("void", &v),
            (RET_SCALAR, Path::Shape(p)) => return_mismatch(p.ret_kind, &v),
            (_, Path::Shape(p)) => group_return_mismatch(p.ret_size as usize, &v),
            (_, _) => group_return_mismatch(0, &v),
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
    use crate::backend::upcall::RegisterShape;
    use crate::layout::FunctionDescriptor as FD;
    use crate::layout::{MemoryLayout, ScalarKind, ValueLayout as V};
    use crate::memory::MemorySegment;
    use crate::upcall::context::Closure;
    use crate::upcall::dispatch::dispatch;
    use crate::upcall::dispatch::general::dispatch_general;
    use crate::upcall::tests::SysVRules;

    fn context(d: &FD, f: Box<Closure<'static>>) -> Context<'static> {
        // The SysV plan and rules on every host: the shape path decodes SysV register frames.
        let plan = crate::abi::sysv::plan(d, None).unwrap();
        Context::with_plan::<SysVRules>(d, plan, f, 0).unwrap()
    }

    /// The context's register shape, if its path is the shape path.
    fn shape_of<'c>(ctx: &'c Context<'_>) -> Option<&'c RegisterShape> {
        match &ctx.path {
            Path::Shape(s) => Some(s),
            _ => None,
        }
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
        assert!(shape_of(ctx).is_some(), "a shape dispatcher");
        // The header pointer is derived from the whole context (the header is at offset 0 of
        // the `#[repr(C)]` context), as the entry's is: the dispatcher reads the rest of the
        // context through it.
        let header = std::ptr::from_ref(ctx).cast::<UpcallHeader>();
        // SAFETY: the header's shape dispatcher is a `gatun_upcall_dispatch_shape` for this
        // context (its path is the shape path), and the frame holds register images of the
        // descriptor's arguments.
        unsafe { (ctx.header.shape_dispatch)(header, frame) }
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
        let p = shape_of(&ctx).unwrap();
        assert_eq!(
            (p.args[0].kind, p.args[1].kind),
            (SHAPE_COPIED_LOW, SHAPE_SCALAR)
        );
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
    #[cfg_attr(
        target_endian = "big",
        ignore = "builds x86-64 SysV register images, which are little-endian"
    )]
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
            match shape_of(&ctx).map(|p| p.class) {
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
