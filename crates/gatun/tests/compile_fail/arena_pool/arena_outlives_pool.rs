// A PooledArena borrows its pool: the pool cannot be dropped while an arena is open.
use gatun::memory::{ArenaPool, SegmentAllocator};

fn main() {
    let pool = ArenaPool::new(32, 8).unwrap();
    let arena = pool.take();
    drop(pool);
    arena.allocate(8, 8).unwrap();
}
