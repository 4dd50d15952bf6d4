//! `points_alloc/*` (seed table PointsAlloc, seed 003): a circle of 100 `DoublePoint`s, each
//! `unit_rotated(2πi/100)` = `{cos, sin}`, written into a confined arena opened and closed per
//! circle; reported per point (`@OperationsPerInvocation(100)`, as the seed), so a row's ns/op is
//! the time of one point including 1/100 of the arena.
//!
//! gatun rows: `circle_by_ptr` (`unit_rotated_ptr(&points[i], phi)` through a handle) and
//! `circle_by_value` (`unit_rotated(phi)` through `invoke_into` with an allocator that returns
//! the slice `points[i]`, as the seed's allocator lambda).
//!
//! Peer rows: `direct_circle_by_ptr` and `direct_circle_by_value`, typed `extern "C" fn`
//! pointers.

use std::hint::black_box;

use gatun::memory::{Arena, MemorySegment, SegmentAllocator};
use gatun::{FunctionDescriptor, Value, ValueLayout as V};

use crate::handles::{double_point_layout, link, Reused};
use crate::natives::{self, DoublePoint, Native};
use crate::{Body, Row};

/// The group name.
pub const GROUP: &str = "points_alloc";

/// Points per circle (per body iteration).
pub const POINTS: usize = 100;

const POINT_SIZE: usize = std::mem::size_of::<DoublePoint>();

/// `phi` of point `i`: `2πi / POINTS`.
#[inline(always)]
pub fn phi(i: usize) -> f64 {
    2.0 * std::f64::consts::PI * i as f64 / POINTS as f64
}

/// Runs `circle` `iters` times, each in a fresh confined arena holding the 100 points (16 bytes,
/// alignment 8 each); `circle` gets the segment of the points.
#[inline(always)]
pub fn repeat_circles(iters: u64, mut circle: impl FnMut(MemorySegment<'_>)) {
    for _ in 0..iters {
        let arena = Arena::confined();
        let seg = arena
            .allocate(POINTS * POINT_SIZE, 8)
            .expect("allocate 100 points");
        circle(seg);
        black_box(seg.as_ptr());
    }
}

fn row(name: &'static str, make: impl Fn() -> Body + Send + Sync + 'static) -> Row {
    Row::new(GROUP, name, make).ops_per_invocation(POINTS as u64)
}

/// The gatun and peer rows.
pub fn rows() -> Vec<Row> {
    vec![
        row("circle_by_ptr", || -> Body {
            let d = FunctionDescriptor::of_void([V::ADDRESS, V::F64]);
            let h = link(Native::UnitRotatedPtr, &d, &[]);
            Box::new(move |iters| {
                repeat_circles(iters, |seg| {
                    for i in 0..POINTS {
                        // SAFETY: `seg` holds POINTS DoublePoints, so point `i` is in bounds.
                        let p = unsafe { seg.as_ptr().add(i * POINT_SIZE) };
                        // SAFETY: the handle describes `void unit_rotated_ptr(DoublePoint *,
                        // double)`; `p` points to a writable DoublePoint.
                        unsafe { h.invoke(&[Value::Address(p.cast()), Value::F64(phi(i))]) }
                            .unwrap();
                    }
                })
            })
        }),
        row("circle_by_value", || -> Body {
            let d = FunctionDescriptor::of(double_point_layout(), [V::F64]);
            let h = link(Native::UnitRotated, &d, &[]);
            Box::new(move |iters| {
                repeat_circles(iters, |seg| {
                    for i in 0..POINTS {
                        let slot = seg.slice(i * POINT_SIZE, POINT_SIZE).unwrap();
                        // SAFETY: the handle describes `DoublePoint unit_rotated(double)`; the
                        // result is written into `slot`.
                        unsafe { h.invoke_into(&Reused(slot), &[Value::F64(phi(i))]) }.unwrap();
                    }
                })
            })
        }),
        row("direct_circle_by_ptr", || -> Body {
            let f: unsafe extern "C" fn(*mut DoublePoint, f64) =
                black_box(natives::unit_rotated_ptr);
            Box::new(move |iters| {
                repeat_circles(iters, |seg| {
                    let base = seg.as_ptr().cast::<DoublePoint>();
                    for i in 0..POINTS {
                        // SAFETY: `base` holds POINTS DoublePoints; `unit_rotated_ptr` writes one.
                        unsafe { f(base.add(i), phi(i)) };
                    }
                })
            })
        }),
        row("direct_circle_by_value", || -> Body {
            let f: unsafe extern "C" fn(f64) -> DoublePoint = black_box(natives::unit_rotated);
            Box::new(move |iters| {
                repeat_circles(iters, |seg| {
                    let base = seg.as_ptr().cast::<DoublePoint>();
                    for i in 0..POINTS {
                        // SAFETY: `base` holds POINTS aligned DoublePoints; `unit_rotated` has
                        // exactly this C signature.
                        unsafe { base.add(i).write(f(phi(i))) };
                    }
                })
            })
        }),
    ]
}
