//! Stress: 64 OS threads and 1024 tokio tasks share one [`ArenaPool`]; every iteration nests two
//! pooled arenas, writes a value unique to the thread/task and iteration into each segment,
//! and checks both values and that the live segments never overlap (the JDK PR's
//! `TestCarrierLocalArenaPools.stress`, with tokio tasks for virtual threads).
#![cfg(not(miri))]

use std::sync::Arc;
use std::time::{Duration, Instant};

use gatun::memory::{ArenaPool, SegmentAllocator};

/// One iteration: outer and inner pooled arenas, a fitting and a falling-back allocation.
fn exercise(pool: &ArenaPool, tag: u64) {
    let outer = pool.take();
    let a = outer.allocate(8, 8).unwrap();
    assert_eq!(a.get::<u64>(0).unwrap(), 0, "allocate must zero");
    a.set(0, tag).unwrap();
    let inner = pool.take();
    let b = inner.allocate(8, 8).unwrap();
    b.set(0, !tag).unwrap();
    let big = inner.allocate(256, 8).unwrap();
    big.set(248, tag).unwrap();
    assert!(!a.overlaps(&b) && !a.overlaps(&big) && !b.overlaps(&big));
    std::hint::black_box(&b);
    assert_eq!(a.get::<u64>(0).unwrap(), tag);
    assert_eq!(b.get::<u64>(0).unwrap(), !tag);
    assert_eq!(big.get::<u64>(248).unwrap(), tag);
    drop(outer); // out of order: the inner arena is still open
    assert_eq!(b.get::<u64>(0).unwrap(), !tag);
}

const BUDGET: Duration = Duration::from_millis(1500);

#[test]
fn stress_64_threads() {
    let pool = ArenaPool::new(32, 8).unwrap();
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..64u64 {
            let pool = &pool;
            s.spawn(move || {
                let mut i = 0u64;
                // At least 100 iterations each, then until the budget is spent.
                while i < 100 || (start.elapsed() < BUDGET && i < 200_000) {
                    exercise(pool, (t << 32) | i);
                    i += 1;
                }
            });
        }
    });
}

#[test]
fn stress_1024_tokio_tasks() {
    let pool = Arc::new(ArenaPool::new(32, 8).unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .unwrap();
    let start = Instant::now();
    rt.block_on(async {
        let mut handles = Vec::new();
        for t in 0..1024u64 {
            let pool = pool.clone();
            handles.push(tokio::spawn(async move {
                let mut i = 0u64;
                while i < 20 || (start.elapsed() < BUDGET && i < 20_000) {
                    // The pooled arenas live between awaits only (they are !Send).
                    exercise(&pool, (t << 32) | i);
                    i += 1;
                    tokio::task::yield_now().await;
                }
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
    });
}
