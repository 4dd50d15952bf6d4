//! `downcall/*`: gatun downcalls (compiled stub, trampoline, typed) against a
//! direct typed `extern "C" fn` call of the same libc/libm function. Targets that need no test
//! library: `abs(int)`, `fma(double, double, double)` and `ldiv(long, long)`, which returns
//! `ldiv_t { long quot; long rem; }` by value in rax+rdx (a register-returned struct).

use std::ffi::{c_int, c_long};
use std::hint::black_box;

use gatun::layout::{MemoryLayout, ValueLayout as V};
use gatun::linker::{CType, DowncallHandle, FunctionDescriptor as FD, Linker, SymbolLookup};
use gatun::memory::MemorySegment;
use gatun::memory::PrefixAllocator;
use gatun::Value;

use crate::{repeat, Body, Row};

#[repr(C)]
#[derive(Clone, Copy)]
struct LDiv {
    quot: c_long,
    rem: c_long,
}

// SAFETY: `ldiv_t` is `struct { long quot; long rem; }` (LP64).
unsafe impl CType for LDiv {
    fn layout() -> MemoryLayout {
        MemoryLayout::c_struct([V::I64, V::I64]).expect("layout")
    }
}

extern "C" {
    fn abs(x: c_int) -> c_int;
    fn fma(a: f64, b: f64, c: f64) -> f64;
    fn ldiv(a: c_long, b: c_long) -> LDiv;
}

fn handle(lib: &str, name: &str, d: &FD) -> DowncallHandle {
    // SAFETY: system libraries with sound initialisers.
    let lookup = unsafe { SymbolLookup::library(lib) }.expect("load library");
    let sym = lookup.find(name).expect("find symbol");
    Linker::native().downcall(&sym, d, &[]).expect("link")
}

