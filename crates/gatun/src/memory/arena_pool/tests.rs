//! Unit tests of [`ArenaPool`]: the JDK PR's `TestCarrierLocalArenaPools` (PR 23765) in Rust
//! terms. Single-threaded tests also run under Miri.

use super::*;
use crate::error::Error;
use crate::layout::ValueLayout;

fn pools() -> Vec<ArenaPool> {
    vec![
        ArenaPool::new(64, 1).unwrap(),
        ArenaPool::new(64, 16).unwrap(),
        ArenaPool::for_layout(&MemoryLayout::sequence_layout(64, ValueLayout::I8).unwrap())
            .unwrap(),
    ]
}

#[test]
fn invalid_size_or_alignment_is_rejected() {
    for align in [0, 3, 6, 12, usize::MAX] {
        assert_eq!(
            ArenaPool::new(1, align).unwrap_err(),
            Error::InvalidAlignment { alignment: align }
        );
    }
    assert!(matches!(
        ArenaPool::new(usize::MAX, 1),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        ArenaPool::new(isize::MAX as usize, 16),
        Err(Error::SizeOverflow { .. })
    ));
    // A zero-sized pool is valid: every non-empty allocation goes to the heap.
    let pool = ArenaPool::new(0, 16).unwrap();
    let outer = pool.take();
    let a = outer.allocate(1, 1).unwrap();
    let inner = pool.take();
    let b = inner.allocate(1, 1).unwrap();
    assert!(!a.overlaps(&b));
    drop(inner);
    let empty = outer.allocate(0, 1).unwrap();
    assert_eq!(empty.byte_size(), 0);
}

#[test]
fn invalid_allocation_arguments_are_rejected_without_side_effects() {
    let pool = ArenaPool::new(32, 8).unwrap();
    let arena = pool.take();
    assert_eq!(
        arena.allocate(4, 3).unwrap_err(),
        Error::InvalidAlignment { alignment: 3 }
    );
    assert!(matches!(
        arena.allocate_uninit(usize::MAX, 1),
        Err(Error::SizeOverflow { .. })
    ));
    // Nothing was consumed: the first valid allocation is at the region's start.
    let first = arena.allocate(4, 8).unwrap().address();
    drop(arena);
    assert_eq!(first_address(&pool), first);
}

/// The address of the first 4-byte allocation of a fresh arena of `pool`.
fn first_address(pool: &ArenaPool) -> usize {
    let arena = pool.take();
    let a = arena.allocate(4, 8).unwrap().address();
    a
}

#[test]
fn reuse() {
    for pool in pools() {
        let a = first_address(&pool);
        let b = first_address(&pool);
        assert_eq!(a, b, "{pool}");
        assert_eq!(a % pool.byte_alignment().max(8), 0);
    }
}

#[test]
fn zeroing() {
    for pool in pools() {
        {
            let arena = pool.take();
            let seg = arena.allocate(8, 1).unwrap();
            seg.fill(1);
            assert_eq!(seg.to_vec(), [1; 8]);
        }
        let arena = pool.take();
        let seg = arena.allocate(8, 1).unwrap();
        assert_eq!(seg.to_vec(), [0; 8], "{pool}");
    }
}

#[test]
fn zeroing_covers_every_small_size() {
    let pool = ArenaPool::new(64, 8).unwrap();
    for size in 0..=40 {
        {
            let arena = pool.take();
            arena.allocate_uninit(64, 1).unwrap().fill(0xAB);
        }
        let arena = pool.take();
        let seg = arena.allocate(size, 1).unwrap();
        assert!(seg.to_vec().iter().all(|&b| b == 0), "size {size}");
        // Bytes past the segment were not touched.
        let rest = arena.allocate_uninit(64 - size, 1).unwrap();
        assert!(rest.to_vec().iter().all(|&b| b == 0xAB), "size {size}");
    }
}

#[test]
fn allocate_uninit_does_not_zero_pooled_memory() {
    let pool = ArenaPool::new(16, 8).unwrap();
    {
        let arena = pool.take();
        arena
            .allocate(8, 8)
            .unwrap()
            .set(0, 0x0102_0304_0506_0708u64)
            .unwrap();
    }
    let arena = pool.take();
    let seg = arena.allocate_uninit(8, 8).unwrap();
    assert_eq!(seg.get::<u64>(0).unwrap(), 0x0102_0304_0506_0708);
}

