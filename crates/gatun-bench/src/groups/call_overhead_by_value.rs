//! `call_overhead_by_value/*` (seed tables CallOverheadByValue, seeds 002 and 004): a 16-byte
//! `DoublePoint {double x, y}` returned by value (`DoublePoint unit(void)`, in `xmm0:xmm1`) against
//! the same struct written through a pointer (`void unit_ptr(DoublePoint *)`).
//!
//! As in the JDK benchmark (`CallOverheadByValue` in the JDK's
//! `test/micro/org/openjdk/bench/java/lang/foreign`), the result lands in one reused 16-byte
//! point each call: `by_value` hands the call an allocator that always returns that point, so
//! what is measured is the call plus the return-buffer handling, not an allocation.
//!
//! gatun rows: `by_ptr` (`invoke(&[Value::Address(point)])`) and `by_value`
//! (`invoke_into(&Reused(point), &[])`: the struct comes back in `xmm0:xmm1` and gatun stores
//! it into the segment the allocator returns, the reused point); `gatun_typed_by_value`: the
//! same handle viewed as `fn() -> DoublePoint` (`DowncallHandle::typed`), result stored into
//! the point.
//!
//! MEMORY-class rows: a 24-byte `Long3 {long a, b, c}` returned by value (`Long3 long3(void)`),
//! too large for registers, so on SysV AMD64 the caller passes a hidden pointer in `rdi` that
//! the callee writes through: `memory_by_value` (`invoke_into(&Reused(long3), &[])`, one
//! segment per sample, made before the loop, handed over as the hidden pointer each call), `gatun_typed_memory_by_value` (the typed view
//! `fn() -> Long3`), `direct_memory_by_value` and `libffi_memory_by_value`.
//!
//! Peer rows: `direct_by_ptr`, `direct_by_value` (typed `extern "C" fn` pointers) and
//! `libffi_by_ptr`, `libffi_by_value` (libffi-rs `Cif`, struct returned into the reused point
//! with `call_return_into`).

use std::ffi::c_void;
use std::hint::black_box;

use gatun::memory::MemorySegment;
use gatun::{FunctionDescriptor, Value, ValueLayout as V};
#[cfg(libffi_peer)]
use libffi::middle::{arg, Ret, Type};

use crate::handles::{double_point_layout, link, long3_layout, Reused};
#[cfg(libffi_peer)]
use crate::libffi_peer::{double_point, long3, PeerCall};
use crate::natives::{self, DoublePoint, Long3, Native};
use crate::{repeat, Body, Row};

/// The group name.
pub const GROUP: &str = "call_overhead_by_value";

