// An `Arguments` list holding a segment cannot be used after the segment's arena is dropped:
// the call would pass freed memory.
use gatun::{Arena, Arguments, SegmentAllocator};

fn main() {
    let mut args = Arguments::<1>::new();
    {
        let arena = Arena::confined();
        let s = arena.allocate(16, 8).unwrap();
        args.segment(s);
    }
    // the arena is gone here
    assert_eq!(args.len(), 1);
}
