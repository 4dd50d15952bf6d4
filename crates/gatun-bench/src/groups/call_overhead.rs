//! `call_overhead/<impl>_<function>`: one C call through each implementation, in the same run.
//!
//! - `direct_*`: a typed `extern "C" fn` pointer (passed through `black_box`, so the call is an
//!   indirect call the compiler cannot inline or specialise): the floor.
//! - `libffi_*`: libffi-rs `Cif::call` with a prepared `Cif` (what Rust users use today).
//! - `gatun_*`: a gatun [`DowncallHandle`](gatun::DowncallHandle) linked once, called through
//!   the dynamic `invoke(&[Value])` path (arguments checked against the descriptor each call),
//!   which runs the handle's compiled stub.
//! - `image_add6`: the floor of any dynamic path for `add6`: the six arguments stored into an
//!   untagged array of 64-bit slots (as JNI's `jvalue[]`), then a C thunk that loads them into
//!   the argument registers and tail-jumps to `add6` (native `image_add6`) — six stores and six
//!   loads more than `direct_add6`, nothing else. No dynamic path can pass fewer bytes through
//!   memory; `gatun_add6`'s `Value`s add a tag byte per argument (twelve stores) and a check.
//! - `gatun_args_*`: the same handles through `invoke_arguments` with an
//!   [`Arguments`](gatun::Arguments) list built on every call from the same black-boxed inputs
//!   (untagged 8-byte slots; count and kinds checked with one compare), the result black-boxed
//!   as the `Value` it returns, as in the `gatun_*` rows.
//! - `gatun_typed_*`: the same handle viewed with Rust types
//!   ([`DowncallHandle::typed`](gatun::DowncallHandle::typed), checked once); for these
//!   signatures the typed call is the target itself as an `extern "C" fn`.
//!
//! Functions (native/bench_natives.c): `noop()`, `id_i32(int)`, `add6(long × 6)`,
//! `fma3(double × 3)`. Arguments are read through `black_box` on every call, as a JMH benchmark
//! reads them from fields.

use std::ffi::{c_int, c_long};
use std::hint::black_box;

use gatun::{Arguments, FunctionDescriptor, Value, ValueLayout as V};
#[cfg(libffi_peer)]
use libffi::middle::{arg, Type};

use crate::handles::link;
#[cfg(libffi_peer)]
use crate::libffi_peer::PeerCall;
use crate::natives::{self, Native};
use crate::{repeat, Body, Row};

/// The group name.
pub const GROUP: &str = "call_overhead";

/// The rows `{gatun,gatun_typed,direct,libffi}_{noop,id_i32,add6,fma3}`,
/// `gatun_args_{noop,id_i32,add6}` and `image_add6`.
pub fn rows() -> Vec<Row> {
    let mut rows = gatun_rows();
    rows.extend(arguments_rows());
    rows.extend(typed_rows());
    rows.extend(direct_rows());
    // libffi is linked on Unix but RISC-V 64 (`cfg(libffi_peer)`, build.rs).
    #[cfg(libffi_peer)]
    rows.extend(libffi_rows());
    rows
}

fn gatun_rows() -> Vec<Row> {
    vec![
        Row::new(GROUP, "gatun_noop", || -> Body {
            let h = link(Native::Noop, &FunctionDescriptor::of_void([]), &[]);
            // SAFETY: the handle describes `void noop(void)`.
            Box::new(move |iters| repeat(iters, || unsafe { h.invoke(&[]) }.unwrap()))
        }),
        Row::new(GROUP, "gatun_id_i32", || -> Body {
            let h = link(
                Native::IdI32,
                &FunctionDescriptor::of(V::I32, [V::I32]),
                &[],
            );
            let x: i32 = 42;
            Box::new(move |iters| {
                repeat(iters, || {
                    // SAFETY: the handle describes `int id_i32(int)`.
                    unsafe { h.invoke(&[Value::I32(black_box(x))]) }.unwrap()
                })
            })
        }),
        Row::new(GROUP, "gatun_add6", || -> Body {
            let h = link(
                Native::Add6,
                &FunctionDescriptor::of(V::I64, [V::I64; 6]),
                &[],
            );
            let a: [i64; 6] = [1, 2, 3, 4, 5, 6];
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = black_box(&a);
                    let args = [
                        Value::I64(a[0]),
                        Value::I64(a[1]),
                        Value::I64(a[2]),
                        Value::I64(a[3]),
                        Value::I64(a[4]),
                        Value::I64(a[5]),
                    ];
                    // SAFETY: the handle describes `long add6(long × 6)` (LP64 long = i64).
                    unsafe { h.invoke(&args) }.unwrap()
                })
            })
        }),
        Row::new(GROUP, "gatun_fma3", || -> Body {
            let h = link(
                Native::Fma3,
                &FunctionDescriptor::of(V::F64, [V::F64; 3]),
                &[],
            );
            let a: [f64; 3] = [1.5, 2.0, 0.25];
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = black_box(&a);
                    let args = [Value::F64(a[0]), Value::F64(a[1]), Value::F64(a[2])];
                    // SAFETY: the handle describes `double fma3(double × 3)`.
                    unsafe { h.invoke(&args) }.unwrap()
                })
            })
        }),
    ]
}

