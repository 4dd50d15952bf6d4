//! Heap accounting with a counting `#[global_allocator]` (this file is its own test binary, so
//! the allocator sees only these tests).
//!
//! - Dropping an arena (confined or shared) frees every block it allocated: allocations ==
//!   deallocations and allocated bytes == freed bytes, and each arena allocation is exactly one
//!   heap block (the arena keeps no other bookkeeping).
//! - A `SlicingAllocator` or `PrefixAllocator` allocation performs no heap allocation.
//! - An arena block's size follows the requested size, not the alignment: a 1-byte layout
//!   aligned to 2^32 asks the global allocator for one small block (so only that many bytes
//!   are zeroed), not 4 GiB.
//!
//! Counting is per thread and only inside an explicit window ([`count`]), so the test harness's
//! own threads and allocations never disturb the figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use gatun::layout::{MemoryLayout, ValueLayout};
use gatun::memory::{Arena, MemorySegment, PrefixAllocator, SegmentAllocator, SlicingAllocator};

/// What one thread did to the heap inside a counting window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    allocs: u64,
    deallocs: u64,
    bytes_allocated: u64,
    bytes_freed: u64,
    /// The largest `Layout::size()` requested (allocations and reallocations).
    largest_request: u64,
}

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(false) };
    static COUNTS: Cell<Counts> = const {
        Cell::new(Counts {
            allocs: 0,
            deallocs: 0,
            bytes_allocated: 0,
            bytes_freed: 0,
            largest_request: 0,
        })
    };
}

fn record(f: impl FnOnce(&mut Counts)) {
    // `try_with`: during thread teardown the slots may be gone; nothing is counted then.
    let _ = ENABLED.try_with(|enabled| {
        if enabled.get() {
            let _ = COUNTS.try_with(|c| {
                let mut counts = c.get();
                f(&mut counts);
                c.set(counts);
            });
        }
    });
}

struct Counting;

