//! [`ArenaPool`]: recycled per-thread arena memory (the JDK's
//! `jdk.internal.foreign.CarrierLocalArenaPools`).
//!
//! Each pool owns, on every thread that uses it, one *region* of `byte_size` bytes aligned to
//! `byte_alignment`. [`ArenaPool::take`] returns a [`PooledArena`] that bump-allocates from the
//! calling thread's region; all open pooled arenas of that pool on that thread share the region
//! and its offset (the JDK's `OfPlatform` variant). A request that does not fit is served by a
//! heap [`ConfinedArena`] owned by the pooled arena, freed when it drops. When the last open
//! pooled arena of the thread drops, the offset goes back to 0 and the region is recycled.
//!
//! Tokio tasks (the Rust counterpart of the JDK's virtual threads) need no special carrier
//! variant: a `PooledArena` is `!Send`, so a `Send` future cannot hold one across an `.await`;
//! a task that uses a pool between awaits simply uses the region of the worker thread it is on.
//!
//! # Invariants (the unsafe story of this module)
//! - A `Region` is a `Box` leaked into a raw pointer. It is reachable from its thread's
//!   `REGISTRY` entry, from `LAST` (a one-entry cache of that registry), and from every open
//!   `PooledArena` that joined it (at its first allocation that could fit; an arena that never
//!   joined holds only its pool). All of these live on the region's thread only (`PooledArena`
//!   is `!Send`), so its `Cell`s are never touched by two threads.
//! - `Region::open` counts the open pooled arenas that joined the region; the `ORPHANED` bit is set
//!   when the registry is destroyed (thread exit) while arenas are still open. A region is freed
//!   exactly once: by the registry (thread exit, pool drop, pruning of dead pools) when no arena
//!   is open or the pool is gone, or by the last arena to drop once it is orphaned. Whoever frees
//!   it first removes every other path to it (registry entry, `LAST`).
//! - Segments handed out borrow their `PooledArena`, so none is alive once it drops. Only
//!   joined arenas hold region segments. While any joined arena is open, `offset` only grows,
//!   so live segments never overlap; it is reset to 0 only when `open` reaches 0, when no
//!   segment of the region is alive.
//! - A pool's regions on other threads outlive the pool until those threads create a new region
//!   (dead pools are pruned then) or exit. They are never used again: pool ids are unique and
//!   only a live pool's arenas look its id up.

use std::alloc::Layout;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use crate::error::{check_size_align, Result};
use crate::layout::MemoryLayout;
use crate::memory::{Arena, ConfinedArena, MemorySegment, SegmentAllocator};

/// Set in [`Region::open`] once the thread's registry is gone: the last arena frees the region.
const ORPHANED: usize = 1 << (usize::BITS - 1);

/// Pool ids; 0 is never issued, so `LAST`'s empty value matches no pool.
static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(1);

/// One thread's recyclable memory for one pool.
struct Region {
    /// Start of the region: `capacity` bytes aligned to the pool's alignment (an aligned
    /// dangling pointer when `capacity` is 0).
    base: *mut u8,
    /// Usable bytes (the pool's `byte_size`, or 0 if the region could not be allocated).
    capacity: usize,
    /// Bump offset shared by all open pooled arenas of this region.
    offset: Cell<usize>,
    /// Open pooled arenas, plus [`ORPHANED`].
    open: Cell<usize>,
    /// The pool's id.
    pool_id: u64,
    /// Dead (strong count 0) once the pool is dropped.
    pool_alive: Weak<()>,
    /// The region's allocation, if any.
    layout: Option<Layout>,
}

