//! A counting `#[global_allocator]` for zero-allocation tests. Include it with
//! `#[path = "common/counting.rs"] mod counting;` and install it with
//! `#[global_allocator] static GLOBAL: counting::Counting = counting::Counting;` in a test file
//! of its own.
//!
//! Counts are per thread ([`thread_allocs`]): the test harness's main thread may allocate while
//! a test runs (observed: 4 allocations in about one run in three), which must not count
//! against the code under test.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static THREAD_ALLOCS: Cell<usize> = const { Cell::new(0) };
}

/// Number of `alloc` + `realloc` calls made so far by the calling thread.
pub fn thread_allocs() -> usize {
    THREAD_ALLOCS.with(Cell::get)
}

/// Forwards to the system allocator, counting allocations and reallocations per thread.
pub struct Counting;

fn count() {
    // A const-initialised Cell without destructor: accessing it never allocates. During
    // thread teardown `try_with` fails and the allocation is simply not counted.
    let _ = THREAD_ALLOCS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded.
        unsafe { System.realloc(p, l, n) }
    }
}
