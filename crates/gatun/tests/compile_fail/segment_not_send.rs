// A MemorySegment is !Send: it may point into a thread-confined arena, so it cannot move to
// another thread (not even a 'static one from the global arena).
use gatun::memory::Arena;

fn main() {
    let segment = Arena::global().allocate_static(8, 8).unwrap();
    std::thread::spawn(move || {
        segment.fill(0);
    });
}
