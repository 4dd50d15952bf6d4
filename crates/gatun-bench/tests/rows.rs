//! Every registered row builds and runs, and the gatun handles the call rows use compute what
//! the peers compute (so the rows compare like with like).
// The rows call through gatun's downcall handles: only where the executor runs.
#![cfg(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "s390x",
        all(target_arch = "powerpc64", target_endian = "little")
    ),
    not(miri)
))]

use std::collections::HashSet;

use gatun::memory::{Arena, MemorySegment, SegmentAllocator};
use gatun::{FunctionDescriptor, LinkerOption, Value, ValueLayout as V};
use gatun_bench::handles::{double_point_layout, link, Reused};
use gatun_bench::natives::{DoublePoint, Native, SYS_LIKE_ERRNO};

#[test]
fn every_row_runs_and_ids_are_unique() {
    let rows = gatun_bench::rows();
    let mut ids = HashSet::new();
    for row in &rows {
        assert!(ids.insert(row.id()), "duplicate row id {}", row.id());
        let mut body = (row.make)();
        body(3);
    }
    for id in [
        "call_overhead/gatun_add6",
        "call_overhead/direct_add6",
        "call_overhead/libffi_add6",
        "call_overhead_by_value/by_value",
        "call_overhead_by_value/direct_by_value",
        "call_overhead_by_value/libffi_by_value",
        "points_alloc/circle_by_value",
        "capture_state_util/plain_sys_call_fail",
        "capture_state_util/direct_sys_call_fail",
        "capture_state_util/explicit_allocation_fail",
        "capture_state_util/tl_allocation_fail",
        "capture_state_util/adapted_sys_call_success",
        "capture_state_util/adapted_sys_call_fail",
    ] {
        // the libffi peer rows exist where libffi is linked (`cfg(libffi_peer)`, build.rs)
        let peer = id.contains("/libffi_");
        assert!(
            ids.contains(id) || (peer && !cfg!(libffi_peer)),
            "missing row {id}"
        );
    }
}

#[test]
fn gatun_handles_agree_with_the_natives() {
    let h = link(
        Native::Add6,
        &FunctionDescriptor::of(V::I64, [V::I64; 6]),
        &[],
    );
    let args: Vec<Value> = (1..=6).map(Value::I64).collect();
    // SAFETY: the descriptor matches `long add6(long × 6)`.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I64(21));

    let d = FunctionDescriptor::of(double_point_layout(), []);
    let h = link(Native::Unit, &d, &[]);
    let mut point = DoublePoint { x: 5.0, y: 5.0 };
    let p: *mut DoublePoint = &mut point;
    // SAFETY: `point` is 16 bytes, not otherwise accessed while `seg` is used.
    let seg = unsafe { MemorySegment::from_raw_parts(p.cast(), 16) };
    let alloc = Reused(seg);
    // SAFETY: the descriptor matches `DoublePoint unit(void)`.
    let out = unsafe { h.invoke_into(&alloc, &[]) }.unwrap();
    assert_eq!(out.as_segment().unwrap().address(), seg.address());
    assert_eq!(seg.get::<f64>(0).unwrap(), 1.0);
    assert_eq!(seg.get::<f64>(8).unwrap(), 0.0);

    let capture = [LinkerOption::CaptureCallState(&["errno"])];
    let h = link(
        Native::SysLike,
        &FunctionDescriptor::of(V::I32, [V::I32]),
        &capture,
    );
    let arena = Arena::confined();
    let state = arena.allocate(4, 4).unwrap();
    // SAFETY: the descriptor matches `int sys_like(int)` with a leading capture segment.
    let r = unsafe { h.invoke(&[Value::Segment(state), Value::I32(1)]) }.unwrap();
    assert_eq!(r, Value::I32(-1));
    assert_eq!(state.get::<i32>(0).unwrap(), SYS_LIKE_ERRNO);

    let sc = gatun::capture::adapt_system_call(&h, "errno").unwrap();
    // SAFETY: the adapter wraps `int sys_like(int)`.
    unsafe {
        assert_eq!(sc.invoke(&[Value::I32(0)]), Ok(0));
        assert_eq!(sc.invoke(&[Value::I32(1)]), Ok(-(SYS_LIKE_ERRNO as i64)));
    }
}

#[test]
fn reused_allocator_hands_out_its_segment_and_invoke_into_rejects_what_does_not_fit() {
    let mut buf = [0u64; 2];
    // SAFETY: `buf` is 16 bytes, 8-aligned, not otherwise accessed while `seg` is used.
    let seg = unsafe { MemorySegment::from_raw_parts(buf.as_mut_ptr().cast(), 16) };
    let r = Reused(seg);
    // Like the JDK benchmarks' lambda, it does not look at the request...
    assert_eq!(r.allocate(16, 8).unwrap().address(), seg.address());
    assert_eq!(r.allocate(17, 8).unwrap().address(), seg.address());
    // ...and `invoke_into` rejects a segment shorter than the return layout (24-byte `Long3`)
    // instead of writing past it.
    let h = link(
        Native::Long3,
        &FunctionDescriptor::of(gatun_bench::handles::long3_layout(), []),
        &[],
    );
    // SAFETY: the handle describes `Long3 long3(void)`.
    let e = unsafe { h.invoke_into(&r, &[]) }.unwrap_err();
    assert!(matches!(e, gatun::Error::OutOfBounds { .. }), "{e}");
    assert_eq!(buf, [0, 0]);
}
