//! Zero heap allocations per adapted system call, on success and on failure, on every path
//! (`invoke`, `call`, `invoke_raw`, typed) and for calls nested up to `CAPTURE_NESTING` deep.
//! Allocations are counted per thread (the calls all run on the test's thread).
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use std::cell::Cell;
use std::ffi::{c_int, c_void};

use common::*;
use gatun::capture::{adapt_system_call, SystemCall, CAPTURE_NESTING};
use gatun::linker::{FunctionDescriptor as FD, LinkerOption};
use gatun::Value;

// The bench harness's per-thread counting allocator (one file, no dependencies; counts alloc,
// alloc_zeroed and realloc), as in arena_pool_alloc_count.rs: counts are per thread, so the test
// harness's own threads do not disturb them.
#[path = "../../gatun-bench/src/alloc_count.rs"]
mod alloc_count;

#[global_allocator]
static GLOBAL: alloc_count::CountingAllocator = alloc_count::CountingAllocator;

fn count() -> usize {
    alloc_count::CountingAllocator::thread_count() as usize
}

const ERRNO: &[LinkerOption] = &[LinkerOption::CaptureCallState(&["errno"])];

struct Nest {
    reenter: SystemCall,
    inner: SystemCall,
    depth: Cell<usize>,
    max_depth: usize,
    sum: Cell<i64>,
}

extern "C" fn nest_cb(ctx: *mut c_void) {
    // SAFETY: `ctx` is the test's `Nest`, alive for the whole call; shared references only.
    let n = unsafe { &*ctx.cast::<Nest>() };
    n.depth.set(n.depth.get() + 1);
    let depth = n.depth.get();
    // SAFETY: capture_reenter(cb, ctx, int) -> int and capture_int(int, int) -> int.
    let r = unsafe {
        if depth < n.max_depth {
            n.reenter.invoke(&[
                Value::Address(nest_cb as *mut c_void),
                Value::Address(ctx),
                Value::I32(100 + depth as i32),
            ])
        } else {
            n.inner.invoke(&[Value::I32(-1), Value::I32(7)])
        }
    };
    n.sum.set(n.sum.get() + r.unwrap_or(0));
}

/// One round of every path, success and failure; returns a checksum.
fn round(sc: &SystemCall, n: &Nest) -> i64 {
    let typed = sc
        .typed::<unsafe extern "C" fn(c_int, c_int) -> c_int>()
        .unwrap();
    let (ok, bad, zero, err) = (5i32, -1i32, 0i32, 13i32);
    let p = |x: &i32| (x as *const i32).cast::<u8>();
    let mut sum = 0;
    // SAFETY: capture_int(int, int) -> int; the raw pointers point to ints.
    unsafe {
        sum += sc.invoke(&[Value::I32(5), Value::I32(0)]).unwrap();
        sum += sc.invoke(&[Value::I32(-1), Value::I32(13)]).unwrap();
        sum += sc.call(&[Value::I32(5), Value::I32(0)]).unwrap().unwrap();
        sum -= sc
            .call(&[Value::I32(-1), Value::I32(13)])
            .unwrap()
            .unwrap_err()
            .0 as i64;
        sum += sc.invoke_raw(&[p(&ok), p(&zero)]).unwrap();
        sum += sc.invoke_raw(&[p(&bad), p(&err)]).unwrap();
        sum += typed.invoke((5, 0)) as i64;
        sum += typed.invoke((-1, 13)) as i64;
        sum -= typed.call((-1, 13)).unwrap_err().0 as i64;
        n.depth.set(0);
        sum += n
            .reenter
            .invoke(&[
                Value::Address(nest_cb as *mut c_void),
                Value::Address((n as *const Nest).cast_mut().cast()),
                Value::I32(100),
            ])
            .unwrap();
    }
    sum
}

#[test]
fn no_allocation_per_adapted_call() {
    let sc = adapt_system_call(
        &link_with("capture_int", &FD::of(V::I32, [V::I32, V::I32]), ERRNO),
        "errno",
    )
    .unwrap();
    let reenter = adapt_system_call(
        &link_with(
            "capture_reenter",
            &FD::of(V::I32, [V::ADDRESS, V::ADDRESS, V::I32]),
            ERRNO,
        ),
        "errno",
    )
    .unwrap();
    let n = Nest {
        reenter,
        inner: sc.clone(),
        depth: Cell::new(0),
        // The outer call plus CAPTURE_NESTING - 1 nested ones: the stack's full depth.
        max_depth: CAPTURE_NESTING - 1,
        sum: Cell::new(0),
    };
    // Warm-up: the thread's capture-stack block is allocated on first use.
    let expected = round(&sc, &n);
    // 4 successes of 5, 5 failures of -13 (the Errs counted as -13 too), the nest -100.
    assert_eq!(expected, 5 * 4 - 13 * 5 - 100);
    let before = count();
    for _ in 0..1000 {
        assert_eq!(round(&sc, &n), expected);
    }
    let after = count();
    assert_eq!(after - before, 0, "heap allocations in 1000 rounds");
    // Every nested call ran: depth reached, inner results summed.
    assert_eq!(n.depth.get(), CAPTURE_NESTING - 1);
}
