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
//! The `tl_allocation_*` and `adapted_sys_call_*` rows belong to the system-call adapter.

use std::ffi::c_int;
use std::hint::black_box;

use gatun::memory::{Arena, SegmentAllocator};
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
        let h = link(
            Native::SysLike,
            &sys_like_descriptor(),
            &[LinkerOption::CaptureCallState(&["errno"])],
        );
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

/// The floor, plain and explicit-allocation rows.
pub fn rows() -> Vec<Row> {
    vec![
        explicit_allocation("explicit_allocation_success", 0),
        explicit_allocation("explicit_allocation_fail", 1),
        plain("plain_sys_call_success", 0),
        plain("plain_sys_call_fail", 1),
        direct("direct_sys_call_success", 0),
        direct("direct_sys_call_fail", 1),
    ]
}
