//! `upcall/*`: C calling back into Rust. A C loop (`native/upcall.c`) calls its callback
//! `iters` times in one sample, so a row's time per operation is one callback call from C.
//!
//! - `noop`, `id_i32`, `struct`: the callback is a gatun [`UpcallStub`] (on x86-64 System V:
//!   `noop` and `id_i32` a generated stub jumping straight to a Rust dispatcher that takes the
//!   arguments as its own parameters; `struct` a generated stub → a `global_asm!` entry storing
//!   the two argument registers → a dispatcher for that register shape → closure → result
//!   words loaded into the return registers).
//! - `direct_noop`, `direct_id_i32`, `direct_struct`: the callback is a plain Rust
//!   `extern "C" fn` of the same C type: the floor.
//!
//! The `id_i32` closure reads its argument with `args.get::<i32>(0)`, which reads the `Value`
//! by reference; copying the whole scalar `Value` the dispatcher has just written
//! (`Ok(args[0])`) costs a store-forwarding stall, about 4-8 ns more. The `struct` closure
//! returns `args[0]` (the argument's segment), measured equal or faster than `args.segment(0)`.
//!
//! - `typed_noop`, `typed_id_i32`: the callback is a [`gatun::TypedUpcallStub`]
//!   (`Linker::upcall_typed`, the closure's signature known at compile time: the stub jumps to
//!   a monomorphised `extern "C"` trampoline with no argument decoding).
//! - `qsort`, `typed_qsort`, `direct_qsort`: the C library's `qsort` of 10^6 doubles (10^4 in
//!   debug builds; one
//!   operation = restoring the same pseudo-random order, then sorting) with a gatun upcall
//!   comparator (dynamic `&UpcallArgs` closure), a typed one, and a plain Rust
//!   `extern "C" fn` comparator.
//!
//! Callbacks: `void(void)`; `int(int)` (identity); `Point(Point)` with
//! `Point = struct { double x, y; }` (SSE+SSE in xmm0/xmm1 both ways; on x86-64 System V the
//! gatun closure gets it as a segment over the two registers as the entry saved them, not a
//! copy, and returns that segment, whose two words are loaded into xmm0/xmm1).

use std::ffi::{c_int, c_long, c_void};

use gatun::memory::Arena;
use gatun::{FunctionDescriptor as FD, Linker, MemoryLayout, UpcallStub, Value, ValueLayout as V};

use crate::{Body, Row};

/// `typedef struct { double x, y; } upcall_bench_point;`
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Point {
    /// Byte offset 0.
    pub x: f64,
    /// Byte offset 8.
    pub y: f64,
}

extern "C" {
    fn upcall_loop_noop(cb: *const c_void, n: c_long);
    fn upcall_loop_id_i32(cb: *const c_void, n: c_long) -> c_int;
    fn upcall_loop_struct(cb: *const c_void, n: c_long) -> f64;
}

extern "C" {
    fn qsort(
        base: *mut c_void,
        n: usize,
        size: usize,
        cmp: Option<unsafe extern "C" fn(*const c_void, *const c_void) -> c_int>,
    );
}

/// The comparator's C type.
type Cmp = unsafe extern "C" fn(*const c_void, *const c_void) -> c_int;

/// Doubles sorted by the `qsort` rows: 10^6 in optimized builds (what `gatun bench` and
/// `cargo bench` measure); 10^4 in debug builds, where the suite's tests only run the rows (a
/// debug sort of 10^6 takes seconds natively and minutes under qemu).
const QSORT_LEN: usize = if cfg!(debug_assertions) {
    10_000
} else {
    1_000_000
};

/// Compares the doubles at `a` and `b` (`-1`, `0`, `1`; NaN-free data).
///
/// # Safety
/// `a` and `b` point to doubles.
#[inline(always)]
unsafe fn compare_doubles(a: *const c_void, b: *const c_void) -> c_int {
    // SAFETY: the caller's contract.
    let (x, y) = unsafe { (*a.cast::<f64>(), *b.cast::<f64>()) };
    (x > y) as c_int - (x < y) as c_int
}

unsafe extern "C" fn direct_compare(a: *const c_void, b: *const c_void) -> c_int {
    // SAFETY: qsort passes pointers to two elements of the double array.
    unsafe { compare_doubles(a, b) }
}

/// A qsort body: restores `pristine`'s order into a work array and sorts it with `cmp`.
fn qsort_body(cmp: Cmp, keep: impl Send + 'static) -> Body {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let pristine: Box<[f64]> = (0..QSORT_LEN)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64
        })
        .collect();
    let mut work = pristine.clone();
    Box::new(move |iters| {
        let _ = &keep;
        for _ in 0..iters {
            work.copy_from_slice(&pristine);
            // SAFETY: `work` holds QSORT_LEN doubles; `cmp` compares two doubles and lives
            // (with `keep`) for the call.
            unsafe { qsort(work.as_mut_ptr().cast(), QSORT_LEN, 8, Some(cmp)) };
            std::hint::black_box(work[0]);
        }
    })
}