/// `gatun_args_*`: the same handles called through `invoke_arguments` with an
/// [`Arguments`](gatun::Arguments) list built on every call (untagged 8-byte slots, the kinds
/// checked with one compare).
fn arguments_rows() -> Vec<Row> {
    vec![
        Row::new(GROUP, "gatun_args_noop", || -> Body {
            let h = link(Native::Noop, &FunctionDescriptor::of_void([]), &[]);
            Box::new(move |iters| {
                repeat(iters, || {
                    let args = Arguments::<0>::new();
                    // SAFETY: the handle describes `void noop(void)`.
                    unsafe { h.invoke_arguments(&args) }.unwrap()
                })
            })
        }),
        Row::new(GROUP, "gatun_args_id_i32", || -> Body {
            let h = link(
                Native::IdI32,
                &FunctionDescriptor::of(V::I32, [V::I32]),
                &[],
            );
            let x: i32 = 42;
            Box::new(move |iters| {
                repeat(iters, || {
                    let mut args = Arguments::<1>::new();
                    args.i32(black_box(x));
                    // SAFETY: the handle describes `int id_i32(int)`.
                    unsafe { h.invoke_arguments(&args) }.unwrap()
                })
            })
        }),
        Row::new(GROUP, "gatun_args_add6", || -> Body {
            let h = link(
                Native::Add6,
                &FunctionDescriptor::of(V::I64, [V::I64; 6]),
                &[],
            );
            let a: [i64; 6] = [1, 2, 3, 4, 5, 6];
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = black_box(&a);
                    let mut args = Arguments::<6>::new();
                    args.i64(a[0])
                        .i64(a[1])
                        .i64(a[2])
                        .i64(a[3])
                        .i64(a[4])
                        .i64(a[5]);
                    // SAFETY: the handle describes `long add6(long × 6)` (LP64 long = i64).
                    unsafe { h.invoke_arguments(&args) }.unwrap()
                })
            })
        }),
    ]
}

/// `gatun_typed_*`: the same handles viewed with Rust types (`DowncallHandle::typed`); for
/// these scalar signatures the typed call is the target itself as an `extern "C" fn`.
fn typed_rows() -> Vec<Row> {
    vec![
        Row::new(GROUP, "gatun_typed_noop", || -> Body {
            let h = link(Native::Noop, &FunctionDescriptor::of_void([]), &[]);
            let f = h.typed::<(), ()>().expect("typed");
            // SAFETY: `void noop(void)`.
            Box::new(move |iters| repeat(iters, || unsafe { f.call(()) }))
        }),
        Row::new(GROUP, "gatun_typed_id_i32", || -> Body {
            let h = link(
                Native::IdI32,
                &FunctionDescriptor::of(V::I32, [V::I32]),
                &[],
            );
            let f = h.typed::<(c_int,), c_int>().expect("typed");
            let x: c_int = 42;
            // SAFETY: `int id_i32(int)`.
            Box::new(move |iters| repeat(iters, || unsafe { f.call((black_box(x),)) }))
        }),
        Row::new(GROUP, "gatun_typed_add6", || -> Body {
            let h = link(
                Native::Add6,
                &FunctionDescriptor::of(V::I64, [V::I64; 6]),
                &[],
            );
            let f = h
                .typed::<(c_long, c_long, c_long, c_long, c_long, c_long), c_long>()
                .expect("typed");
            let a: [c_long; 6] = [1, 2, 3, 4, 5, 6];
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = black_box(&a);
                    // SAFETY: `long add6(long × 6)`.
                    unsafe { f.call((a[0], a[1], a[2], a[3], a[4], a[5])) }
                })
            })
        }),
        Row::new(GROUP, "gatun_typed_fma3", || -> Body {
            let h = link(
                Native::Fma3,
                &FunctionDescriptor::of(V::F64, [V::F64; 3]),
                &[],
            );
            let f = h.typed::<(f64, f64, f64), f64>().expect("typed");
            let a: [f64; 3] = [1.5, 2.0, 0.25];
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = black_box(&a);
                    // SAFETY: `double fma3(double × 3)`.
                    unsafe { f.call((a[0], a[1], a[2])) }
                })
            })
        }),
    ]
}

