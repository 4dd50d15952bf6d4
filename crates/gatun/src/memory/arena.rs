//! Heap arenas (Java's `Arena.ofConfined()`, `Arena.ofShared()`, `Arena.global()`).
//!
//! Each allocation is one call to Rust's global allocator (like the JDK's arenas, which call
//! malloc per allocation); the block ends with a small [`Chunk`] trailer that links it into the
//! arena's list, so the arena itself never allocates bookkeeping. Dropping the arena walks the
//! list and frees every block.
//!
//! A block for `byte_size` bytes aligned to `byte_alignment` is laid out as
//!
//! ```text
//! base                                   base + round_up(byte_size, align_of::<Chunk>())
//! |<-- user bytes (byte_size) -->|pad|<-- Chunk -->|
//! ```
//!
//! and allocated with size `round_up(byte_size, align_of::<Chunk>()) + size_of::<Chunk>()` and
//! alignment `max(byte_alignment, align_of::<Chunk>())`. The block's size therefore depends on
//! the requested size only, never on the alignment: a 1-byte segment aligned to 2^32 bytes is
//! a 32-byte block (the system allocator may reserve address space to align it, but gatun
//! neither touches nor zeroes any of that; zeroing covers the block's own bytes).
//!
//! # Invariants
//! - Every pointer in a list is the trailer of a live block returned by [`alloc_chunk`], and is
//!   freed exactly once, by the list's owner on drop (the global arena's list is never freed).
//! - A trailer's `layout` is the block's allocation layout; the block starts
//!   `layout.size() - size_of::<Chunk>()` bytes before the trailer (see [`block_base`]).
//! - A segment handed out borrows the arena, so it cannot outlive the block it points into.

use std::alloc::Layout;
use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::error::{check_size_align, Error, Result};
use crate::memory::{MemorySegment, SegmentAllocator};

/// Trailer at the end of every heap block (after the user's bytes).
pub(super) struct Chunk {
    next: *mut Chunk,
    layout: Layout,
}

/// The block layout for `byte_size` bytes aligned to `byte_alignment` (a power of two), and
/// the offset in bytes of the [`Chunk`] trailer from the block's start.
pub(super) fn block_layout(byte_size: usize, byte_alignment: usize) -> Result<(Layout, usize)> {
    let overflow = || Error::SizeOverflow {
        what: format!("arena block for {byte_size} bytes aligned to {byte_alignment}"),
    };
    let trailer = byte_size
        .checked_next_multiple_of(std::mem::align_of::<Chunk>())
        .ok_or_else(overflow)?;
    let total = trailer
        .checked_add(std::mem::size_of::<Chunk>())
        .ok_or_else(overflow)?;
    let align = byte_alignment.max(std::mem::align_of::<Chunk>());
    let layout = Layout::from_size_align(total, align).map_err(|_| overflow())?;
    Ok((layout, trailer))
}

/// Allocates a block for `byte_size` bytes aligned to `byte_alignment` (already validated),
/// returning the block's trailer and the data pointer (the block's start).
#[inline]
fn alloc_chunk(
    byte_size: usize,
    byte_alignment: usize,
    zeroed: bool,
) -> Result<(*mut Chunk, *mut u8)> {
    let (layout, trailer) = block_layout(byte_size, byte_alignment)?;
    // SAFETY: `layout` has a non-zero size (it holds at least the trailer).
    let base = unsafe {
        if zeroed {
            std::alloc::alloc_zeroed(layout)
        } else {
            std::alloc::alloc(layout)
        }
    };
    if base.is_null() {
        return Err(Error::OutOfMemory {
            size: byte_size,
            alignment: byte_alignment,
        });
    }
    // SAFETY: `base` is a fresh block of `trailer + size_of::<Chunk>()` bytes, so the trailer
    // lies within it; `base` is aligned to at least align_of::<Chunk>() and `trailer` is a
    // multiple of it, so the trailer is aligned. The user's `byte_size <= trailer` bytes start
    // at `base` and do not overlap it.
    unsafe {
        let chunk = base.add(trailer).cast::<Chunk>();
        chunk.write(Chunk {
            next: ptr::null_mut(),
            layout,
        });
        Ok((chunk, base))
    }
}

/// The start of the block whose trailer is `chunk`, and the block's layout.
///
/// # Safety
/// `chunk` must be the trailer of a live block from [`alloc_chunk`].
unsafe fn block_base(chunk: *mut Chunk) -> (*mut u8, Layout) {
    // SAFETY: by the contract the trailer is live and initialised; it sits
    // `layout.size() - size_of::<Chunk>()` bytes after the block's start (see alloc_chunk), so
    // stepping back stays within the block, with the block's provenance.
    unsafe {
        let layout = (*chunk).layout;
        let base = chunk
            .cast::<u8>()
            .sub(layout.size() - std::mem::size_of::<Chunk>());
        (base, layout)
    }
}