#[test]
fn large_allocation_falls_back_to_the_heap() {
    for pool in pools() {
        let arena = pool.take();
        let small = arena.allocate(8, 1).unwrap();
        let large = arena.allocate(1024, 8).unwrap();
        assert_eq!(large.byte_size(), 1024);
        assert_eq!(large.address() % 8, 0);
        assert!(large.to_vec().iter().all(|&b| b == 0));
        assert!(!large.overlaps(&small));
        large.fill(7);
        // The region is still usable after a fallback.
        let next = arena.allocate(8, 1).unwrap();
        assert_eq!(next.address(), small.address() + 8, "{pool}");
        let uninit = arena.allocate_uninit(4096, 64).unwrap();
        assert_eq!(uninit.address() % 64, 0);
    }
}

#[test]
fn allocation_same_as_pool_size() {
    let pool = ArenaPool::new(4, 1).unwrap();
    // Alignment 1: the region is only byte-aligned (Miri places it at any address).
    let a = pool.take().allocate(4, 1).unwrap().address();
    {
        let arena = pool.take();
        let five = arena.allocate(5, 1).unwrap();
        assert_ne!(five.address(), a);
    }
    for _ in 0..10 {
        let arena = pool.take();
        let first = arena.allocate(4, 1).unwrap();
        assert_eq!(first.address(), a);
        let second = arena.allocate(4, 1).unwrap();
        assert_ne!(second.address(), a);
        assert!(!first.overlaps(&second));
    }
}

#[test]
fn allocation_capture_state_layout() {
    let layout = MemoryLayout::c_struct([ValueLayout::I32]).unwrap();
    let pool = ArenaPool::for_layout(&layout).unwrap();
    assert_eq!(pool.byte_size(), 4);
    assert_eq!(pool.byte_alignment(), 4);
    let a = {
        let arena = pool.take();
        arena.allocate_layout(&layout).unwrap().address()
    };
    for _ in 0..10 {
        let arena = pool.take();
        assert_eq!(arena.allocate_layout(&layout).unwrap().address(), a);
        assert_ne!(arena.allocate_layout(&layout).unwrap().address(), a);
    }
}

#[test]
fn alignment_is_absolute() {
    let pool = ArenaPool::new(64, 1).unwrap();
    let arena = pool.take();
    arena.allocate(1, 1).unwrap();
    for align in [2, 4, 8, 16, 32] {
        let seg = arena.allocate(1, align).unwrap();
        assert_eq!(seg.address() % align, 0);
    }
}

#[test]
fn nested_arenas_share_the_region() {
    let pool = ArenaPool::new(32, 8).unwrap();
    let outer = pool.take();
    let a = outer.allocate(4, 4).unwrap();
    let inner = pool.take();
    let b = inner.allocate(4, 4).unwrap();
    assert_eq!(b.address(), a.address() + 4);
    drop(inner);
    // Not recycled while the outer arena is open.
    let inner = pool.take();
    let c = inner.allocate(4, 4).unwrap();
    assert_eq!(c.address(), a.address() + 8);
    drop(inner);
    let start = a.address();
    drop(outer);
    assert_eq!(first_address(&pool), start);
}

#[test]
fn out_of_order_use() {
    let pool = ArenaPool::new(32, 8).unwrap();
    let a = pool.take();
    let sa = a.allocate(8, 8).unwrap();
    sa.set(0, 1u64).unwrap();
    let b = pool.take();
    let sb = b.allocate(8, 8).unwrap();
    sb.set(0, 2u64).unwrap();
    assert!(!sa.overlaps(&sb));
    let start = sa.address();
    drop(a);
    let c = pool.take();
    let sc = c.allocate(8, 8).unwrap();
    sc.set(0, 3u64).unwrap();
    assert!(!sb.overlaps(&sc));
    assert_eq!(sb.get::<u64>(0).unwrap(), 2);
    drop(b);
    assert_eq!(sc.get::<u64>(0).unwrap(), 3);
    // Fill the rest: still no overlap with the live segment of C.
    let sd = c.allocate(16, 8).unwrap();
    assert!(!sd.overlaps(&sc));
    drop(c);
    // All closed: recycled.
    assert_eq!(first_address(&pool), start);
}

