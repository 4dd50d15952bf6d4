//! The arena's `fork` handlers. A chunk is shared memory, so after `fork` parent and child would see each other's
//! writes to it (a free in one process filling with `int3` code the other still runs). A
//! `pthread_atfork` handler therefore gives the child its own copy of every chunk: before the
//! fork (arena lock held, so no code is being freed) it copies each chunk into a new memfd; in
//! the child it maps that memfd over both of the chunk's views (`MAP_FIXED`, same addresses,
//! same contents), and the parent closes it (where chunks keep their memfd open, the child
//! keeps the copy's as its chunk's memfd and closes the parent's). Both processes then go on
//! allocating from and freeing into all their chunks: repeated forks neither retire nor add
//! chunks. The cost is paid per `fork` (not by `posix_spawn`/`vfork`, which run no handlers):
//! in the parent one memfd and a copy per chunk (64 KiB for most), in the child two `mmap`s
//! per chunk. Where the copy cannot be made (out of file descriptors or memory), that chunk is
//! *retired* in both processes instead: never allocated from nor written again (an empty
//! retired chunk is unmapped at the next allocation), and only new chunks serve new code. In
//! the child, a failure of the `MAP_FIXED` mappings (which replace mappings of the same size,
//! so only a kernel out of memory fails them) retires the chunk there; the parent, which
//! cannot know, keeps using it, so freed code in it may then change under the child.
//! The handler takes the stub cache's lock and then the arena lock around the fork (the same
//! order as everywhere else; no code path holds both otherwise), so the child inherits neither
//! locked. Not covered: a `fork` from a signal handler that interrupted this thread inside an
//! arena or stub-cache critical section deadlocks in the handler (the lock is not reentrant);
//! `_Fork`, `vfork` and raw `clone` run no handlers, so after them the child shares the chunks
//! and must only `exec` or `_exit`.

use std::cell::UnsafeCell;
use std::sync::MutexGuard;

use super::memfd::{new_memfd, REMAP_REUSED};
use super::{flush_icache, lock, Arena, Chunk};
use crate::code::stub_cache;

/// The locks held across a fork by the forking thread, from `before_fork` to
/// `after_fork_*`. A static rather than a thread-local (which could be gone during thread
/// teardown): only the thread holding the arena lock touches it.
struct ForkLocks(UnsafeCell<Option<(stub_cache::ForkLock, MutexGuard<'static, Arena>)>>);

// SAFETY: the cell is only accessed by the thread that holds the arena lock (it is filled
// after taking the lock and emptied before releasing it), so accesses never overlap.
unsafe impl Sync for ForkLocks {}

static FORK_LOCKS: ForkLocks = ForkLocks(UnsafeCell::new(None));

/// The arena (locked) stored by `before_fork`, for the `after_fork_*` handlers.
///
/// # Safety
/// Only between `before_fork` and the release in `after_fork`, on the forking thread.
unsafe fn fork_locks() -> &'static mut Option<(stub_cache::ForkLock, MutexGuard<'static, Arena>)> {
    // SAFETY: this thread holds the arena lock (caller), so nothing else accesses the cell.
    unsafe { &mut *FORK_LOCKS.0.get() }
}

unsafe extern "C" fn before_fork() {
    // lock order: stub cache, then arena (as everywhere; nothing else holds both)
    let cache = stub_cache::lock_for_fork();
    let mut a = lock();
    for c in a.chunks.values_mut().filter(|c| !c.retired) {
        c.os.fork_fd = copy_for_child(c);
        if c.os.fork_fd < 0 {
            c.retired = true;
        }
    }
    // SAFETY: this thread now holds the arena lock.
    unsafe { *fork_locks() = Some((cache, a)) };
}

/// A new memfd holding the bytes of chunk `c` (-1 if it cannot be made). The arena lock
/// is held, so no granule is being filled with `TRAP`; code being copied in by another
/// thread is in granules the child never calls (their owner does not exist there).
fn copy_for_child(c: &Chunk) -> i32 {
    let fd = new_memfd(c.len);
    if fd < 0 {
        return -1;
    }
    let mut done = 0;
    while done < c.len {
        // SAFETY: the chunk's read-write view is mapped and readable for `len` bytes.
        let w =
            unsafe { libc::pwrite(fd, c.rw.add(done).cast(), c.len - done, done as libc::off_t) };
        if w <= 0 {
            // SAFETY: our fd.
            unsafe { libc::close(fd) };
            return -1;
        }
        done += w as usize;
    }
    fd
}

unsafe extern "C" fn after_fork_parent() {
    // SAFETY: called after before_fork on the forking thread.
    let Some((cache, mut a)) = (unsafe { fork_locks() }).take() else {
        return;
    };
    for c in a.chunks.values_mut().filter(|c| c.os.fork_fd >= 0) {
        // SAFETY: the fd made by before_fork; the child has its own copy of it.
        unsafe { libc::close(c.os.fork_fd) };
        c.os.fork_fd = -1;
    }
    drop(a);
    drop(cache);
}

unsafe extern "C" fn after_fork_child() {
    // SAFETY: called after before_fork on the forking thread (the child's only thread).
    let Some((cache, mut a)) = (unsafe { fork_locks() }).take() else {
        return;
    };
    for (&rx, c) in a.chunks.iter_mut().filter(|(_, c)| c.os.fork_fd >= 0) {
        let map = |at: *mut u8, prot: i32| {
            // SAFETY: replaces one of this chunk's views by the same bytes (the copy made
            // under the arena lock) at the same address and length; no other thread
            // exists in the child, and code there runs unchanged after the switch.
            let p = unsafe {
                libc::mmap(
                    at.cast(),
                    c.len,
                    prot,
                    libc::MAP_SHARED | libc::MAP_FIXED,
                    c.os.fork_fd,
                    0,
                )
            };
            p != libc::MAP_FAILED
        };
        let ok = map(rx as *mut u8, libc::PROT_READ | libc::PROT_EXEC)
            && map(c.rw, libc::PROT_READ | libc::PROT_WRITE);
        if !ok {
            c.retired = true;
        }
        flush_icache(rx as *const u8, c.len);
        if REMAP_REUSED && ok {
            // the child's chunk is now the copy: pages are mapped again from its memfd,
            // and the whole read-execute view was just mapped afresh
            // SAFETY: the parent's memfd, inherited by the child; the child's chunk no
            // longer maps it.
            unsafe { libc::close(c.os.fd) };
            c.os.fd = c.os.fork_fd;
            c.os.dirty.copy_from_slice(&c.bits);
        } else {
            // SAFETY: the fd made by before_fork; the mappings keep the memory.
            unsafe { libc::close(c.os.fork_fd) };
        }
        c.os.fork_fd = -1;
    }
    drop(a);
    drop(cache);
}

/// Registers the fork handlers (once per process). Called before the first chunk is mapped
/// and before the stub cache is first used.
pub(crate) fn register_fork_handlers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: the handlers are `extern "C"` functions that live for the process; they
        // take and release the stub-cache and arena locks and copy/map chunks, allocating
        // nothing.
        unsafe {
            libc::pthread_atfork(
                Some(before_fork),
                Some(after_fork_parent),
                Some(after_fork_child),
            )
        };
    });
}
