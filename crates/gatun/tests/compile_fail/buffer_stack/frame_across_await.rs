// A frame held across an `.await` makes the future !Send, so it cannot be spawned on a
// multi-thread runtime.
use gatun::memory::{linker_stack, SegmentAllocator};

fn require_send<F: std::future::Future + Send>(_: F) {}

async fn call() -> u64 {
    let frame = linker_stack().push_frame(8, 8).unwrap();
    let segment = frame.allocate(8, 8).unwrap();
    std::future::ready(()).await;
    segment.get::<u64>(0).unwrap()
}

fn main() {
    require_send(call());
}