#[test]
fn pools_have_separate_regions() {
    let p = ArenaPool::new(32, 8).unwrap();
    let q = ArenaPool::new(32, 8).unwrap();
    let a = p.take();
    let b = q.take();
    let sa = a.allocate(32, 8).unwrap();
    let sb = b.allocate(32, 8).unwrap();
    assert!(!sa.overlaps(&sb));
    // Alternating pools keeps each pool's recycling.
    let (pa, qa) = (sa.address(), sb.address());
    drop((a, b));
    assert_eq!(first_address(&p), pa);
    assert_eq!(first_address(&q), qa);
    for _ in 0..3 {
        let x = first_address(&p);
        let y = first_address(&q);
        assert_ne!(x, y);
        assert_eq!(first_address(&p), x);
        assert_eq!(first_address(&q), y);
    }
}

#[test]
fn dropped_pools_are_freed_and_ids_not_reused() {
    // Many pools created and dropped on one thread: each drop frees this thread's region
    // (Miri checks for leaks and use-after-free).
    for _ in 0..20 {
        let pool = ArenaPool::new(16, 8).unwrap();
        let a = first_address(&pool);
        assert_eq!(first_address(&pool), a);
    }
    let kept = ArenaPool::new(16, 8).unwrap();
    let a = first_address(&kept);
    let other = ArenaPool::new(16, 8).unwrap();
    let _ = first_address(&other);
    drop(other);
    assert_eq!(first_address(&kept), a);
}

#[test]
fn regions_are_created_on_first_fitting_allocation_and_freed_with_the_pool() {
    std::thread::spawn(|| {
        let pool = ArenaPool::new(16, 8).unwrap();
        let arena = pool.take();
        assert_eq!(thread_region_count(), 0, "take() alone creates nothing");
        arena.allocate(64, 8).unwrap();
        assert_eq!(
            thread_region_count(),
            0,
            "a request larger than the pool never joins"
        );
        arena.allocate(8, 8).unwrap();
        assert_eq!(thread_region_count(), 1);
        drop(arena);
        // One region per pool per thread, however many arenas.
        for _ in 0..3 {
            first_address(&pool);
        }
        let other = ArenaPool::new(16, 8).unwrap();
        first_address(&other);
        assert_eq!(thread_region_count(), 2);
        drop(pool);
        assert_eq!(
            thread_region_count(),
            1,
            "dropping a pool frees this thread's region"
        );
        drop(other);
        assert_eq!(thread_region_count(), 0);
    })
    .join()
    .unwrap();
}

#[test]
fn regions_of_pools_dropped_elsewhere_are_pruned() {
    use std::sync::{mpsc, Arc};
    let pool = Arc::new(ArenaPool::new(16, 8).unwrap());
    let (used_tx, used_rx) = mpsc::channel();
    let (dropped_tx, dropped_rx) = mpsc::channel::<()>();
    let worker = {
        let pool = Arc::clone(&pool);
        std::thread::spawn(move || {
            first_address(&pool);
            drop(pool);
            assert_eq!(thread_region_count(), 1);
            used_tx.send(()).unwrap();
            dropped_rx.recv().unwrap();
            // The pool is gone (dropped on the main thread); creating the next region prunes
            // the dead pool's region of this thread.
            let fresh = ArenaPool::new(8, 8).unwrap();
            first_address(&fresh);
            thread_region_count()
        })
    };
    used_rx.recv().unwrap();
    drop(pool);
    dropped_tx.send(()).unwrap();
    assert_eq!(worker.join().unwrap(), 1);
}

#[test]
fn forgotten_arena_is_safe() {
    let pool = ArenaPool::new(8, 8).unwrap();
    let a = first_address(&pool);
    // An arena that never allocated never joined the region: forgetting it changes nothing.
    std::mem::forget(pool.take());
    assert_eq!(first_address(&pool), a);
    let leaked = pool.take();
    leaked.allocate(1, 1).unwrap();
    std::mem::forget(leaked);
    // The region is no longer recycled: the leaked byte at `a` stays taken, later arenas
    // move on through the region and then fall back to the heap.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let arena = pool.take();
        let s = arena.allocate(4, 1).unwrap();
        assert!(s.address() + 4 <= a || s.address() > a);
        seen.push(s.address());
    }
    assert_eq!(seen[0], a + 1);
    assert_ne!(seen[1], seen[0]);
    drop(pool);
}

