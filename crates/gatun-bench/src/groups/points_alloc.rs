//! `points_alloc/*` (seed table PointsAlloc, seed 003): a circle of 100 `DoublePoint`s, each
//! `unit_rotated(2πi/100)` = `{cos, sin}`, written into a confined arena opened and closed per
//! circle; reported per point (`@OperationsPerInvocation(100)`, as the seed), so a row's ns/op is
//! the time of one point including 1/100 of the arena.
//!
//! Peer rows: `direct_circle_by_ptr` (`unit_rotated_ptr(&points[i], phi)`) and
//! `direct_circle_by_value` (`points[i] = unit_rotated(phi)`), typed `extern "C" fn` pointers.

use std::hint::black_box;

use gatun::memory::{Arena, SegmentAllocator};

use crate::natives::{self, DoublePoint};
use crate::{Body, Row};

/// The group name.
pub const GROUP: &str = "points_alloc";

/// Points per circle (per body iteration).
pub const POINTS: usize = 100;

/// `phi` of point `i`: `2πi / POINTS`.
#[inline(always)]
pub fn phi(i: usize) -> f64 {
    2.0 * std::f64::consts::PI * i as f64 / POINTS as f64
}

/// Runs `circle` `iters` times, each in a fresh confined arena holding the 100 points (16 bytes,
/// alignment 8 each); `circle` gets the base pointer of the points.
#[inline(always)]
pub fn repeat_circles(iters: u64, mut circle: impl FnMut(*mut DoublePoint)) {
    for _ in 0..iters {
        let arena = Arena::confined();
        let seg = arena
            .allocate(POINTS * std::mem::size_of::<DoublePoint>(), 8)
            .expect("allocate 100 points");
        let base = seg.as_ptr().cast::<DoublePoint>();
        circle(base);
        black_box(base);
    }
}

/// The peer rows.
pub fn rows() -> Vec<Row> {
    vec![
        Row::new(GROUP, "direct_circle_by_ptr", || -> Body {
            let f: unsafe extern "C" fn(*mut DoublePoint, f64) =
                black_box(natives::unit_rotated_ptr);
            Box::new(move |iters| {
                repeat_circles(iters, |base| {
                    for i in 0..POINTS {
                        // SAFETY: `base` holds POINTS DoublePoints; `unit_rotated_ptr` writes one.
                        unsafe { f(base.add(i), phi(i)) };
                    }
                })
            })
        })
        .ops_per_invocation(POINTS as u64),
        Row::new(GROUP, "direct_circle_by_value", || -> Body {
            let f: unsafe extern "C" fn(f64) -> DoublePoint = black_box(natives::unit_rotated);
            Box::new(move |iters| {
                repeat_circles(iters, |base| {
                    for i in 0..POINTS {
                        // SAFETY: `base` holds POINTS aligned DoublePoints; `unit_rotated` has
                        // exactly this C signature.
                        unsafe { base.add(i).write(f(phi(i))) };
                    }
                })
            })
        })
        .ops_per_invocation(POINTS as u64),
    ]
}