impl Region {
    /// A new region for `pool`; `capacity` 0 if the global allocator has no memory for it.
    fn new(pool: &ArenaPool) -> *mut Region {
        let (base, capacity, layout) = match pool.region_layout() {
            Some(layout) => {
                // SAFETY: the layout has a non-zero size (region_layout returns None for 0).
                let base = unsafe { std::alloc::alloc_zeroed(layout) };
                if base.is_null() {
                    (ptr::without_provenance_mut(pool.byte_alignment), 0, None)
                } else {
                    (base, layout.size(), Some(layout))
                }
            }
            None => (ptr::without_provenance_mut(pool.byte_alignment), 0, None),
        };
        Box::into_raw(Box::new(Region {
            base,
            capacity,
            offset: Cell::new(0),
            open: Cell::new(0),
            pool_id: pool.id,
            pool_alive: Arc::downgrade(&pool.alive),
            layout,
        }))
    }

    /// Frees the region and its memory.
    ///
    /// # Safety
    /// `region` came from [`Region::new`], is freed only now, and no path to it is used again.
    unsafe fn free(region: *mut Region) {
        // SAFETY: by the contract, we own the box.
        let region = unsafe { Box::from_raw(region) };
        if let Some(layout) = region.layout {
            // SAFETY: `base` was allocated with `layout` in Region::new.
            unsafe { std::alloc::dealloc(region.base, layout) };
        }
    }

    /// Bumps `byte_size` bytes aligned (absolute address) to `byte_alignment` (a power of two),
    /// or `None` if they do not fit in what is left.
    #[inline(always)]
    fn bump(&self, byte_size: usize, byte_alignment: usize) -> Option<*mut u8> {
        let base = self.base as usize;
        let mask = byte_alignment - 1;
        let aligned = base.checked_add(self.offset.get())?.checked_add(mask)? & !mask;
        let start = aligned - base;
        if start > self.capacity || self.capacity - start < byte_size {
            return None;
        }
        self.offset.set(start + byte_size);
        // SAFETY: start <= capacity, so the pointer is within (or one past) the region.
        Some(unsafe { self.base.add(start) })
    }
}

/// This thread's regions, one per pool it has used; frees them at thread exit.
struct Registry {
    regions: Vec<*mut Region>,
}

impl Registry {
    /// Frees the regions of dropped pools.
    fn prune(&mut self) {
        self.regions.retain(|&r| {
            // SAFETY: registry entries are live regions (module invariants).
            let dead = unsafe { (*r).pool_alive.strong_count() } == 0;
            if dead {
                forget_cached(r);
                // SAFETY: the pool is gone, so no pooled arena of it can be used again (they
                // borrow the pool); the entry and `LAST` no longer lead to it.
                unsafe { Region::free(r) };
            }
            !dead
        });
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        LAST.set((0, ptr::null()));
        for r in self.regions.drain(..) {
            // SAFETY: registry entries are live regions; this thread is their only user.
            unsafe {
                let open = (*r).open.get();
                if open == 0 {
                    Region::free(r);
                } else {
                    // Pooled arenas still open (e.g. held by another thread-local): the last one
                    // to drop frees the region.
                    (*r).open.set(open | ORPHANED);
                }
            }
        }
    }
}

/// Clears [`LAST`] if it points at `region`.
fn forget_cached(region: *mut Region) {
    if LAST.get().1 == region.cast_const() {
        LAST.set((0, ptr::null()));
    }
}

/// The number of regions this thread holds (for tests).
#[cfg(test)]
fn thread_region_count() -> usize {
    REGISTRY.with(|r| r.borrow().regions.len())
}

thread_local! {
    /// The last (pool id, region) looked up on this thread. Const-initialised without a
    /// destructor, so it is usable even during thread-local teardown.
    static LAST: Cell<(u64, *const Region)> = const { Cell::new((0, ptr::null())) };
    /// Every region of this thread.
    static REGISTRY: RefCell<Registry> = const { RefCell::new(Registry { regions: Vec::new() }) };
}