/// `downcall/{gatun,gatun_typed,trampoline,direct}_{abs,fma,ldiv}` and `downcall/gatun_raw_abs`:
/// `gatun_*` run the compiled stub, `trampoline_*` the same handle's
/// [`DowncallHandle::interpreted`] twin, `gatun_typed_*` a [`gatun::linker::TypedHandle`] (the
/// target itself for `abs`/`fma`, the stub for `ldiv`'s struct return).
pub fn rows() -> Vec<Row> {
    vec![
        Row::new("downcall", "gatun_abs", || -> Body {
            let h = handle("libc.so.6", "abs", &FD::of(V::I32, [V::I32]));
            Box::new(move |iters| {
                // SAFETY: abs(int) -> int.
                repeat(iters, || unsafe { h.invoke(&[Value::I32(black_box(-7))]) })
            })
        }),
        Row::new("downcall", "gatun_raw_abs", || -> Body {
            let h = handle("libc.so.6", "abs", &FD::of(V::I32, [V::I32]));
            Box::new(move |iters| {
                repeat(iters, || {
                    let x: c_int = black_box(-7);
                    let mut r: c_int = 0;
                    // SAFETY: abs(int) -> int; 4-byte argument and result buffers.
                    unsafe {
                        h.invoke_raw(
                            &[(&x as *const c_int).cast()],
                            (&mut r as *mut c_int).cast(),
                        )
                    }
                    .expect("invoke");
                    r
                })
            })
        }),
        Row::new("downcall", "direct_abs", || -> Body {
            let f: unsafe extern "C" fn(c_int) -> c_int = black_box(abs);
            // SAFETY: abs(int) -> int.
            Box::new(move |iters| repeat(iters, || unsafe { f(black_box(-7)) }))
        }),
        Row::new("downcall", "gatun_fma", || -> Body {
            let h = handle(
                "libm.so.6",
                "fma",
                &FD::of(V::F64, [V::F64, V::F64, V::F64]),
            );
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = [Value::F64(black_box(2.0)), Value::F64(3.0), Value::F64(0.5)];
                    // SAFETY: fma(double, double, double) -> double.
                    unsafe { h.invoke(&a) }
                })
            })
        }),
        Row::new("downcall", "direct_fma", || -> Body {
            let f: unsafe extern "C" fn(f64, f64, f64) -> f64 = black_box(fma);
            // SAFETY: fma(double, double, double) -> double.
            Box::new(move |iters| repeat(iters, || unsafe { f(black_box(2.0), 3.0, 0.5) }))
        }),
        Row::new("downcall", "gatun_ldiv", || -> Body {
            let l = MemoryLayout::c_struct([V::I64, V::I64]).expect("layout");
            let h = handle("libc.so.6", "ldiv", &FD::of(&l, [V::I64, V::I64]));
            Box::new(move |iters| {
                let mut out = [0u8; 16];
                repeat(iters, || {
                    let dest = MemorySegment::of_slice(&mut out);
                    let a = [Value::I64(black_box(17)), Value::I64(5)];
                    // SAFETY: ldiv(long, long) -> ldiv_t; `dest` has its 16 bytes.
                    unsafe { h.invoke_into(&PrefixAllocator::new(dest), &a) }.expect("invoke");
                    dest.get::<i64>(8).expect("rem")
                })
            })
        }),
        Row::new("downcall", "trampoline_abs", || -> Body {
            let h = handle("libc.so.6", "abs", &FD::of(V::I32, [V::I32])).interpreted();
            Box::new(move |iters| {
                // SAFETY: abs(int) -> int.
                repeat(iters, || unsafe { h.invoke(&[Value::I32(black_box(-7))]) })
            })
        }),
        Row::new("downcall", "gatun_typed_abs", || -> Body {
            let h = handle("libc.so.6", "abs", &FD::of(V::I32, [V::I32]));
            let f = h.typed::<(c_int,), c_int>().expect("typed");
            // SAFETY: abs(int) -> int.
            Box::new(move |iters| repeat(iters, || unsafe { f.call((black_box(-7),)) }))
        }),
        Row::new("downcall", "trampoline_fma", || -> Body {
            let d = FD::of(V::F64, [V::F64, V::F64, V::F64]);
            let h = handle("libm.so.6", "fma", &d).interpreted();
            Box::new(move |iters| {
                repeat(iters, || {
                    let a = [Value::F64(black_box(2.0)), Value::F64(3.0), Value::F64(0.5)];
                    // SAFETY: fma(double, double, double) -> double.
                    unsafe { h.invoke(&a) }
                })
            })
        }),
        Row::new("downcall", "gatun_typed_fma", || -> Body {
            let d = FD::of(V::F64, [V::F64, V::F64, V::F64]);
            let f = handle("libm.so.6", "fma", &d)
                .typed::<(f64, f64, f64), f64>()
                .expect("typed");
            // SAFETY: fma(double, double, double) -> double.
            Box::new(move |iters| repeat(iters, || unsafe { f.call((black_box(2.0), 3.0, 0.5)) }))
        }),
        Row::new("downcall", "trampoline_ldiv", || -> Body {
            let l = MemoryLayout::c_struct([V::I64, V::I64]).expect("layout");
            let h = handle("libc.so.6", "ldiv", &FD::of(&l, [V::I64, V::I64])).interpreted();
            Box::new(move |iters| {
                let mut out = [0u8; 16];
                repeat(iters, || {
                    let dest = MemorySegment::of_slice(&mut out);
                    let a = [Value::I64(black_box(17)), Value::I64(5)];
                    // SAFETY: ldiv(long, long) -> ldiv_t; `dest` has its 16 bytes.
                    unsafe { h.invoke_into(&PrefixAllocator::new(dest), &a) }.expect("invoke");
                    dest.get::<i64>(8).expect("rem")
                })
            })
        }),
        Row::new("downcall", "gatun_typed_ldiv", || -> Body {
            let l = MemoryLayout::c_struct([V::I64, V::I64]).expect("layout");
            let f = handle("libc.so.6", "ldiv", &FD::of(&l, [V::I64, V::I64]))
                .typed::<(c_long, c_long), LDiv>()
                .expect("typed");
            Box::new(move |iters| {
                // SAFETY: ldiv(long, long) -> ldiv_t (through the compiled stub).
                repeat(iters, || unsafe {
                    let r = f.call((black_box(17), 5));
                    r.quot + r.rem
                })
            })
        }),
        Row::new("downcall", "direct_ldiv", || -> Body {
            let f: unsafe extern "C" fn(c_long, c_long) -> LDiv = black_box(ldiv);
            Box::new(move |iters| {
                // SAFETY: ldiv(long, long) -> ldiv_t.
                repeat(iters, || unsafe {
                    let r = f(black_box(17), 5);
                    r.quot + r.rem
                })
            })
        }),
    ]
}
