// A frame cannot be closed while one of its segments is still in use.
use gatun::memory::{BufferStack, SegmentAllocator};

fn main() {
    let stack = BufferStack::new(64, 1).unwrap();
    let frame = stack.push_frame(8, 8).unwrap();
    let segment = frame.allocate(8, 8).unwrap();
    frame.close().unwrap();
    segment.set(0, 1u64).unwrap();
}
