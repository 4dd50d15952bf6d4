// A segment from a BufferStack frame cannot be used after the frame is gone.
use gatun::memory::{BufferStack, SegmentAllocator};

fn main() {
    let stack = BufferStack::new(64, 1).unwrap();
    let segment;
    {
        let frame = stack.push_frame(8, 8).unwrap();
        segment = frame.allocate(8, 8).unwrap();
    }
    segment.set(0, 1u64).unwrap();
}
