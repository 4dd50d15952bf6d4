// A segment from a PooledArena cannot be used after the arena is dropped (the region is then
// recycled by the next arena).
use gatun::memory::{ArenaPool, SegmentAllocator};

fn main() {
    let pool = ArenaPool::new(32, 8).unwrap();
    let seg = {
        let arena = pool.take();
        arena.allocate(8, 8).unwrap()
    };
    seg.set(0, 1u64).unwrap();
}