/// A pool of recyclable per-thread memory for short-lived arenas (the JDK's
/// `CarrierLocalArenaPools`: "the arena pool is able to share recyclable
/// memory across several arenas").
///
/// Every thread that allocates from one of its pooled arenas gets, on first use, its own
/// region of `byte_size` bytes aligned to `byte_alignment`, freed when the thread exits (or,
/// for the dropping thread, when the pool is dropped). Pooled arenas bump-allocate from it
/// with no heap allocation, no lock and no atomic operation; see [`PooledArena`].
///
/// `ArenaPool` is `Send + Sync`: share one (for example in a `static` `LazyLock`) between
/// threads; each thread uses only its own region.
///
/// ```
/// use gatun::memory::{ArenaPool, SegmentAllocator};
/// let pool = ArenaPool::new(32, 8)?;
/// let first = {
///     let arena = pool.take();
///     arena.allocate(4, 4)?.address()
/// };
/// let arena = pool.take();
/// assert_eq!(arena.allocate(4, 4)?.address(), first); // the region was recycled
/// # Ok::<(), gatun::Error>(())
/// ```
pub struct ArenaPool {
    id: u64,
    byte_size: usize,
    byte_alignment: usize,
    /// Regions hold a `Weak` of this: a region whose pool is gone can be freed.
    alive: Arc<()>,
}

impl ArenaPool {
    /// A pool whose per-thread regions hold `byte_size` bytes aligned to `byte_alignment`
    /// (the JDK's `create(byteSize, byteAlignment)`). No memory is allocated until a thread
    /// first allocates from a pooled arena. A `byte_size` of 0 is allowed: every allocation of a
    /// non-empty segment then goes to the heap.
    ///
    /// # Errors
    /// [`crate::Error::InvalidAlignment`] if `byte_alignment` is not a power of two (0
    /// included); [`crate::Error::SizeOverflow`] if `byte_size` rounded up to `byte_alignment`
    /// exceeds `isize::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::ArenaPool;
    /// use gatun::Error;
    /// let pool = ArenaPool::new(1024, 16).unwrap();
    /// assert_eq!((pool.byte_size(), pool.byte_alignment()), (1024, 16));
    /// assert_eq!(ArenaPool::new(64, 6).unwrap_err(), Error::InvalidAlignment { alignment: 6 });
    /// ```
    pub fn new(byte_size: usize, byte_alignment: usize) -> Result<ArenaPool> {
        check_size_align(byte_size, byte_alignment)?;
        Ok(ArenaPool {
            id: NEXT_POOL_ID.fetch_add(1, Ordering::Relaxed),
            byte_size,
            byte_alignment,
            alive: Arc::new(()),
        })
    }

    /// A pool whose regions have `layout`'s size and alignment (the JDK's
    /// `create(MemoryLayout)`).
    ///
    /// # Errors
    /// As [`ArenaPool::new`] (layouts are already valid, so in practice never).
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::ArenaPool;
    /// use gatun::{MemoryLayout, ValueLayout};
    /// let layout = MemoryLayout::sequence_layout(32, ValueLayout::F64).unwrap();
    /// let pool = ArenaPool::for_layout(&layout).unwrap();
    /// assert_eq!((pool.byte_size(), pool.byte_alignment()), (256, 8));
    /// ```
    pub fn for_layout(layout: &MemoryLayout) -> Result<ArenaPool> {
        ArenaPool::new(layout.byte_size(), layout.byte_alignment())
    }

    /// Size of each per-thread region, in bytes.
    ///
    /// ```
    /// use gatun::memory::ArenaPool;
    /// assert_eq!(ArenaPool::new(512, 8).unwrap().byte_size(), 512);
    /// ```
    pub fn byte_size(&self) -> usize {
        self.byte_size
    }

    /// Alignment of each per-thread region, in bytes.
    ///
    /// ```
    /// use gatun::memory::ArenaPool;
    /// assert_eq!(ArenaPool::new(512, 64).unwrap().byte_alignment(), 64);
    /// ```
    pub fn byte_alignment(&self) -> usize {
        self.byte_alignment
    }

