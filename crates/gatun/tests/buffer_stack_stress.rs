//! BufferStack stress: the JDK's `TestBufferStackStress` in Rust terms. Every frame's segment is
//! written with its owner's id and read back; if two live frames ever shared memory, an owner
//! would read another's id.

#![cfg(not(miri))]

use std::hint::black_box;
use std::sync::Arc;

use gatun::memory::{linker_stack, BufferStack, SegmentAllocator};

/// 64 OS threads x 1,000,000 frames each (100,000 where the suite runs under an emulator:
/// every target but x86-64, whose suites run natively or under Wine), on one 256-byte stack,
/// each thread keeping an outer frame open for the whole run (so all blocks are live at once).
#[test]
fn os_threads() {
    const THREADS: u64 = 64;
    const FRAMES: u64 = if cfg!(target_arch = "x86_64") {
        1_000_000
    } else {
        100_000
    };
    let stack = BufferStack::new(256, 1).unwrap();
    let outer_addresses = std::thread::scope(|s| {
        let barrier = Arc::new(std::sync::Barrier::new(THREADS as usize));
        let handles: Vec<_> = (0..THREADS)
            .map(|id| {
                let stack = &stack;
                let barrier = Arc::clone(&barrier);
                s.spawn(move || {
                    let outer = stack.push_frame(16, 8).unwrap();
                    assert!(!outer.is_fallback());
                    let mine = outer.allocate(16, 8).unwrap();
                    mine.set(0, id).unwrap();
                    barrier.wait();
                    // Kept cheap for debug builds: raw volatile accesses instead of the
                    // checked accessors (64M iterations must run in seconds unoptimised).
                    let mut previous = u64::MAX;
                    for i in 0..FRAMES {
                        let frame = stack.push_frame(8, 8).unwrap();
                        let p = frame.allocate(8, 8).unwrap().as_ptr().cast::<u64>();
                        let value = id << 32 | (i & 0xFFFF_FFFF);
                        // SAFETY: `p` is the frame's 8-byte, 8-aligned segment, alive until
                        // the frame is closed below.
                        unsafe {
                            if i > 0 {
                                // Reused, not zeroed: the last frame's value is still there.
                                assert_eq!(p.read_volatile(), previous);
                            }
                            p.write_volatile(value);
                            assert_eq!(p.read_volatile(), value);
                        }
                        previous = value;
                        drop(frame);
                    }
                    assert_eq!(mine.get::<u64>(0).unwrap(), id);
                    let address = mine.address();
                    outer.close().unwrap();
                    address
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    let mut sorted = outer_addresses.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        THREADS as usize,
        "each thread has its own block"
    );
}

/// 1024 tokio tasks on a multi-thread runtime, `yield_now` between frames, on the linker stack
/// (frames aligned to 8 as the linker pushes them).
#[test]
fn tokio_tasks() {
    const TASKS: u64 = 1024;
    const FRAMES: u64 = 1000;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .unwrap();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|id| {
                tokio::spawn(async move {
                    for i in 0..FRAMES {
                        {
                            let frame = linker_stack().push_frame(24, 8).unwrap();
                            let segment = frame.allocate(24, 8).unwrap();
                            segment.set(0, id).unwrap();
                            segment.set(8, i).unwrap();
                            let segment = black_box(segment);
                            assert_eq!(segment.get::<u64>(0).unwrap(), id);
                            assert_eq!(segment.get::<u64>(8).unwrap(), i);
                            frame.close().unwrap();
                        }
                        tokio::task::yield_now().await;
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
}

/// `!Send` futures on one thread that hold frames across `.await` and finish in any order:
/// out-of-order drops are deferred, never reused while live, and the stack empties at the end.
#[test]
fn local_tasks_holding_frames_across_await() {
    const TASKS: u64 = 64;
    const ROUNDS: u64 = 200;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let stack = Arc::new(BufferStack::new(256, 1).unwrap());
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|id| {
                let stack = Arc::clone(&stack);
                tokio::task::spawn_local(async move {
                    for round in 0..ROUNDS {
                        let frame = stack.push_frame(16, 8).unwrap();
                        let segment = frame.allocate(16, 8).unwrap();
                        segment.set(0, id).unwrap();
                        segment.set(8, round).unwrap();
                        // Other tasks push, pop and drop frames meanwhile.
                        for _ in 0..(id + round) % 3 {
                            tokio::task::yield_now().await;
                        }
                        assert_eq!(segment.get::<u64>(0).unwrap(), id);
                        assert_eq!(segment.get::<u64>(8).unwrap(), round);
                        drop(frame);
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    // Every deferred frame was released: a full-size frame fits again.
    let frame = stack.push_frame(256, 1).unwrap();
    assert!(!frame.is_fallback());
    frame.close().unwrap();
}
