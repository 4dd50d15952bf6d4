//! A pooled allocation that fits in the pool's region makes no heap allocation (counted by a
//! per-thread counting `#[global_allocator]`, so this file holds only this test).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use gatun::memory::{ArenaPool, SegmentAllocator};

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

struct Counting;

fn bump() {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards every call to `System`; counting touches only a const thread-local `Cell`
// without a destructor, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn count() -> u64 {
    ALLOCS.with(Cell::get)
}

#[test]
fn pooled_allocation_that_fits_does_not_allocate() {
    let pool = ArenaPool::new(32, 8).unwrap();
    let other = ArenaPool::new(16, 8).unwrap();
    // First use on this thread creates the regions (allowed to allocate).
    drop(pool.take());
    drop(other.take());

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