extern "C" fn direct_noop() {}
extern "C" fn direct_id_i32(x: c_int) -> c_int {
    x
}
extern "C" fn direct_point(p: Point) -> Point {
    p
}

const GROUP: &str = "upcall";

fn stub(
    d: &FD,
    f: impl for<'a> Fn(&gatun::UpcallArgs<'a>) -> gatun::Result<Value<'a>> + Send + Sync + 'static,
) -> UpcallStub<'static> {
    Linker::native()
        .upcall_stub(d, f, Arena::global())
        .expect("upcall stub")
}

/// The rows `upcall/{noop,id_i32,struct}` and `upcall/direct_{noop,id_i32,struct}`.
pub fn rows() -> Vec<Row> {
    let point = || MemoryLayout::c_struct([V::F64, V::F64]).expect("point layout");
    vec![
        Row::new(GROUP, "noop", || -> Body {
            let s = stub(&FD::of_void([]), |_| Ok(Value::Void));
            // SAFETY: the stub is a `void (*)(void)`, alive while the body runs.
            Box::new(move |iters| unsafe { upcall_loop_noop(s.address(), iters as c_long) })
        }),
        Row::new(GROUP, "direct_noop", || -> Body {
            let f = direct_noop as extern "C" fn() as usize;
            // SAFETY: a `void (*)(void)`.
            Box::new(move |iters| unsafe { upcall_loop_noop(f as *const c_void, iters as c_long) })
        }),
        Row::new(GROUP, "id_i32", || -> Body {
            let s = stub(&FD::of(V::I32, [V::I32]), |a| {
                Ok(Value::I32(a.get::<i32>(0)?))
            });
            Box::new(move |iters| {
                // SAFETY: the stub is an `int (*)(int)`, alive while the body runs.
                std::hint::black_box(unsafe { upcall_loop_id_i32(s.address(), iters as c_long) });
            })
        }),
        Row::new(GROUP, "direct_id_i32", || -> Body {
            let f = direct_id_i32 as extern "C" fn(c_int) -> c_int as usize;
            Box::new(move |iters| {
                // SAFETY: an `int (*)(int)`.
                std::hint::black_box(unsafe {
                    upcall_loop_id_i32(f as *const c_void, iters as c_long)
                });
            })
        }),
        Row::new(GROUP, "typed_noop", || -> Body {
            let s = Linker::native()
                .upcall_typed::<unsafe extern "C" fn()>(|| {}, Arena::global())
                .expect("typed upcall stub");
            // SAFETY: the stub is a `void (*)(void)`, alive while the body runs.
            Box::new(move |iters| unsafe { upcall_loop_noop(s.address(), iters as c_long) })
        }),
        Row::new(GROUP, "typed_id_i32", || -> Body {
            let s = Linker::native()
                .upcall_typed::<unsafe extern "C" fn(c_int) -> c_int>(|x: c_int| x, Arena::global())
                .expect("typed upcall stub");
            Box::new(move |iters| {
                // SAFETY: the stub is an `int (*)(int)`, alive while the body runs.
                std::hint::black_box(unsafe { upcall_loop_id_i32(s.address(), iters as c_long) });
            })
        }),
        Row::new(GROUP, "struct", move || -> Body {
            let p = point();
            let s = stub(&FD::of(p.clone(), [p]), |a| Ok(a[0]));
            Box::new(move |iters| {
                // SAFETY: the stub is a `Point (*)(Point)`, alive while the body runs.
                std::hint::black_box(unsafe { upcall_loop_struct(s.address(), iters as c_long) });
            })
        }),
        Row::new(GROUP, "direct_struct", || -> Body {
            let f = direct_point as extern "C" fn(Point) -> Point as usize;
            Box::new(move |iters| {
                // SAFETY: a `Point (*)(Point)`.
                std::hint::black_box(unsafe {
                    upcall_loop_struct(f as *const c_void, iters as c_long)
                });
            })
        }),
        Row::new(GROUP, "qsort", || -> Body {
            let s = stub(&FD::of(V::I32, [V::ADDRESS, V::ADDRESS]), |a| {
                // SAFETY: qsort passes pointers to two elements of the double array.
                Ok(Value::I32(unsafe {
                    compare_doubles(a.address(0)?, a.address(1)?)
                }))
            });
            // SAFETY: the stub is an `int (*)(const void *, const void *)`, kept alive by the
            // body.
            let cmp: Cmp = unsafe { std::mem::transmute(s.address()) };
            qsort_body(cmp, s)
        }),
        Row::new(GROUP, "typed_qsort", || -> Body {
            let s = Linker::native()
                .upcall_typed::<Cmp>(
                    // SAFETY: qsort passes pointers to two elements of the double array.
                    |a: *const c_void, b: *const c_void| unsafe { compare_doubles(a, b) },
                    Arena::global(),
                )
                .expect("typed upcall stub");
            qsort_body(s.function(), s)
        }),
        Row::new(GROUP, "direct_qsort", || -> Body {
            qsort_body(direct_compare, ())
        }),
    ]
}
