//! `capture_state_util/*` (seed table CaptureStateUtilBench, seed 000): a system-call-like C
//! function `int sys_like(int fail)` that returns 0, or sets `errno` to 13 and returns -1; each
//! row returns `r` on success and `-errno` on failure, as the JDK's adapted handle does.
//!
//! Rows here:
//! - `direct_sys_call_{success,fail}` (floor): a typed `extern "C" fn` pointer, `errno` read
//!   with the `errno` crate only when the result is negative.
//! - `plain_sys_call_{success,fail}`: a gatun handle linked without capture, `errno` read with
//!   the `errno` crate.
//! - `explicit_allocation_{success,fail}`: the seed's baseline: a handle linked with
//!   `CaptureCallState(["errno"])`, a fresh confined (heap) arena per call for the 4-byte
//!   capture segment (zeroed, as Java's `arena.allocate(4)`), `errno` read from the segment on
//!   failure.
//!
//! - `tl_allocation_{success,fail}`: the same capturing handle, the capture segment from a
//!   pooled arena of a 32-byte [`ArenaPool`] per call (the seed's `POOLS.take()`).
//! - `adapted_sys_call_{success,fail}`: the system-call adapter,
//!   [`gatun::capture::SystemCall::invoke`] (`&[Value]` without the capture segment; the
//!   buffer comes from the per-thread capture stack).
//! - `adapted_sys_call_raw_{success,fail}`: the adapter's raw path
//!   ([`gatun::capture::SystemCall::invoke_raw`], argument pointers).
//! - `adapted_sys_call_typed_{success,fail}`: the adapter's typed fast path
//!   ([`gatun::capture::TypedSystemCall`], `unsafe extern "C" fn(c_int) -> c_int`).

use std::ffi::c_int;
use std::hint::black_box;

use std::sync::Arc;

use gatun::capture::{adapt_system_call, SystemCall};
use gatun::memory::{Arena, ArenaPool, SegmentAllocator};
use gatun::{FunctionDescriptor, LinkerOption, Value, ValueLayout as V};

use crate::handles::link;
use crate::natives::{self, Native};
use crate::{repeat, Body, Row};

/// The group name.
pub const GROUP: &str = "capture_state_util";

/// `r` when `r >= 0`, else minus the calling thread's current `errno`.
#[inline(always)]
pub fn r_or_minus_errno(r: c_int) -> i64 {
    if r >= 0 {
        r as i64
    } else {
        -(errno::errno().0 as i64)
    }
}

fn direct(name: &'static str, fail: c_int) -> Row {
    Row::new(GROUP, name, move || -> Body {
        let f: unsafe extern "C" fn(c_int) -> c_int = black_box(natives::sys_like);
        Box::new(move |iters| {
            // SAFETY: `sys_like` has exactly this C signature.
            repeat(iters, || r_or_minus_errno(unsafe { f(black_box(fail)) }))
        })
    })
}

fn sys_like_descriptor() -> FunctionDescriptor {
    FunctionDescriptor::of(V::I32, [V::I32])
}

fn int_of(v: Value<'_>) -> c_int {
    match v {
        Value::I32(r) => r,
        other => panic!("sys_like returned {other:?}"),
    }
}

fn plain(name: &'static str, fail: c_int) -> Row {
    Row::new(GROUP, name, move || -> Body {
        let h = link(Native::SysLike, &sys_like_descriptor(), &[]);
        Box::new(move |iters| {
            repeat(iters, || {
                // SAFETY: the handle describes `int sys_like(int)`.
                let r = int_of(unsafe { h.invoke(&[Value::I32(black_box(fail))]) }.unwrap());
                r_or_minus_errno(r)
            })
        })
    })
}