fn direct_rows() -> Vec<Row> {
    vec![
        Row::new(GROUP, "direct_noop", || -> Body {
            let f: unsafe extern "C" fn() = black_box(natives::noop);
            // SAFETY: `noop` has exactly this C signature.
            Box::new(move |iters| repeat(iters, || unsafe { f() }))
        }),
        Row::new(GROUP, "direct_id_i32", || -> Body {
            let f: unsafe extern "C" fn(c_int) -> c_int = black_box(natives::id_i32);
            let x: c_int = 42;
            // SAFETY: `id_i32` has exactly this C signature.
            Box::new(move |iters| repeat(iters, || unsafe { f(black_box(x)) }))
        }),
        Row::new(GROUP, "direct_add6", || -> Body {
            let f: natives::Add6Fn = black_box(natives::add6);
            let a: [c_long; 6] = [1, 2, 3, 4, 5, 6];
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = black_box(&a);
                    // SAFETY: `add6` has exactly this C signature.
                    unsafe { f(a[0], a[1], a[2], a[3], a[4], a[5]) }
                })
            })
        }),
        Row::new(GROUP, "image_add6", || -> Body {
            let f: natives::Add6Fn = black_box(natives::add6);
            let a: [c_long; 6] = [1, 2, 3, 4, 5, 6];
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = black_box(&a);
                    let img: [c_long; 6] = [a[0], a[1], a[2], a[3], a[4], a[5]];
                    // SAFETY: `img` holds six longs; `f` is `add6`.
                    unsafe { natives::image_add6(img.as_ptr(), f) }
                })
            })
        }),
        Row::new(GROUP, "direct_fma3", || -> Body {
            let f: unsafe extern "C" fn(f64, f64, f64) -> f64 = black_box(natives::fma3);
            let a: [f64; 3] = [1.5, 2.0, 0.25];
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = black_box(&a);
                    // SAFETY: `fma3` has exactly this C signature.
                    unsafe { f(a[0], a[1], a[2]) }
                })
            })
        }),
    ]
}

#[cfg(libffi_peer)]
fn libffi_rows() -> Vec<Row> {
    vec![
        Row::new(GROUP, "libffi_noop", || -> Body {
            let p = PeerCall::new(Native::Noop, [], Type::void());
            // SAFETY: the Cif describes `void noop(void)`.
            Box::new(move |iters| repeat(iters, || unsafe { p.call::<()>(&[]) }))
        }),
        Row::new(GROUP, "libffi_id_i32", || -> Body {
            let p = PeerCall::new(Native::IdI32, [Type::c_int()], Type::c_int());
            let x: c_int = 42;
            Box::new(move |iters| {
                repeat(iters, || {
                    let x = black_box(&x);
                    // SAFETY: the Cif describes `int id_i32(int)`; the argument is an int.
                    unsafe { p.call::<c_int>(&[arg(x)]) }
                })
            })
        }),
        Row::new(GROUP, "libffi_add6", || -> Body {
            let p = PeerCall::new(
                Native::Add6,
                [(); 6].map(|_| Type::c_long()),
                Type::c_long(),
            );
            let a: [c_long; 6] = [1, 2, 3, 4, 5, 6];
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = black_box(&a);
                    let args = [
                        arg(&a[0]),
                        arg(&a[1]),
                        arg(&a[2]),
                        arg(&a[3]),
                        arg(&a[4]),
                        arg(&a[5]),
                    ];
                    // SAFETY: the Cif describes `long add6(long × 6)`; six longs are passed.
                    unsafe { p.call::<c_long>(&args) }
                })
            })
        }),
        Row::new(GROUP, "libffi_fma3", || -> Body {
            let p = PeerCall::new(Native::Fma3, [(); 3].map(|_| Type::f64()), Type::f64());
            let a: [f64; 3] = [1.5, 2.0, 0.25];
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = black_box(&a);
                    let args = [arg(&a[0]), arg(&a[1]), arg(&a[2])];
                    // SAFETY: the Cif describes `double fma3(double × 3)`; three doubles are passed.
                    unsafe { p.call::<f64>(&args) }
                })
            })
        }),
    ]
}
