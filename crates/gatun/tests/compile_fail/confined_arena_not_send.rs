// A ConfinedArena is !Send: it and its segments belong to the thread that created it
// (Java's Arena.ofConfined()).
use gatun::memory::{Arena, SegmentAllocator};

fn main() {
    let arena = Arena::confined();
    std::thread::spawn(move || {
        let _ = arena.allocate(8, 8);
    });
}
