//! A stack-backed BufferStack push + allocate + close performs no heap allocation (counted by a
//! per-thread counting global allocator, installed in this test binary only).

use gatun::memory::{linker_stack, BufferStack, SegmentAllocator};

// The bench harness's per-thread counting allocator (one file, no dependencies; counts alloc,
// alloc_zeroed and realloc), as in arena_pool_alloc_count.rs: counts are per thread, so the test
// harness's own threads do not disturb them.
#[path = "../../gatun-bench/src/alloc_count.rs"]
mod alloc_count;

#[global_allocator]
static GLOBAL: alloc_count::CountingAllocator = alloc_count::CountingAllocator;

fn allocations() -> u64 {
    alloc_count::CountingAllocator::thread_count()
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
