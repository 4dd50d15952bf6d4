// A PooledArena cannot be held across an `.await` in a future that must be Send (it would
// move to another worker thread with the task).
use gatun::memory::{ArenaPool, SegmentAllocator};

fn require_send<F: std::future::Future + Send>(_: F) {}

async fn yield_now() {}

fn main() {
    static POOL: std::sync::LazyLock<ArenaPool> =
        std::sync::LazyLock::new(|| ArenaPool::new(32, 8).unwrap());
    require_send(async {
        let arena = POOL.take();
        yield_now().await;
        arena.allocate(8, 8).unwrap().address()
    });
}