    /// Opens a pooled arena on the calling thread (the JDK's `take()`). Costs nothing by
    /// itself: the arena joins the thread's region at its first allocation that could fit.
    ///
    /// The first such allocation on a thread allocates that thread's region (one heap
    /// allocation, plus the registry's bookkeeping); later ones allocate nothing. Never fails
    /// and never panics: during thread-local teardown (after this thread's regions were freed)
    /// or if the region cannot be allocated, the arena serves every request from the heap.
    ///
    /// ```
    /// use gatun::memory::{ArenaPool, SegmentAllocator};
    /// let pool = ArenaPool::new(64, 8).unwrap();
    /// let arena = pool.take();
    /// let a = arena.allocate(16, 8).unwrap();
    /// let b = arena.allocate(16, 8).unwrap();
    /// assert_eq!(b.address(), a.address() + 16); // bumped inside this thread's region
    /// ```
    #[inline]
    pub fn take(&self) -> PooledArena<'_> {
        PooledArena {
            state: Cell::new(ptr::from_ref(self).cast()),
            fallback: Arena::confined(),
            _pool: PhantomData,
        }
    }

    /// This thread's region for the pool, null if there is none (thread-local teardown).
    #[inline(always)]
    fn region(&self) -> *const Region {
        let (id, cached) = LAST.get();
        if id == self.id {
            cached
        } else {
            self.region_slow()
        }
    }

    /// Looks up (or creates) this thread's region for the pool and caches it in `LAST`; null
    /// when the registry is gone (thread exit) or busy.
    #[cold]
    #[inline(never)]
    fn region_slow(&self) -> *const Region {
        REGISTRY
            .try_with(|registry| {
                let Ok(mut registry) = registry.try_borrow_mut() else {
                    return ptr::null();
                };
                let found = registry.regions.iter().copied().find(|&r| {
                    // SAFETY: registry entries are live regions (module invariants).
                    unsafe { (*r).pool_id == self.id }
                });
                let region = match found {
                    Some(r) => r,
                    None => {
                        registry.prune();
                        let r = Region::new(self);
                        registry.regions.push(r);
                        r
                    }
                };
                LAST.set((self.id, region));
                region.cast_const()
            })
            .unwrap_or(ptr::null())
    }

    /// The region's allocation layout, `None` for an empty region.
    fn region_layout(&self) -> Option<Layout> {
        if self.byte_size == 0 {
            return None;
        }
        Layout::from_size_align(self.byte_size, self.byte_alignment).ok()
    }
}

impl Drop for ArenaPool {
    /// Frees the dropping thread's region of this pool. Other threads' regions are freed when
    /// they exit or next create a region (no pooled arena of this pool can be open anywhere:
    /// they borrow the pool).
    fn drop(&mut self) {
        let _ = REGISTRY.try_with(|registry| {
            if let Ok(mut registry) = registry.try_borrow_mut() {
                let id = self.id;
                registry.regions.retain(|&r| {
                    // SAFETY: registry entries are live regions.
                    let mine = unsafe { (*r).pool_id } == id;
                    if mine {
                        forget_cached(r);
                        // SAFETY: the pool is being dropped, so no arena of it can be used again;
                        // the entry and LAST no longer lead to the region.
                        unsafe { Region::free(r) };
                    }
                    !mine
                });
            }
        });
    }
}

impl fmt::Display for ArenaPool {
    /// `ArenaPool[byte_size=32, byte_alignment=8]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ArenaPool[byte_size={}, byte_alignment={}]",
            self.byte_size, self.byte_alignment
        )
    }
}

