//! Zero heap allocations per operation once warm, counted over every thread of the process
//! (the calls cross threads): a non-blocking call (submit, run on a worker, complete) with
//! scalar, copied-struct, struct-return and capture handles, and an owner-thread upcall's
//! round trip from another thread. One test only, so no other test thread allocates while we
//! count.
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::*;
use gatun::linker::FunctionDescriptor as FD;
use gatun::memory::Arena;
use gatun::nonblocking::{PendingCall, WorkerPool};
use gatun::upcall::OwnerThread;
use gatun::{DowncallHandle, LinkerOption, SegmentAllocator, Value};

/// The system allocator, counting allocations of every thread.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One batch of calls: `in_flight` submitted at once, then awaited.
fn batch(pool: &WorkerPool, handles: &Handles, block: gatun::MemorySegment<'_>, in_flight: usize) {
    let mut pending: [Option<PendingCall>; 16] = Default::default();
    for (i, slot) in pending.iter_mut().take(in_flight).enumerate() {
        let mut call;
        match i % 4 {
            0 => {
                call = pool.call(&handles.capture);
                call.i32(-1).i32(i as i32 + 1);
            }
            1 => {
                call = pool.call(&handles.pair);
                call.i64(i as i64).i64(3);
            }
            2 => {
                call = pool.call(&handles.block);
                call.segment(block);
            }
            _ => {
                call = pool.call(&handles.capture);
                call.i32(7).i32(0);
            }
        }
        // SAFETY: the natives have no preconditions; the block is copied into the call.
        *slot = Some(unsafe { call.submit() });
    }
    for (i, slot) in pending.iter_mut().take(in_flight).enumerate() {
        let done = slot.take().unwrap().wait().unwrap();
        match i % 4 {
            0 => assert_eq!(done.captured("errno"), Some(i as i32 + 1)),
            1 => assert_eq!(
                done.return_segment().unwrap().get::<i64>(8).unwrap(),
                i as i64 * 3
            ),
            2 => assert_eq!(done.value(), Value::I64(40 * 41 / 2)),
            _ => assert_eq!(done.value(), Value::I32(7)),
        }
    }
}

struct Handles {
    capture: DowncallHandle,
    pair: DowncallHandle,
    block: DowncallHandle,
}

#[test]
fn no_allocation_per_operation_once_warm() {
    let handles = Handles {
        capture: link_with(
            "capture_int",
            &FD::of(V::I32, [V::I32, V::I32]),
            &[LinkerOption::CaptureCallState(&["errno"])],
        ),
        pair: link(
            "nb_pair_of",
            &FD::of(st([V::I64, V::I64]), [V::I64, V::I64]),
        ),
        block: link("nb_block_sum", &FD::of(V::I64, [bytes_struct(40)])),
    };
    let arena = Arena::confined();
    let block = arena.allocate(40, 1).unwrap();
    for i in 0..40 {
        block.set::<u8>(i, i as u8 + 1).unwrap();
    }
    let pool = WorkerPool::new(NonZeroUsize::new(2).unwrap());
    // Warm-up: the pool's records, their buffers, both workers and the queue's capacity.
    for round in 0..200 {
        batch(&pool, &handles, block, 1 + round % 16);
    }
    assert_eq!(pool.started_workers(), 2);
    // The counter is installed: linking and warming up allocated.
    assert!(ALLOCS.load(Ordering::SeqCst) > 0);
    let before = ALLOCS.load(Ordering::SeqCst);
    for round in 0..500 {
        batch(&pool, &handles, block, 1 + round % 16);
    }
    let after = ALLOCS.load(Ordering::SeqCst);
    assert_eq!(
        after - before,
        0,
        "allocations in 500 batches of non-blocking calls"
    );

    // An owner-thread upcall called from another thread: queued, run here, resumed.
    let owner = OwnerThread::new();
    let stub = owner
        .upcall_stub(
            &FD::of(V::I64, [V::I64]),
            |a| Ok(Value::I64(a.get::<i64>(0)? * 3)),
            &arena,
        )
        .unwrap();
    let address = stub.address() as usize;
    // 0: warming up, 1: warm (the thread waits), 2: measuring, 3: done.
    let phase = AtomicU64::new(0);
    let mut measured = 0;
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: the stub is an `int64_t (*)(int64_t)` that outlives this thread.
            let f: extern "C" fn(i64) -> i64 = unsafe { std::mem::transmute(address) };
            for i in 0..100 {
                assert_eq!(f(i), i * 3);
            }
            phase.store(1, Ordering::SeqCst);
            while phase.load(Ordering::SeqCst) != 2 {
                std::thread::yield_now();
            }
            for i in 0..10_000 {
                assert_eq!(f(i), i * 3);
            }
            phase.store(3, Ordering::SeqCst);
        });
        let mut before = 0;
        loop {
            owner.wait_pending(Duration::from_millis(1));
            match phase.load(Ordering::SeqCst) {
                1 => {
                    before = ALLOCS.load(Ordering::SeqCst);
                    phase.store(2, Ordering::SeqCst);
                }
                3 => break,
                _ => {}
            }
        }
        measured = ALLOCS.load(Ordering::SeqCst) - before;
    });
    assert_eq!(
        measured, 0,
        "allocations in 10,000 owner-thread round trips"
    );
    drop(stub);
}
