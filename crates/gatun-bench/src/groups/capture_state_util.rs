//! `capture_state_util/*` (seed table CaptureStateUtilBench, seed 000): a system-call-like C
//! function `int sys_like(int fail)` that returns 0, or sets `errno` to 13 and returns -1; each
//! row returns `r` on success and `-errno` on failure, as the JDK's adapted handle does.
//!
//! Floor rows here: `direct_sys_call_{success,fail}`: a typed `extern "C" fn` pointer, `errno`
//! read with the `errno` crate only when the result is negative.

use std::ffi::c_int;
use std::hint::black_box;

use crate::natives;
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

/// The floor rows.
pub fn rows() -> Vec<Row> {
    vec![
        direct("direct_sys_call_success", 0),
        direct("direct_sys_call_fail", 1),
    ]
}