impl fmt::Debug for ArenaPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// An arena from an [`ArenaPool`], confined to the thread that called [`ArenaPool::take`]
/// (the JDK's `SlicingArena`).
///
/// - Allocations that fit in what is left of the thread's region (aligned by absolute address)
///   are bump-allocated from it: no heap allocation, no lock, no atomic.
/// - Allocations that do not fit are served by a heap arena owned by this pooled arena and freed
///   when it drops (the JDK's delegate `Arena.ofConfined()`), so allocation never fails because
///   the pool is too small.
/// - [`SegmentAllocator::allocate`] zeroes the segment (a memset of its bytes);
///   [`SegmentAllocator::allocate_uninit`] does not: pooled memory then holds whatever an earlier
///   arena of this thread wrote there (the JDK's `allocateNoInit`).
/// - The arena joins its thread's region at its first request of at most the pool's
///   `byte_size` (so an arena that only makes larger requests never touches the region or the
///   thread-local lookup).
/// - Dropping the arena frees its heap allocations; when it is the last open joined arena of
///   the pool on this thread, the region's offset is reset to 0 and the memory recycled. Arenas
///   may be dropped in any order: the offset is reset only when all are closed, so segments of
///   open arenas never overlap.
/// - `!Send` and `!Sync`, and its segments borrow it, so they cannot outlive it.
///   Leaking a joined arena (`std::mem::forget`) is safe but stops recycling on this thread:
///   later allocations fall back to the heap once the region is used up.
///
/// ```
/// use gatun::memory::{ArenaPool, SegmentAllocator};
/// let pool = ArenaPool::new(256, 16).unwrap();
/// {
///     let arena = pool.take(); // joins this thread's 256-byte region on first use
///     let a = arena.allocate(64, 8).unwrap();
///     let big = arena.allocate(1024, 8).unwrap(); // too big for the region: from the heap
///     assert_eq!((a.byte_size(), big.byte_size()), (64, 1024));
/// } // the region is recycled once every pooled arena of this thread is dropped
/// ```
pub struct PooledArena<'pool> {
    /// Before the arena joins its thread's region: the `&'pool ArenaPool` (bit 0 clear).
    /// After: the `*const Region` with bit 0 set (null | 1 = heap only). Both pointees are
    /// aligned to at least 8 bytes, so bit 0 is free.
    state: Cell<*const ()>,
    /// Heap memory for requests that do not fit. Two pointers in all, so moving a
    /// `PooledArena` is two register moves (a wider struct is copied with one vector load
    /// right after two scalar stores, which stalls store forwarding: +7 ns per `drop(arena)`).
    fallback: ConfinedArena,
    _pool: PhantomData<&'pool ArenaPool>,
}

/// Bit 0 of [`PooledArena::state`]: the arena has joined its region (or gave up on it).
const JOINED: usize = 1;

impl PooledArena<'_> {
    /// The region this arena bumps in, null for none; joins the thread's region (counting in
    /// its `open`) on the first request of at most the pool's size.
    #[inline(always)]
    fn region_for(&self, byte_size: usize) -> *const Region {
        let state = self.state.get();
        if state.addr() & JOINED != 0 {
            return state.map_addr(|a| a & !JOINED).cast();
        }
        // SAFETY: not joined yet, so `state` is the pool this arena borrows for 'pool.
        let pool = unsafe { &*state.cast::<ArenaPool>() };
        if byte_size > pool.byte_size {
            // Can never fit: no need to join (the heap serves it).
            return ptr::null();
        }
        let region = pool.region();
        if !region.is_null() {
            // SAFETY: a region reached through LAST or the registry is live (module invariants)
            // and used only by this thread.
            let r = unsafe { &*region };
            r.open.set(r.open.get() + 1);
        }
        self.state.set(region.cast::<()>().map_addr(|a| a | JOINED));
        region
    }

    /// The joined region, null if none.
    #[inline(always)]
    fn joined_region(&self) -> *const Region {
        let state = self.state.get();
        if state.addr() & JOINED != 0 {
            state.map_addr(|a| a & !JOINED).cast()
        } else {
            ptr::null()
        }
    }

    #[inline(always)]
    fn alloc(
        &self,
        byte_size: usize,
        byte_alignment: usize,
        zeroed: bool,
    ) -> Result<MemorySegment<'_>> {
        check_size_align(byte_size, byte_alignment)?;
        let region = self.region_for(byte_size);
        if !region.is_null() {
            // SAFETY: the region stays live while this arena is open (it counts in `open`).
            let region = unsafe { &*region };
            if let Some(p) = region.bump(byte_size, byte_alignment) {
                if zeroed {
                    // SAFETY: `p..p+byte_size` lies within the region (bump).
                    unsafe { zero(p, byte_size) };
                }
                // SAFETY: the bytes lie within the region, which stays allocated while this
                // arena (which the segment borrows) is open, and no other live segment uses them
                // until the offset is reset, which happens only after this arena drops.
                return Ok(unsafe { MemorySegment::from_raw_parts(p, byte_size) });
            }
        }
        self.heap_alloc(byte_size, byte_alignment, zeroed)
    }

    /// A request the region cannot serve, from the heap arena.
    #[inline]
    fn heap_alloc(
        &self,
        byte_size: usize,
        byte_alignment: usize,
        zeroed: bool,
    ) -> Result<MemorySegment<'_>> {
        if zeroed {
            self.fallback.allocate(byte_size, byte_alignment)
        } else {
            self.fallback.allocate_uninit(byte_size, byte_alignment)
        }
    }
}

