//! `arena_pool/*` and `arena_pool_from/*`: the seed's `ArenaPoolBench` and `ArenaPoolFromBench`
//! (openjdk/jdk pull request 23765): a confined heap arena against a
//! pooled arena from an [`ArenaPool`] of 32 bytes.

use std::sync::Arc;

use gatun::memory::{Arena, ArenaPool, SegmentAllocator};

use crate::{repeat, Body, Row};

/// `ELEM_SIZE`: 4 fits the 32-byte pool; 64 does not (heap fallback).
const ELEM_SIZES: [usize; 2] = [4, 64];

/// The seed's `TEXT` (19 characters, 20 bytes with the NUL).
const TEXT: &str = "The quick brown fox";

/// All rows of both groups.
pub fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    // POOLS = create(32, 8), shared by every row and thread like the seed's static field.
    let pool = Arc::new(ArenaPool::new(32, 8).expect("pool"));
    for size in ELEM_SIZES {
        rows.push(
            Row::new("arena_pool", "confined", move || -> Body {
                Box::new(move |iters| {
                    repeat(iters, || {
                        let arena = Arena::confined();
                        arena.allocate(size, 1).expect("allocate").address()
                    })
                })
            })
            .with_param("ELEM_SIZE", size),
        );
        let p = pool.clone();
        rows.push(
            Row::new("arena_pool", "pooled", move || -> Body {
                let pool = p.clone();
                Box::new(move |iters| {
                    repeat(iters, || {
                        let arena = pool.take();
                        arena.allocate(size, 1).expect("allocate").address()
                    })
                })
            })
            .with_param("ELEM_SIZE", size),
        );
        rows.push(
            Row::new("arena_pool", "confined2", move || -> Body {
                Box::new(move |iters| {
                    repeat(iters, || {
                        let outer = Arena::confined();
                        let a = outer.allocate(size, 1).expect("allocate").address();
                        let inner = Arena::confined();
                        let b = inner.allocate(size, 1).expect("allocate").address();
                        drop(inner);
                        a.wrapping_add(b)
                    })
                })
            })
            .with_param("ELEM_SIZE", size),
        );
        let p = pool.clone();
        rows.push(
            Row::new("arena_pool", "pooled2", move || -> Body {
                let pool = p.clone();
                Box::new(move |iters| {
                    repeat(iters, || {
                        let outer = pool.take();
                        let a = outer.allocate(size, 1).expect("allocate").address();
                        let inner = pool.take();
                        let b = inner.allocate(size, 1).expect("allocate").address();
                        drop(inner);
                        a.wrapping_add(b)
                    })
                })
            })
            .with_param("ELEM_SIZE", size),
        );
    }
    rows.extend(from_rows());
    rows
}

/// `arena_pool_from/*`: `allocate_from(42i32)` and `allocate_c_string(TEXT)`, confined vs pooled
/// (pool `create(32)`, alignment 1; both fit).
fn from_rows() -> Vec<Row> {
    let pool = Arc::new(ArenaPool::new(32, 1).expect("pool"));
    let p1 = pool.clone();
    let p2 = pool;
    vec![
        Row::new("arena_pool_from", "confined_int", || -> Body {
            Box::new(|iters| {
                repeat(iters, || {
                    let arena = Arena::confined();
                    arena.allocate_from(42i32).expect("allocate").address()
                })
            })
        }),
        Row::new("arena_pool_from", "pooled_int", move || -> Body {
            let pool = p1.clone();
            Box::new(move |iters| {
                repeat(iters, || {
                    let arena = pool.take();
                    arena.allocate_from(42i32).expect("allocate").address()
                })
            })
        }),
        Row::new("arena_pool_from", "confined_string", || -> Body {
            Box::new(|iters| {
                repeat(iters, || {
                    let arena = Arena::confined();
                    arena.allocate_c_string(TEXT).expect("allocate").address()
                })
            })
        }),
        Row::new("arena_pool_from", "pooled_string", move || -> Body {
            let pool = p2.clone();
            Box::new(move |iters| {
                repeat(iters, || {
                    let arena = pool.take();
                    arena.allocate_c_string(TEXT).expect("allocate").address()
                })
            })
        }),
    ]
}
