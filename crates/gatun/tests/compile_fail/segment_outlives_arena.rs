// A segment borrows its arena: using it after the arena is dropped does not compile
// (Java would throw IllegalStateException at run time).
use gatun::memory::{Arena, SegmentAllocator};

fn main() {
    let segment = {
        let arena = Arena::confined();
        arena.allocate(8, 8).unwrap()
    };
    segment.set::<u64>(0, 1).unwrap();
}