/// Zeroes `n` bytes at `p`; small sizes with at most two stores.
///
/// # Safety
/// `p..p+n` must be valid for writes.
#[inline(always)]
unsafe fn zero(p: *mut u8, n: usize) {
    // SAFETY: every store stays within p..p+n (overlapping stores cover sizes between powers of
    // two); unaligned stores need no alignment.
    unsafe {
        match n {
            0 => {}
            1..=3 => {
                p.write(0);
                p.add(n / 2).write(0);
                p.add(n - 1).write(0);
            }
            4..=7 => {
                p.cast::<u32>().write_unaligned(0);
                p.add(n - 4).cast::<u32>().write_unaligned(0);
            }
            8..=16 => {
                p.cast::<u64>().write_unaligned(0);
                p.add(n - 8).cast::<u64>().write_unaligned(0);
            }
            _ => ptr::write_bytes(p, 0, n),
        }
    }
}

impl SegmentAllocator for PooledArena<'_> {
    /// A zeroed segment: from the thread's region if it fits, else from the heap.
    ///
    /// # Errors
    /// [`crate::Error::InvalidAlignment`], [`crate::Error::SizeOverflow`];
    /// [`crate::Error::OutOfMemory`] when the heap fallback fails.
    #[inline(always)]
    fn allocate(&self, byte_size: usize, byte_alignment: usize) -> Result<MemorySegment<'_>> {
        self.alloc(byte_size, byte_alignment, true)
    }

    /// As [`SegmentAllocator::allocate`] but not zeroed: pooled bytes keep what earlier arenas
    /// of this thread wrote.
    ///
    /// # Errors
    /// As [`SegmentAllocator::allocate`].
    #[inline(always)]
    fn allocate_uninit(
        &self,
        byte_size: usize,
        byte_alignment: usize,
    ) -> Result<MemorySegment<'_>> {
        self.alloc(byte_size, byte_alignment, false)
    }
}

impl Drop for PooledArena<'_> {
    #[inline]
    fn drop(&mut self) {
        let raw = self.joined_region();
        if raw.is_null() {
            return;
        }
        // SAFETY: the region is live while this arena counts in `open`.
        let region = unsafe { &*raw };
        let open = region.open.get() - 1;
        region.open.set(open);
        if open == 0 {
            region.offset.set(0);
        } else if open == ORPHANED {
            // SAFETY: the registry is gone (it cleared LAST and its entry) and this was the last
            // open arena: nothing else leads to the region. `raw` carries the pointer's
            // original (Box) provenance; the `&Region` above is not used again.
            unsafe { Region::free(raw.cast_mut()) };
        }
        // `fallback` frees the heap allocations after this.
    }
}

impl fmt::Debug for PooledArena<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let region = self.joined_region();
        let mut d = f.debug_struct("PooledArena");
        if region.is_null() {
            d.field("region", &None::<()>);
        } else {
            // SAFETY: the region is live while this arena counts in `open`.
            let region = unsafe { &*region };
            d.field("region_byte_size", &region.capacity)
                .field("region_offset", &region.offset.get());
        }
        d.finish()
    }
}

#[cfg(test)]
mod tests;