/// Frees every block of the list starting at `head`.
///
/// # Safety
/// `head` must start a list of blocks from [`alloc_chunk`] that nothing else frees or uses.
unsafe fn free_list(mut head: *mut Chunk) {
    while !head.is_null() {
        // SAFETY: by the contract, `head` is the trailer of a live block we own; the block
        // was allocated with `layout` at `base`, and `next` is read before it is freed.
        unsafe {
            let next = (*head).next;
            let (base, layout) = block_base(head);
            std::alloc::dealloc(base, layout);
            head = next;
        }
    }
}

/// Pushes `chunk` onto the lock-free list at `head` (one compare-and-swap per attempt).
///
/// # Safety
/// `chunk` must come from [`alloc_chunk`] and not be in any list yet.
unsafe fn push_chunk(head: &AtomicPtr<Chunk>, chunk: *mut Chunk) {
    let mut current = head.load(Ordering::Relaxed);
    loop {
        // SAFETY: `chunk` is not yet published; we are its only user.
        unsafe { (*chunk).next = current };
        match head.compare_exchange_weak(current, chunk, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return,
            Err(h) => current = h,
        }
    }
}

/// Namespace for the arena constructors (Java's `Arena` factory methods).
///
/// | constructor | thread rules | freed |
/// |---|---|---|
/// | [`Arena::confined`] | one thread: `!Send`, `!Sync` | when dropped |
/// | [`Arena::shared`] | `Send + Sync`: allocate from any thread | when dropped |
/// | [`Arena::global`] | `Send + Sync`, `'static` | never |
///
/// ```
/// use gatun::memory::{Arena, SegmentAllocator};
/// let confined = Arena::confined(); // one thread; frees everything on drop
/// let shared = Arena::shared(); // any thread may allocate
/// let forever = Arena::global(); // never frees
/// let a = confined.allocate(8, 8).unwrap();
/// let b = shared.allocate(8, 8).unwrap();
/// let c = forever.allocate(8, 8).unwrap();
/// assert!(!a.overlaps(&b) && !b.overlaps(&c));
/// ```
pub enum Arena {}

impl Arena {
    /// A thread-confined arena (Java's `Arena.ofConfined()`).
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(8, 8).unwrap();
    /// assert_eq!(seg.get::<u64>(0).unwrap(), 0); // zeroed
    /// ```
    pub fn confined() -> ConfinedArena {
        ConfinedArena {
            head: Cell::new(ptr::null_mut()),
            _not_send: PhantomData,
        }
    }

    /// An arena that many threads may allocate from at once (Java's `Arena.ofShared()`).
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::shared();
    /// let addresses: Vec<usize> = std::thread::scope(|s| {
    ///     let hs: Vec<_> = (0..2).map(|_| s.spawn(|| arena.allocate(8, 8).unwrap().address())).collect();
    ///     hs.into_iter().map(|h| h.join().unwrap()).collect()
    /// });
    /// assert_ne!(addresses[0], addresses[1]);
    /// ```
    pub fn shared() -> SharedArena {
        SharedArena {
            head: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// The global arena: its segments live for `'static` and are never freed
    /// (Java's `Arena.global()`).
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let seg = Arena::global().allocate(4, 4).unwrap();
    /// let forever: gatun::MemorySegment<'static> = seg;
    /// assert_eq!(forever.byte_size(), 4);
    /// ```
    pub fn global() -> &'static GlobalArena {
        static GLOBAL: GlobalArena = GlobalArena {
            head: AtomicPtr::new(ptr::null_mut()),
        };
        &GLOBAL
    }
}

/// A heap arena confined to one thread; frees all its memory on drop.
///
/// Each allocation is one heap block (no size limit). [`SegmentAllocator::allocate`] zeroes;
/// [`SegmentAllocator::allocate_uninit`] does not. `!Send` and `!Sync`.
///
/// ```
/// use gatun::memory::{Arena, SegmentAllocator};
/// let arena = Arena::confined();
/// let s = arena.allocate_c_string("hi").unwrap();
/// assert_eq!(s.get_string(0).unwrap(), "hi");
/// drop(arena); // frees `s`; using `s` after this line would not compile
/// ```
pub struct ConfinedArena {
    head: Cell<*mut Chunk>,
    _not_send: PhantomData<*mut ()>,
}

impl ConfinedArena {
    #[inline]
    fn alloc(
        &self,
        byte_size: usize,
        byte_alignment: usize,
        zeroed: bool,
    ) -> Result<MemorySegment<'_>> {
        check_size_align(byte_size, byte_alignment)?;
        let (chunk, data) = alloc_chunk(byte_size, byte_alignment, zeroed)?;
        // SAFETY: `chunk` is fresh and owned by this arena from now on.
        unsafe { (*chunk).next = self.head.get() };
        self.head.set(chunk);
        // SAFETY: `data` is valid for byte_size bytes until the arena drops, which the borrow
        // of `self` outlives.
        Ok(unsafe { MemorySegment::from_raw_parts(data, byte_size) })
    }
}

