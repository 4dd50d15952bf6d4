// Dropping an arena while one of its segments is still used does not compile.
use gatun::memory::{Arena, SegmentAllocator};

fn main() {
    let arena = Arena::shared();
    let segment = arena.allocate(4, 4).unwrap();
    drop(arena);
    segment.fill(0);
}