fn explicit_allocation(name: &'static str, fail: c_int) -> Row {
    Row::new(GROUP, name, move || -> Body {
        let h = capturing_handle();
        Box::new(move |iters| {
            repeat(iters, || {
                let arena = Arena::confined();
                let state = arena.allocate(4, 4).unwrap();
                let args = [Value::Segment(state), Value::I32(black_box(fail))];
                // SAFETY: the handle describes `int sys_like(int)` with a leading capture
                // segment of 4 bytes, 4-aligned.
                let r = int_of(unsafe { h.invoke(&args) }.unwrap());
                if r >= 0 {
                    r as i64
                } else {
                    -(state.get::<i32>(0).unwrap() as i64)
                }
            })
        })
    })
}

fn capturing_handle() -> gatun::DowncallHandle {
    link(
        Native::SysLike,
        &sys_like_descriptor(),
        &[LinkerOption::CaptureCallState(&["errno"])],
    )
}

fn tl_allocation(name: &'static str, fail: c_int, pool: Arc<ArenaPool>) -> Row {
    Row::new(GROUP, name, move || -> Body {
        let h = capturing_handle();
        let pool = pool.clone();
        Box::new(move |iters| {
            repeat(iters, || {
                let arena = pool.take();
                let state = arena.allocate(4, 4).unwrap();
                let args = [Value::Segment(state), Value::I32(black_box(fail))];
                // SAFETY: as in `explicit_allocation`.
                let r = int_of(unsafe { h.invoke(&args) }.unwrap());
                if r >= 0 {
                    r as i64
                } else {
                    -(state.get::<i32>(0).unwrap() as i64)
                }
            })
        })
    })
}

fn adapted() -> SystemCall {
    adapt_system_call(&capturing_handle(), "errno").expect("adapt sys_like")
}

fn adapted_sys_call(name: &'static str, fail: c_int) -> Row {
    Row::new(GROUP, name, move || -> Body {
        let sc = adapted();
        Box::new(move |iters| {
            repeat(iters, || {
                // SAFETY: the adapter wraps `int sys_like(int)`.
                unsafe { sc.invoke(&[Value::I32(black_box(fail))]) }.unwrap()
            })
        })
    })
}

fn adapted_raw(name: &'static str, fail: c_int) -> Row {
    Row::new(GROUP, name, move || -> Body {
        let sc = adapted();
        Box::new(move |iters| {
            repeat(iters, || {
                let arg = black_box(fail);
                // SAFETY: one pointer to the `int` argument of `int sys_like(int)`.
                unsafe { sc.invoke_raw(&[(&arg as *const c_int).cast()]) }.unwrap()
            })
        })
    })
}

fn adapted_typed(name: &'static str, fail: c_int) -> Row {
    Row::new(GROUP, name, move || -> Body {
        let t = adapted()
            .typed::<unsafe extern "C" fn(c_int) -> c_int>()
            .expect("typed sys_like");
        Box::new(move |iters| {
            // SAFETY: `int sys_like(int)`.
            repeat(iters, || unsafe { t.invoke((black_box(fail),)) } as i64)
        })
    })
}

/// Every row of the group.
pub fn rows() -> Vec<Row> {
    // POOLS: 32 bytes per thread, as in the seed's note.
    let pool = Arc::new(ArenaPool::new(32, 8).expect("pool"));
    vec![
        adapted_sys_call("adapted_sys_call_success", 0),
        adapted_sys_call("adapted_sys_call_fail", 1),
        adapted_raw("adapted_sys_call_raw_success", 0),
        adapted_raw("adapted_sys_call_raw_fail", 1),
        adapted_typed("adapted_sys_call_typed_success", 0),
        adapted_typed("adapted_sys_call_typed_fail", 1),
        tl_allocation("tl_allocation_success", 0, pool.clone()),
        tl_allocation("tl_allocation_fail", 1, pool),
        explicit_allocation("explicit_allocation_success", 0),
        explicit_allocation("explicit_allocation_fail", 1),
        plain("plain_sys_call_success", 0),
        plain("plain_sys_call_fail", 1),
        direct("direct_sys_call_success", 0),
        direct("direct_sys_call_fail", 1),
    ]
}