/// `by_ptr`, `by_value` and the peer rows.
pub fn rows() -> Vec<Row> {
    #[allow(unused_mut)] // the libffi rows are added on Unix only
    let mut rows = vec![
        Row::new(GROUP, "by_ptr", || -> Body {
            let h = link(
                Native::UnitPtr,
                &FunctionDescriptor::of_void([V::ADDRESS]),
                &[],
            );
            let mut point = Box::new(DoublePoint::default());
            Box::new(move |iters| {
                repeat(iters, || {
                    let p: *mut c_void = black_box(&mut *point as *mut DoublePoint).cast();
                    // SAFETY: the handle describes `void unit_ptr(DoublePoint *)`; `p` is valid.
                    unsafe { h.invoke(&[Value::Address(p)]) }.unwrap();
                    point.x
                })
            })
        }),
        Row::new(GROUP, "by_value", || -> Body {
            let h = link(
                Native::Unit,
                &FunctionDescriptor::of(double_point_layout(), []),
                &[],
            );
            let mut point = Box::new(DoublePoint::default());
            Box::new(move |iters| {
                repeat(iters, || {
                    let p: *mut DoublePoint = black_box(&mut *point);
                    // SAFETY: `p` points to the 16 bytes of the boxed point, which nothing else
                    // accesses while the segment is used (inside this closure call).
                    let seg = unsafe { MemorySegment::from_raw_parts(p.cast(), 16) };
                    // SAFETY: the handle describes `DoublePoint unit(void)`.
                    unsafe { h.invoke_into(&Reused(seg), &[]) }.unwrap();
                    point.x
                })
            })
        }),
        Row::new(GROUP, "gatun_typed_by_value", || -> Body {
            let h = link(
                Native::Unit,
                &FunctionDescriptor::of(double_point_layout(), []),
                &[],
            );
            let f = h
                .typed::<(), DoublePoint>()
                .expect("typed DoublePoint unit(void)");
            let mut point = Box::new(DoublePoint::default());
            Box::new(move |iters| {
                repeat(iters, || {
                    let p: &mut DoublePoint = black_box(&mut *point);
                    // SAFETY: the typed view was checked against `DoublePoint unit(void)`.
                    *p = unsafe { f.call(()) };
                    point.x
                })
            })
        }),
        Row::new(GROUP, "direct_by_ptr", || -> Body {
            let f: unsafe extern "C" fn(*mut DoublePoint) = black_box(natives::unit_ptr);
            let mut point = Box::new(DoublePoint::default());
            Box::new(move |iters| {
                repeat(iters, || {
                    let p: *mut DoublePoint = black_box(&mut *point);
                    // SAFETY: `unit_ptr` writes one DoublePoint to a valid pointer.
                    unsafe { f(p) };
                    point.x
                })
            })
        }),
        Row::new(GROUP, "direct_by_value", || -> Body {
            let f: unsafe extern "C" fn() -> DoublePoint = black_box(natives::unit);
            let mut point = Box::new(DoublePoint::default());
            Box::new(move |iters| {
                repeat(iters, || {
                    let p: &mut DoublePoint = black_box(&mut *point);
                    // SAFETY: `unit` has exactly this C signature.
                    *p = unsafe { f() };
                    point.x
                })
            })
        }),
        Row::new(GROUP, "memory_by_value", || -> Body {
            let h = link(
                Native::Long3,
                &FunctionDescriptor::of(long3_layout(), []),
                &[],
            );
            let mut out = Box::new(Long3::default());
            Box::new(move |iters| {
                // One segment per sample, made outside the loop (as the direct row writes one
                // `Long3`): the row measures the call, not making a segment per call.
                let p: *mut Long3 = black_box(&mut *out);
                // SAFETY: `p` points to the boxed `Long3`, which nothing else accesses while
                // the segment is used (this sample).
                let seg = unsafe {
                    MemorySegment::from_raw_parts(p.cast(), std::mem::size_of::<Long3>())
                };
                let reused = Reused(seg);
                repeat(iters, || {
                    // SAFETY: the handle describes `Long3 long3(void)`.
                    unsafe { h.invoke_into(&reused, &[]) }.unwrap();
                    // SAFETY: `p` holds the `Long3` just written through the segment.
                    unsafe { (*p).a }
                })
            })
        }),
        Row::new(GROUP, "gatun_typed_memory_by_value", || -> Body {
            let h = link(
                Native::Long3,
                &FunctionDescriptor::of(long3_layout(), []),
                &[],
            );
            let f = h.typed::<(), Long3>().expect("typed Long3 long3(void)");
            let mut out = Box::new(Long3::default());
            Box::new(move |iters| {
                repeat(iters, || {
                    let p: &mut Long3 = black_box(&mut *out);
                    // SAFETY: the typed view was checked against `Long3 long3(void)`.
                    *p = unsafe { f.call(()) };
                    out.a
                })
            })
        }),
        Row::new(GROUP, "direct_memory_by_value", || -> Body {
            let f: unsafe extern "C" fn() -> Long3 = black_box(natives::long3);
            let mut out = Box::new(Long3::default());
            Box::new(move |iters| {
                repeat(iters, || {
                    let p: &mut Long3 = black_box(&mut *out);
                    // SAFETY: `long3` has exactly this C signature.
                    *p = unsafe { f() };
                    out.a
                })
            })
        }),
    ];
    // libffi is linked on Unix but RISC-V 64 (`cfg(libffi_peer)`, build.rs).
    #[cfg(libffi_peer)]
    rows.extend(libffi_rows());
    rows
}

/// The libffi peer rows.
#[cfg(libffi_peer)]
fn libffi_rows() -> Vec<Row> {
    vec![
        Row::new(GROUP, "libffi_by_ptr", || -> Body {
            let p = PeerCall::new(Native::UnitPtr, [Type::pointer()], Type::void());
            let mut point = Box::new(DoublePoint::default());
            Box::new(move |iters| {
                repeat(iters, || {
                    let out: *mut c_void = black_box(&mut *point as *mut DoublePoint).cast();
                    // SAFETY: the Cif describes `void unit_ptr(DoublePoint *)`; `out` is valid.
                    unsafe { p.call::<()>(&[arg(&out)]) };
                    point.x
                })
            })
        }),
        Row::new(GROUP, "libffi_by_value", || -> Body {
            let p = PeerCall::new(Native::Unit, [], double_point());
            let mut point = Box::new(DoublePoint::default());
            Box::new(move |iters| {
                repeat(iters, || {
                    let out: &mut DoublePoint = black_box(&mut *point);
                    // SAFETY: the Cif describes `DoublePoint unit(void)`; libffi writes the
                    // 16-byte struct into `out`, which is large enough and aligned.
                    unsafe { p.call_return_into(&[], Ret::new(out)) };
                    point.x
                })
            })
        }),
        Row::new(GROUP, "libffi_memory_by_value", || -> Body {
            let p = PeerCall::new(Native::Long3, [], long3());
            let mut out = Box::new(Long3::default());
            Box::new(move |iters| {
                repeat(iters, || {
                    let r: &mut Long3 = black_box(&mut *out);
                    // SAFETY: the Cif describes `Long3 long3(void)`; libffi hands `r` (24
                    // bytes, aligned) to the callee as the hidden return pointer.
                    unsafe { p.call_return_into(&[], Ret::new(r)) };
                    out.a
                })
            })
        }),
    ]
}
