//! A pooled allocation that fits in the pool's region makes no heap allocation (counted by a
//! per-thread counting `#[global_allocator]`, so this file holds only this test).

use gatun::memory::{ArenaPool, SegmentAllocator};

// The bench harness's per-thread counting allocator (one file, no dependencies), reused here
// rather than copied.
#[path = "../../gatun-bench/src/alloc_count.rs"]
mod alloc_count;

#[global_allocator]
static GLOBAL: alloc_count::CountingAllocator = alloc_count::CountingAllocator;

fn count() -> u64 {
    alloc_count::CountingAllocator::thread_count()
}

#[test]
fn pooled_allocation_that_fits_does_not_allocate() {
    let pool = ArenaPool::new(32, 8).unwrap();
    let other = ArenaPool::new(16, 8).unwrap();
    // The first pooled allocation on this thread creates the regions (allowed to allocate).
    pool.take().allocate(1, 1).unwrap();
    other.take().allocate(1, 1).unwrap();

    let before = count();
    for i in 0..1000u64 {
        let arena = pool.take();
        let a = arena.allocate(8, 8).unwrap();
        a.set(0, i).unwrap();
        let inner = pool.take();
        let b = inner.allocate_uninit(4, 4).unwrap();
        b.set(0, 42i32).unwrap();
        let c = inner.allocate_from(7i32).unwrap();
        // Alternating between pools goes through the registry lookup: still no allocation.
        let o = other.take();
        let d = o.allocate(16, 8).unwrap();
        assert_eq!(a.get::<u64>(0).unwrap(), i);
        assert_eq!(b.get::<i32>(0).unwrap() + c.get::<i32>(0).unwrap(), 49);
        assert_eq!(d.get::<u64>(8).unwrap(), 0);
    }
    assert_eq!(
        count() - before,
        0,
        "pooled allocations that fit must not allocate"
    );

    // A request that does not fit does allocate (one heap block), showing the counter works.
    let before = count();
    {
        let arena = pool.take();
        arena.allocate(64, 8).unwrap();
    }
    assert_eq!(count() - before, 1);
}
