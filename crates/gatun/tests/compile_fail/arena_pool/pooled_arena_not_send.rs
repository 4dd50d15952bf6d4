// A PooledArena uses its thread's region: it must not move to another thread.
use gatun::memory::ArenaPool;

fn main() {
    static POOL: std::sync::LazyLock<ArenaPool> =
        std::sync::LazyLock::new(|| ArenaPool::new(32, 8).unwrap());
    let arena = POOL.take();
    std::thread::spawn(move || drop(arena)).join().unwrap();
}