impl SegmentAllocator for ConfinedArena {
    /// A new zeroed heap block.
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`], [`Error::SizeOverflow`], [`Error::OutOfMemory`].
    #[inline]
    fn allocate(&self, byte_size: usize, byte_alignment: usize) -> Result<MemorySegment<'_>> {
        self.alloc(byte_size, byte_alignment, true)
    }

    #[inline]
    fn allocate_uninit(
        &self,
        byte_size: usize,
        byte_alignment: usize,
    ) -> Result<MemorySegment<'_>> {
        self.alloc(byte_size, byte_alignment, false)
    }
}

impl Drop for ConfinedArena {
    #[inline]
    fn drop(&mut self) {
        let head = self.head.get();
        // Inlined null check: dropping an arena that never allocated (e.g. a pooled arena's
        // unused heap fallback) costs no call.
        if !head.is_null() {
            // SAFETY: the list belongs to this arena alone; no segment outlives `self`.
            unsafe { free_list(head) }
        }
    }
}

/// A heap arena that any thread may allocate from; frees all its memory on drop.
///
/// Allocation pushes the new block onto a lock-free list (one compare-and-swap). `Send + Sync`.
/// The segments themselves are `!Send`: each thread uses what it allocated (see
/// [`MemorySegment`]). [`SegmentAllocator::allocate`] zeroes; `allocate_uninit` does not.
///
/// ```
/// use gatun::memory::{Arena, SegmentAllocator};
/// let arena = Arena::shared();
/// std::thread::scope(|s| {
///     for i in 0..4 {
///         let arena = &arena;
///         s.spawn(move || {
///             let seg = arena.allocate(8, 8).unwrap(); // each thread uses what it allocated
///             seg.set::<u64>(0, i).unwrap();
///         });
///     }
/// });
/// ```
pub struct SharedArena {
    head: AtomicPtr<Chunk>,
}

impl SharedArena {
    fn alloc(
        &self,
        byte_size: usize,
        byte_alignment: usize,
        zeroed: bool,
    ) -> Result<MemorySegment<'_>> {
        check_size_align(byte_size, byte_alignment)?;
        let (chunk, data) = alloc_chunk(byte_size, byte_alignment, zeroed)?;
        // SAFETY: `chunk` is fresh from `alloc_chunk` and not yet shared.
        unsafe { push_chunk(&self.head, chunk) };
        // SAFETY: the block lives until the arena drops, which the borrow of `self` outlives.
        Ok(unsafe { MemorySegment::from_raw_parts(data, byte_size) })
    }
}

impl SegmentAllocator for SharedArena {
    /// A new zeroed heap block.
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`], [`Error::SizeOverflow`], [`Error::OutOfMemory`].
    fn allocate(&self, byte_size: usize, byte_alignment: usize) -> Result<MemorySegment<'_>> {
        self.alloc(byte_size, byte_alignment, true)
    }

    fn allocate_uninit(
        &self,
        byte_size: usize,
        byte_alignment: usize,
    ) -> Result<MemorySegment<'_>> {
        self.alloc(byte_size, byte_alignment, false)
    }
}

impl Drop for SharedArena {
    fn drop(&mut self) {
        // SAFETY: `&mut self` means no other thread is allocating; the list is ours.
        unsafe { free_list(*self.head.get_mut()) }
    }
}

/// The global arena: allocations are never freed. `Send + Sync`; segments are `'static`.
///
/// Its blocks stay linked in a list reachable from a `static`, so leak checkers (Miri,
/// Valgrind, LeakSanitizer) see them as still reachable rather than lost.
///
/// ```
/// use gatun::memory::Arena;
/// let seg: gatun::MemorySegment<'static> = Arena::global().allocate_static(4, 4).unwrap();
/// seg.set::<i32>(0, 7).unwrap();
/// assert_eq!(seg.get::<i32>(0).unwrap(), 7);
/// ```
pub struct GlobalArena {
    head: AtomicPtr<Chunk>,
}

impl GlobalArena {
    /// A zeroed block that lives forever.
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`], [`Error::SizeOverflow`], [`Error::OutOfMemory`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let seg = Arena::global().allocate_static(16, 16).unwrap();
    /// assert_eq!((seg.byte_size(), seg.address() % 16), (16, 0));
    /// assert!(Arena::global().allocate_static(1, 0).is_err());
    /// ```
    pub fn allocate_static(
        &self,
        byte_size: usize,
        byte_alignment: usize,
    ) -> Result<MemorySegment<'static>> {
        check_size_align(byte_size, byte_alignment)?;
        let (chunk, data) = alloc_chunk(byte_size, byte_alignment, true)?;
        // SAFETY: `chunk` is fresh from `alloc_chunk` and not yet shared.
        unsafe { push_chunk(&self.head, chunk) };
        // SAFETY: the list is never freed, so the block is valid for 'static.
        Ok(unsafe { MemorySegment::from_raw_parts(data, byte_size) })
    }
}

impl SegmentAllocator for GlobalArena {
    /// As [`GlobalArena::allocate_static`].
    fn allocate(&self, byte_size: usize, byte_alignment: usize) -> Result<MemorySegment<'_>> {
        self.allocate_static(byte_size, byte_alignment)
    }
}