#[test]
fn allocate_from_helpers() {
    let pool = ArenaPool::new(32, 1).unwrap();
    let arena = pool.take();
    let int = arena.allocate_from(42i32).unwrap();
    assert_eq!(int.get::<i32>(0).unwrap(), 42);
    let s = arena.allocate_c_string("The quick brown fox").unwrap();
    assert_eq!(s.byte_size(), 20);
    assert_eq!(s.get_string(0).unwrap(), "The quick brown fox");
    assert!(!int.overlaps(&s));
    let offset = s.address() + 20;
    assert_eq!(
        arena.allocate_c_string("a\0b").unwrap_err(),
        Error::InteriorNul { index: 1 }
    );
    // The rejected string consumed nothing.
    assert_eq!(arena.allocate(1, 1).unwrap().address(), offset);
}

#[test]
fn display_and_debug() {
    let pool = ArenaPool::new(32, 8).unwrap();
    assert_eq!(
        pool.to_string(),
        "ArenaPool[byte_size=32, byte_alignment=8]"
    );
    assert_eq!(
        format!("{pool:?}"),
        "ArenaPool[byte_size=32, byte_alignment=8]"
    );
    let arena = pool.take();
    assert_eq!(format!("{arena:?}"), "PooledArena { region: None }");
    arena.allocate(4, 4).unwrap();
    assert_eq!(
        format!("{arena:?}"),
        "PooledArena { region_byte_size: 32, region_offset: 4 }"
    );
}

#[test]
fn pool_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<ArenaPool>();
}

#[test]
fn regions_are_per_thread() {
    let pool = ArenaPool::new(32, 8).unwrap();
    let here = pool.take();
    let a = here.allocate(8, 8).unwrap().address();
    std::thread::scope(|s| {
        s.spawn(|| {
            let there = pool.take();
            let b = there.allocate(8, 8).unwrap();
            // A fresh region on the other thread, at its start, not overlapping ours.
            let fresh = first_address_while_open(&pool);
            assert_eq!(fresh, b.address() + 8);
            assert!(b.address() + 8 <= a || a + 8 <= b.address());
        });
    });
}

fn first_address_while_open(pool: &ArenaPool) -> usize {
    let arena = pool.take();
    let a = arena.allocate(4, 8).unwrap().address();
    a
}

mod teardown {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::LazyLock;

    static POOL: LazyLock<ArenaPool> = LazyLock::new(|| ArenaPool::new(32, 8).unwrap());

    /// Takes and uses a pooled arena from its destructor, whatever state this thread's
    /// registry is in by then.
    struct UseOnDrop(&'static AtomicUsize);
    impl Drop for UseOnDrop {
        fn drop(&mut self) {
            let arena = POOL.take();
            let seg = arena.allocate(8, 8).unwrap();
            seg.set(0, 7u64).unwrap();
            let big = arena.allocate(100, 8).unwrap();
            assert_eq!(seg.get::<u64>(0).unwrap(), 7);
            assert!(!big.overlaps(&seg));
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    thread_local! {
        static USER: RefCell<Option<UseOnDrop>> = const { RefCell::new(None) };
        static HELD: RefCell<Option<PooledArena<'static>>> = const { RefCell::new(None) };
    }

    #[test]
    fn take_during_thread_local_teardown_does_not_panic() {
        static DONE: AtomicUsize = AtomicUsize::new(0);
        // Registry first, then the user's thread-local, and the other way round: destructors
        // run in some order; both must work.
        std::thread::spawn(|| {
            drop(POOL.take());
            USER.with(|u| *u.borrow_mut() = Some(UseOnDrop(&DONE)));
        })
        .join()
        .unwrap();
        std::thread::spawn(|| {
            USER.with(|u| *u.borrow_mut() = Some(UseOnDrop(&DONE)));
            drop(POOL.take());
        })
        .join()
        .unwrap();
        // The pool first used from a thread-local destructor: the registry is created during
        // teardown.
        std::thread::spawn(|| {
            USER.with(|u| *u.borrow_mut() = Some(UseOnDrop(&DONE)));
        })
        .join()
        .unwrap();
        assert_eq!(DONE.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn arena_held_by_a_thread_local_outlives_the_registry() {
        for registry_first in [true, false] {
            std::thread::spawn(move || {
                if registry_first {
                    drop(POOL.take());
                } else {
                    HELD.with(|_| {});
                }
                let arena = POOL.take();
                arena.allocate(8, 8).unwrap().set(0, 1u64).unwrap();
                HELD.with(|h| *h.borrow_mut() = Some(arena));
            })
            .join()
            .unwrap();
        }
    }
}