// SAFETY: every call is forwarded to `System` unchanged; counting touches only const-initialised
// thread-locals without destructors, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(|c| {
            c.allocs += 1;
            c.bytes_allocated += layout.size() as u64;
            c.largest_request = c.largest_request.max(layout.size() as u64);
        });
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(|c| {
            c.allocs += 1;
            c.bytes_allocated += layout.size() as u64;
            c.largest_request = c.largest_request.max(layout.size() as u64);
        });
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        record(|c| {
            c.deallocs += 1;
            c.bytes_freed += layout.size() as u64;
        });
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(|c| {
            c.deallocs += 1;
            c.bytes_freed += layout.size() as u64;
            c.allocs += 1;
            c.bytes_allocated += new_size as u64;
            c.largest_request = c.largest_request.max(new_size as u64);
        });
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` with counting enabled on this thread and returns its result and what it did to
/// the heap.
fn count<R>(f: impl FnOnce() -> R) -> (R, Counts) {
    COUNTS.with(|c| c.set(Counts::default()));
    ENABLED.with(|e| e.set(true));
    let r = f();
    ENABLED.with(|e| e.set(false));
    (r, COUNTS.with(Cell::get))
}

/// `struct { char; double; }`, built outside the counting windows (layouts allocate).
fn point() -> MemoryLayout {
    MemoryLayout::c_struct([ValueLayout::I8, ValueLayout::F64]).unwrap()
}

/// Makes `n` rounds of allocations of assorted sizes, alignments and kinds from `a`, touching
/// each segment; returns how many allocation calls were made. Allocates nothing itself.
fn churn<A: SegmentAllocator>(a: &A, n: usize, point: &MemoryLayout) -> u64 {
    let mut calls = 0;
    for i in 0..n {
        let size = 1 + (i * 37) % 300;
        let align = 1usize << (i % 7);
        let s = a.allocate(size, align).unwrap();
        s.set::<u8>(size - 1, i as u8).unwrap();
        let u = a.allocate_uninit(size, align).unwrap();
        u.fill(1);
        let c = a.allocate_c_string("arena-owned C string").unwrap();
        assert_eq!(c.byte_size(), 21);
        let x = a.allocate_from(i as u64).unwrap();
        assert_eq!(x.get::<u64>(0).unwrap(), i as u64);
        let arr = a.allocate_array(point, 4).unwrap();
        arr.set::<f64>(8, 1.0).unwrap();
        let _empty = a.allocate(0, 8).unwrap();
        calls += 6;
    }
    calls
}

#[test]
fn dropping_a_confined_arena_frees_everything() {
    let point = point();
    let (calls, counts) = count(|| {
        let arena = Arena::confined();
        let calls = churn(&arena, 500, &point);
        drop(arena);
        calls
    });
    assert_eq!(
        counts.allocs, calls,
        "one heap block per arena allocation: {counts:?}"
    );
    assert_eq!(counts.deallocs, counts.allocs, "{counts:?}");
    assert_eq!(counts.bytes_freed, counts.bytes_allocated, "{counts:?}");
    assert!(counts.bytes_allocated > 0);
}

#[test]
fn an_unused_arena_allocates_nothing() {
    let ((), counts) = count(|| {
        let confined = Arena::confined();
        let shared = Arena::shared();
        drop((confined, shared));
    });
    assert_eq!(counts, Counts::default());
}

#[test]
fn arena_frees_happen_at_drop_not_before() {
    let point = point();
    let arena = Arena::confined();
    let (_, during) = count(|| churn(&arena, 50, &point));
    assert_eq!(during.deallocs, 0, "{during:?}");
    let ((), at_drop) = count(|| drop(arena));
    assert_eq!(at_drop.allocs, 0);
    assert_eq!(at_drop.deallocs, during.allocs);
    assert_eq!(at_drop.bytes_freed, during.bytes_allocated);
}

#[test]
fn dropping_a_shared_arena_frees_what_8_threads_allocated() {
    let threads = 8;
    let per_thread = 200;
    let point = &point();
    let arena = Arena::shared();
    let worker_counts: Vec<(u64, Counts)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let arena = &arena;
                scope.spawn(move || count(|| churn(arena, per_thread, point)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut allocated = Counts::default();
    for (calls, c) in &worker_counts {
        assert_eq!(c.allocs, *calls, "one heap block per allocation: {c:?}");
        assert_eq!(c.deallocs, 0, "nothing freed before the arena drops: {c:?}");
        allocated.allocs += c.allocs;
        allocated.bytes_allocated += c.bytes_allocated;
    }
    let ((), freed) = count(|| drop(arena));
    assert_eq!(freed.allocs, 0);
    assert_eq!(freed.deallocs, allocated.allocs);
    assert_eq!(freed.bytes_freed, allocated.bytes_allocated);
    assert_eq!(allocated.allocs, (threads * per_thread * 6) as u64);
}

#[test]
fn slicing_allocator_allocations_do_not_touch_the_heap() {
    let mut buffer = vec![0u8; 1 << 20];
    let point = point();
    let (calls, counts) = count(|| {
        let segment = MemorySegment::of_slice(&mut buffer);
        let mut slicing = SlicingAllocator::new(segment);
        let mut calls = 0;
        for _ in 0..4 {
            calls += churn(&slicing, 100, &point);
            // Exhaustion is reported without allocating, too.
            assert!(slicing.allocate(2 << 20, 1).is_err());
            slicing.reset();
        }
        calls
    });
    assert!(calls > 0);
    assert_eq!(
        counts,
        Counts::default(),
        "SlicingAllocator touched the heap"
    );
}

#[test]
fn prefix_allocator_allocations_do_not_touch_the_heap() {
    let arena = Arena::confined();
    let scratch = arena.allocate(4096, 64).unwrap();
    let ((), counts) = count(|| {
        let prefix = PrefixAllocator::new(scratch);
        for i in 0..1000u64 {
            let s = prefix.allocate_from(i).unwrap();
            assert_eq!(s.get::<u64>(0).unwrap(), i);
            let c = prefix.allocate_c_string("scratch").unwrap();
            assert_eq!(c.byte_size(), 8);
        }
    });
    assert_eq!(
        counts,
        Counts::default(),
        "PrefixAllocator touched the heap"
    );
}

#[test]
fn a_one_byte_layout_aligned_to_4_gib_asks_for_a_small_block() {
    let layout = MemoryLayout::from(ValueLayout::BOOL)
        .with_byte_alignment(1 << 32)
        .unwrap();
    let confined = Arena::confined();
    let shared = Arena::shared();
    let (results, counts) = count(|| {
        [
            confined.allocate_layout(&layout).map(|s| s.address()),
            confined.allocate_uninit(1, 1 << 32).map(|s| s.address()),
            shared.allocate_layout(&layout).map(|s| s.address()),
            Arena::global()
                .allocate_layout(&layout)
                .map(|s| s.address()),
        ]
    });
    // Blocks the confined and shared arenas got (the global arena's are never freed).
    let freeable = results[..3].iter().filter(|r| r.is_ok()).count() as u64;
    for r in results {
        match r {
            Ok(address) => assert_eq!(address % (1 << 32), 0),
            // The system allocator may refuse to align that far; it must say so, typed.
            Err(e) => assert_eq!(
                e,
                gatun::Error::OutOfMemory {
                    size: 1,
                    alignment: 1 << 32
                }
            ),
        }
    }
    if cfg!(windows) {
        // gatun refuses alignments above 1 GiB on Windows before asking the system allocator
        // (which would commit size + alignment bytes there).
        assert_eq!(counts.allocs, 0, "{counts:?}");
        return;
    }
    assert_eq!(counts.allocs, 4, "one block per allocation: {counts:?}");
    // 1 byte rounded up to 8, plus the arena's 24-byte trailer; never the alignment.
    assert_eq!(counts.largest_request, 32, "{counts:?}");
    assert_eq!(counts.bytes_allocated, 4 * 32, "{counts:?}");
    let ((), freed) = count(|| drop((confined, shared)));
    assert_eq!(freed.deallocs, freeable, "{freed:?}");
    assert_eq!(freed.bytes_freed, freeable * 32, "{freed:?}");
}
