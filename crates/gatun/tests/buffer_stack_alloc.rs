//! A stack-backed BufferStack push + allocate + close performs no heap allocation (counted by a
//! per-thread counting global allocator, installed in this test binary only).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use gatun::memory::{linker_stack, BufferStack, SegmentAllocator};

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

struct Counting;

// SAFETY: forwards every call to `System` unchanged; counting touches only a const-initialised
// thread-local `Cell` without a destructor, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCS.with(Cell::get)
}

#[test]
fn stack_backed_frames_do_not_allocate() {
    let stack = BufferStack::new(128, 1).unwrap();
    let linker = linker_stack();
    // First use on this thread creates the per-thread blocks.
    stack.push_frame(64, 1).unwrap().close().unwrap();
    linker.push_frame(48, 8).unwrap().close().unwrap();

    let before = allocations();
    for i in 0..1000u64 {
        let frame = stack.push_frame(64, 1).unwrap();
        assert!(!frame.is_fallback());
        let segment = frame.allocate(8, 1).unwrap();
        segment.set_unaligned(0, i).unwrap();
        std::hint::black_box(segment.address());
        frame.close().unwrap();

        let outer = linker.push_frame(48, 8).unwrap();
        let inner = linker.push_frame(48, 8).unwrap();
        inner.allocate(32, 16).unwrap().set(0, 1.5f64).unwrap();
        outer.allocate(16, 8).unwrap().set(8, 2.5f64).unwrap();
        inner.close().unwrap();
        drop(outer);
    }
    assert_eq!(allocations() - before, 0);

    // The counter works: a fallback frame allocates its heap block.
    let before = allocations();
    let huge = stack.push_frame(4096, 8).unwrap();
    assert!(huge.is_fallback());
    huge.close().unwrap();
    assert!(allocations() > before);
}
