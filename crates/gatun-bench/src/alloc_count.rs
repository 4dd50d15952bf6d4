//! A counting global allocator: allocations per operation, counted per thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

/// Wraps [`System`] and counts `alloc`, `alloc_zeroed` and `realloc` calls made by the current
/// thread. Install it in a binary with
/// `#[global_allocator] static A: gatun_bench::CountingAllocator = gatun_bench::CountingAllocator;`.
pub struct CountingAllocator;

impl CountingAllocator {
    /// Allocations made so far by the current thread (0 if the allocator is not installed).
    pub fn thread_count() -> u64 {
        ALLOCS.try_with(Cell::get).unwrap_or(0)
    }
}

#[inline]
fn bump() {
    // `try_with`: during thread teardown the slot may be gone; those allocations are not ours.
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards every call to `System` unchanged; counting touches only a const-initialised
// thread-local `Cell` without a destructor, which never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
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
