//! [`BufferStack`]: per-thread LIFO scratch frames with a heap fallback (the JDK's internal
//! `jdk.internal.foreign.BufferStack`, JDK 25, PR 24829), and the process-wide
//! [`linker_stack`] that downcalls push their scratch buffers on.
//!
//! # Design
//! - Each `(thread, BufferStack)` pair that is used gets one `Block`: a heap node holding the
//!   stack pointer `sp` and a zero-initialised data area of `byte_size` bytes (aligned to at least
//!   [`BLOCK_MIN_ALIGNMENT`]). It is created on the first [`BufferStack::push_frame`] on that
//!   thread and freed when the thread exits (or earlier, once the `BufferStack` is dropped).
//! - The blocks of a thread are found through one `thread_local!` cache: a most-recently-used
//!   `(stack id, block)` pair checked first, then a short linked list. The hot path is one
//!   thread-local access, one compare, a bump of `sp`, and a non-atomic reference count: no
//!   locks, no atomic read-modify-write, no allocation.
//! - A [`Frame`] reserves its whole `byte_size` at push time and then bumps inside it
//!   (the JDK's `SlicingAllocator` over the frame segment). Frames that do not fit fall back to
//!   one zeroed heap block of the frame's size (the JDK uses `Arena.ofConfined()`), with the
//!   same API and bounds.
//! - Frames are `!Send`, so a tokio task cannot hold one across `.await` in a `Send` future: a
//!   thread's stack needs no lock and tasks cost the same as threads (the JDK pays a
//!   `ReentrantLock` on virtual threads for this). Frames of `!Send` futures on one thread can
//!   interleave; their out-of-order drops are handled by *deferred release* (see [`Frame`]).
//!
//! # Invariants (the whole unsafe story of this module)
//! 1. A `Block` is created by `Block::create` and freed by `Block::free` exactly once, when its
//!    `refs` count reaches 0. `refs` = 1 while the block is linked in its thread's cache
//!    + 1 per live stack-backed [`Frame`] that points at it.
//! 2. A block is only ever touched by the thread that created it: the cache is thread-local and
//!    frames are `!Send`. So its `Cell`s need no synchronisation.
//! 3. `data..data + size` is allocated, zero-initialised at creation (so every byte is always
//!    initialised) and owned by the block until `Block::free`.
//! 4. Every live stack frame owns `[start, start + size) ⊆ [parent, top) ⊆ [0, sp)` of its block;
//!    a frame pushed later on the same block has `parent >= top` of every frame that was live at
//!    the time. `sp` is only lowered to a frame's `parent` when `sp == top` of that frame (it is
//!    top-of-stack), or to the `parent` of a *dead* frame (a pending entry) when `sp` equals that
//!    frame's `top`. Hence the non-empty region of a live frame is never handed out twice.
//!    (Two frames can share a `top` only if the later one is empty, and an empty frame owns no
//!    bytes, so the JDK's "same end offset" ambiguity cannot corrupt memory here.)
//! 5. The segments a frame hands out borrow the frame (`SegmentAllocator` takes `&self`), and the
//!    frame borrows its `BufferStack`. A fallback frame's heap block is allocated by
//!    `heap_block` at push and freed only by the frame's `Drop`.

use std::alloc::Layout;
use std::cell::Cell;
use std::fmt;
use std::io::Write as _;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::error::{check_size_align, Error, Result};
use crate::layout::MemoryLayout;
use crate::memory::{MemorySegment, SegmentAllocator};

/// The smallest alignment, in bytes, of a per-thread block: 16, what `malloc` gives on 64-bit
/// targets. The JDK allocates the block with the stack's own alignment (1 for the linker stack)
/// and gets malloc's 16 in practice; we make that explicit, so frame placement (which aligns the
/// *absolute* address) is reproducible, e.g. a `(8, 8)` frame after a `(12, 4)` frame starts 16
/// bytes after it.
pub const BLOCK_MIN_ALIGNMENT: usize = 16;

/// The environment variable that sets the per-thread size of [`linker_stack`], in bytes
/// (the JDK's `jdk.internal.foreign.LINKER_STACK_SIZE` system property).
pub const LINKER_STACK_SIZE_ENV: &str = "GATUN_LINKER_STACK_SIZE";

/// The per-thread size of [`linker_stack`] when [`LINKER_STACK_SIZE_ENV`] is unset or invalid:
/// 256 bytes, as in the JDK.
pub const DEFAULT_LINKER_STACK_SIZE: usize = 256;

/// Stack ids; 0 means "no stack" in the thread cache.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// Number of `BufferStack`s dropped so far; threads prune blocks of dead stacks when it changes.
static DROPS: AtomicU64 = AtomicU64::new(0);

/// State of one `BufferStack` shared with the blocks of every thread.
struct StackShared {
    /// Cleared when the `BufferStack` is dropped.
    alive: AtomicBool,
    /// Number of per-thread blocks currently allocated (diagnostics).
    blocks: AtomicUsize,
}

/// One thread's block for one `BufferStack` (see the module invariants).
struct Block {
    /// Bytes in use from `data`, alignment padding included.
    sp: Cell<usize>,
    /// Invariant 1.
    refs: Cell<usize>,
    /// `pending.len()`, readable on the hot path without touching the vector.
    pending_len: Cell<usize>,
    data: *mut u8,
    size: usize,
    data_layout: Option<Layout>,
    id: u64,
    next: Cell<*mut Block>,
    shared: Arc<StackShared>,
    /// `(parent, top)` of regions of frames dropped while not top-of-stack: released when `sp`
    /// comes back down to their `top`. Touched only on those cold paths (empty: no allocation).
    pending: Cell<Vec<(usize, usize)>>,
}

impl Block {
    /// A fresh block for `stack` with one reference (the thread cache's), or `None` if memory
    /// runs out.
    #[cold]
    fn create(stack: &BufferStack) -> Option<NonNull<Block>> {
        let align = stack.byte_alignment.max(BLOCK_MIN_ALIGNMENT);
        let (data, data_layout) = if stack.byte_size == 0 {
            (ptr::without_provenance_mut(align), None)
        } else {
            let layout = Layout::from_size_align(stack.byte_size, align).ok()?;
            // SAFETY: the layout has a non-zero size.
            let data = unsafe { std::alloc::alloc_zeroed(layout) };
            if data.is_null() {
                return None;
            }
            (data, Some(layout))
        };
        stack.shared.blocks.fetch_add(1, Ordering::Relaxed);
        let block = Box::new(Block {
            sp: Cell::new(0),
            refs: Cell::new(1),
            pending_len: Cell::new(0),
            data,
            size: stack.byte_size,
            data_layout,
            id: stack.id,
            next: Cell::new(ptr::null_mut()),
            shared: Arc::clone(&stack.shared),
            pending: Cell::new(Vec::new()),
        });
        Some(NonNull::from(Box::leak(block)))
    }

    /// Drops one reference; frees the block when it was the last.
    ///
    /// # Safety
    /// The caller owns one of the block's references (invariant 1), on the block's thread, and
    /// does not use `block` afterwards.
    #[inline]
    unsafe fn drop_ref(block: NonNull<Block>) {
        // SAFETY: the caller's reference keeps the block alive.
        let b = unsafe { block.as_ref() };
        let refs = b.refs.get() - 1;
        b.refs.set(refs);
        if refs == 0 {
            // SAFETY: that was the last reference.
            unsafe { Block::free(block) }
        }
    }

    /// Frees the block and its data.
    ///
    /// # Safety
    /// No reference to the block remains.
    #[cold]
    unsafe fn free(block: NonNull<Block>) {
        // SAFETY: created by Box::leak in `create`; no reference remains.
        let b = unsafe { Box::from_raw(block.as_ptr()) };
        if let Some(layout) = b.data_layout {
            // SAFETY: `data` was allocated with exactly this layout and is freed only here.
            unsafe { std::alloc::dealloc(b.data, layout) };
        }
        b.shared.blocks.fetch_sub(1, Ordering::Relaxed);
    }

    /// Releases the frame `(parent, top)`: pops it if it is top-of-stack (then any pending dead
    /// frames now on top), otherwise defers it.
    #[inline]
    fn release(&self, parent: usize, top: usize) {
        if self.sp.get() == top {
            self.sp.set(parent);
            if self.pending_len.get() != 0 {
                self.unwind_pending();
            }
        } else {
            self.defer(parent, top);
        }
    }

    /// Remembers a dead frame that is not top-of-stack.
    #[cold]
    #[inline(never)]
    fn defer(&self, parent: usize, top: usize) {
        if top > self.sp.get() {
            // Its region was already given back (only possible for an empty frame, which shares
            // its `top` with the frame below it): nothing to release.
            return;
        }
        let mut entries = self.pending.take();
        let (mut parent, mut top) = (parent, top);
        // Merge with adjacent dead regions (no live frame can lie between regions that touch),
        // so a run of dead frames takes one entry and the list never holds more entries than
        // there are live frames, plus one.
        let mut i = 0;
        while i < entries.len() {
            let (p, t) = entries[i];
            if t == parent || p == top {
                parent = parent.min(p);
                top = top.max(t);
                entries.swap_remove(i);
                i = 0;
            } else {
                i += 1;
            }
        }
        if entries.try_reserve(1).is_ok() {
            entries.push((parent, top));
        }
        // Otherwise (out of memory) the bytes stay reserved until a frame below them is
        // released: a leak of scratch space, never a double use of it.
        self.pending_len.set(entries.len());
        self.pending.set(entries);
    }

    /// Pops dead frames that are now top-of-stack; forgets entries whose region was given back.
    #[cold]
    #[inline(never)]
    fn unwind_pending(&self) {
        let mut entries = self.pending.take();
        let mut i = 0;
        while i < entries.len() {
            let (parent, top) = entries[i];
            let sp = self.sp.get();
            if top < sp {
                i += 1;
                continue;
            }
            // top == sp: the dead frame is now top-of-stack, release it. top > sp: its region
            // was already given back (an empty frame). Either way the entry goes, and the scan
            // restarts because `sp` may have moved.
            if top == sp {
                self.sp.set(parent);
            }
            entries.swap_remove(i);
            i = 0;
        }
        self.pending_len.set(entries.len());
        self.pending.set(entries);
    }
}

/// The per-thread index of blocks. Invariant: `mru_id != 0` implies `mru_block` is the
/// non-null, linked block of the stack with that id.
struct ThreadCache {
    mru_id: Cell<u64>,
    mru_block: Cell<*mut Block>,
    head: Cell<*mut Block>,
    seen_drops: Cell<u64>,
}

impl ThreadCache {
    const fn new() -> ThreadCache {
        ThreadCache {
            mru_id: Cell::new(0),
            mru_block: Cell::new(ptr::null_mut()),
            head: Cell::new(ptr::null_mut()),
            seen_drops: Cell::new(0),
        }
    }

    #[inline]
    fn block_for(&self, stack: &BufferStack) -> Option<NonNull<Block>> {
        if self.mru_id.get() == stack.id {
            // SAFETY: `mru_id` is a stack's id (never 0) only while `mru_block` is that stack's
            // linked, non-null block; it is reset to 0 whenever the block is unlinked.
            Some(unsafe { NonNull::new_unchecked(self.mru_block.get()) })
        } else {
            self.lookup_slow(stack)
        }
    }

    #[cold]
    #[inline(never)]
    fn lookup_slow(&self, stack: &BufferStack) -> Option<NonNull<Block>> {
        let drops = DROPS.load(Ordering::Acquire);
        if drops != self.seen_drops.get() {
            self.seen_drops.set(drops);
            self.prune_dead();
        }
        let mut p = self.head.get();
        while let Some(block) = NonNull::new(p) {
            // SAFETY: linked blocks hold the cache's reference (invariant 1).
            let b = unsafe { block.as_ref() };
            if b.id == stack.id {
                self.mru_id.set(stack.id);
                self.mru_block.set(p);
                return Some(block);
            }
            p = b.next.get();
        }
        let block = Block::create(stack)?;
        // SAFETY: fresh block, owned by this cache.
        unsafe { block.as_ref() }.next.set(self.head.get());
        self.head.set(block.as_ptr());
        self.mru_id.set(stack.id);
        self.mru_block.set(block.as_ptr());
        Some(block)
    }

    /// Unlinks and releases the blocks of dropped `BufferStack`s.
    fn prune_dead(&self) {
        let mut prev: Option<NonNull<Block>> = None;
        let mut p = self.head.get();
        while let Some(block) = NonNull::new(p) {
            // SAFETY: linked blocks hold the cache's reference (invariant 1).
            let b = unsafe { block.as_ref() };
            let next = b.next.get();
            if b.shared.alive.load(Ordering::Acquire) {
                prev = Some(block);
            } else {
                match prev {
                    // SAFETY: `prev` is linked, hence alive.
                    Some(prev) => unsafe { prev.as_ref() }.next.set(next),
                    None => self.head.set(next),
                }
                if self.mru_block.get() == p {
                    self.mru_id.set(0);
                    self.mru_block.set(ptr::null_mut());
                }
                // SAFETY: the cache's reference, given up now that the block is unlinked. A dead
                // stack has no live frames (they borrow it), so this normally frees the block.
                unsafe { Block::drop_ref(block) };
            }
            p = next;
        }
    }
}

impl Drop for ThreadCache {
    /// Thread exit: gives up the cache's reference to every block. Blocks still used by a live
    /// frame (one kept in another thread-local that is destroyed later) are freed when that
    /// frame is released.
    fn drop(&mut self) {
        self.mru_id.set(0);
        self.mru_block.set(ptr::null_mut());
        let mut p = self.head.replace(ptr::null_mut());
        while let Some(block) = NonNull::new(p) {
            // SAFETY: linked blocks hold the cache's reference (invariant 1).
            p = unsafe { block.as_ref() }.next.replace(ptr::null_mut());
            // SAFETY: the cache's reference, given up here.
            unsafe { Block::drop_ref(block) };
        }
    }
}

thread_local! {
    static CACHE: ThreadCache = const { ThreadCache::new() };
}

/// A stack of scratch memory with one block of `byte_size` bytes per thread, from which
/// [`Frame`]s are pushed and popped in LIFO order (the JDK's internal `BufferStack`).
///
/// - **Per thread.** Each thread that pushes a frame gets its own block, allocated (zeroed, at
///   least [`BLOCK_MIN_ALIGNMENT`]-aligned) on its first push and freed when the thread exits;
///   the blocks of other threads are freed when they exit or, after the `BufferStack` is dropped,
///   on their next lookup of another stack. During thread-local teardown (after the thread's
///   cache is gone) every push falls back to the heap; nothing panics.
/// - **Frames.** [`BufferStack::push_frame`] reserves a whole frame at the next address aligned
///   to the frame's alignment, or returns a heap-backed fallback frame if it does not fit
///   ([`Frame::is_fallback`]). There is no growth and no chaining of blocks.
/// - **Cost.** A stack-backed push + allocate + close takes no lock, no atomic read-modify-write
///   and no heap allocation.
/// - `Send + Sync`: the stack is a handle; the memory is per thread. Equality is identity.
///
/// ```
/// use gatun::memory::{BufferStack, SegmentAllocator};
/// let stack = BufferStack::new(256, 16).unwrap();
/// let frame = stack.push_frame(64, 8).unwrap(); // LIFO scratch, per thread
/// let seg = frame.allocate(16, 8).unwrap();
/// seg.set::<u64>(0, 42).unwrap();
/// assert!(!frame.is_fallback());
/// frame.close().unwrap();
/// ```
pub struct BufferStack {
    id: u64,
    byte_size: usize,
    byte_alignment: usize,
    shared: Arc<StackShared>,
}

impl BufferStack {
    /// A stack whose per-thread block has `byte_size` bytes aligned to `byte_alignment` bytes
    /// (at least [`BLOCK_MIN_ALIGNMENT`]). No memory is allocated until a thread pushes a frame.
    /// A size of 0 is allowed: every non-empty frame then falls back to the heap.
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`] if `byte_alignment` is not a power of two;
    /// [`Error::SizeOverflow`] if `byte_size` rounded up to it exceeds `isize::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::BufferStack;
    /// use gatun::Error;
    /// let stack = BufferStack::new(4096, 16).unwrap();
    /// assert_eq!((stack.byte_size(), stack.byte_alignment()), (4096, 16));
    /// assert_eq!(BufferStack::new(64, 0).unwrap_err(), Error::InvalidAlignment { alignment: 0 });
    /// ```
    pub fn new(byte_size: usize, byte_alignment: usize) -> Result<BufferStack> {
        check_size_align(byte_size, byte_alignment)?;
        Ok(BufferStack {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            byte_size,
            byte_alignment,
            shared: Arc::new(StackShared {
                alive: AtomicBool::new(true),
                blocks: AtomicUsize::new(0),
            }),
        })
    }

    /// A stack sized and aligned for `layout` (the JDK's `BufferStack.of(MemoryLayout)`).
    ///
    /// # Errors
    /// As [`BufferStack::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::BufferStack;
    /// use gatun::{MemoryLayout, ValueLayout};
    /// let layout = MemoryLayout::sequence_layout(4, ValueLayout::I64).unwrap();
    /// let stack = BufferStack::for_layout(&layout).unwrap();
    /// assert_eq!((stack.byte_size(), stack.byte_alignment()), (32, 8));
    /// ```
    pub fn for_layout(layout: &MemoryLayout) -> Result<BufferStack> {
        BufferStack::new(layout.byte_size(), layout.byte_alignment())
    }

    /// Size in bytes of each thread's block.
    ///
    /// ```
    /// use gatun::memory::BufferStack;
    /// assert_eq!(BufferStack::new(128, 8).unwrap().byte_size(), 128);
    /// ```
    pub fn byte_size(&self) -> usize {
        self.byte_size
    }

    /// Requested alignment in bytes of each thread's block (the block is at least
    /// [`BLOCK_MIN_ALIGNMENT`]-aligned whatever this says).
    ///
    /// ```
    /// use gatun::memory::BufferStack;
    /// assert_eq!(BufferStack::new(128, 32).unwrap().byte_alignment(), 32);
    /// ```
    pub fn byte_alignment(&self) -> usize {
        self.byte_alignment
    }

    /// How many per-thread blocks of this stack are allocated right now (diagnostics: 0 once
    /// every thread that used it has exited).
    ///
    /// ```
    /// use gatun::memory::BufferStack;
    /// let stack = BufferStack::new(64, 8).unwrap();
    /// assert_eq!(stack.thread_blocks(), 0); // nothing allocated before the first push
    /// let frame = stack.push_frame(8, 8).unwrap();
    /// assert_eq!(stack.thread_blocks(), 1);
    /// drop(frame);
    /// std::thread::scope(|s| {
    ///     // `join` returns once the thread has exited, its thread-local cache freed.
    ///     s.spawn(|| stack.push_frame(8, 8).map(drop).unwrap()).join().unwrap();
    /// });
    /// assert_eq!(stack.thread_blocks(), 1); // the other thread's block went with it
    /// ```
    pub fn thread_blocks(&self) -> usize {
        self.shared.blocks.load(Ordering::Relaxed)
    }

    /// Pushes a frame of `byte_size` bytes whose start address is a multiple of
    /// `byte_alignment`.
    ///
    /// The arguments are validated first; an error changes nothing. If the frame fits in the
    /// rest of this thread's block (alignment padding included, computed on the absolute
    /// address) all `byte_size` bytes are reserved now; otherwise — or during thread-local
    /// teardown, or if the block cannot be allocated — the frame is a heap-backed fallback with
    /// the same API and bounds ([`Frame::is_fallback`]).
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`] if `byte_alignment` is not a power of two;
    /// [`Error::SizeOverflow`] if the size rounded up to it exceeds `isize::MAX`;
    /// [`Error::OutOfMemory`] if a fallback frame's heap block cannot be allocated.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::BufferStack;
    /// let stack = BufferStack::new(64, 8).unwrap();
    /// let frame = stack.push_frame(48, 8).unwrap();
    /// assert!(!frame.is_fallback());
    /// let big = stack.push_frame(32, 8).unwrap(); // 48 + 32 > 64: served from the heap
    /// assert!(big.is_fallback());
    /// assert!(stack.push_frame(8, 5).is_err());
    /// ```
    #[inline]
    pub fn push_frame(&self, byte_size: usize, byte_alignment: usize) -> Result<Frame<'_>> {
        check_size_align(byte_size, byte_alignment)?;
        if let Ok(Some(block)) = CACHE.try_with(|cache| cache.block_for(self)) {
            // SAFETY: the cache holds a reference to the block, which belongs to this thread.
            let b = unsafe { block.as_ref() };
            let parent = b.sp.get();
            if let Some(start) = fit(b.data, parent, b.size, byte_size, byte_alignment) {
                let top = start + byte_size;
                b.sp.set(top);
                b.refs.set(b.refs.get() + 1);
                // [start, top) lies inside the block's data (checked by `fit`) and is reserved
                // for this frame until it is released (invariant 4); the frame holds a block
                // reference (invariant 1).
                return Ok(Frame {
                    base: b.data.wrapping_add(start),
                    size: byte_size,
                    offset: Cell::new(0),
                    block: block.as_ptr(),
                    parent,
                    top,
                    _stack: PhantomData,
                });
            }
        }
        let base = heap_block(byte_size, byte_alignment)?;
        Ok(Frame {
            base,
            size: byte_size,
            offset: Cell::new(0),
            block: ptr::null_mut(),
            parent: byte_alignment,
            top: 0,
            _stack: PhantomData,
        })
    }

    /// Pushes a frame sized and aligned for `layout`.
    ///
    /// # Errors
    /// As [`BufferStack::push_frame`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::BufferStack;
    /// use gatun::ValueLayout;
    /// let stack = BufferStack::new(64, 8).unwrap();
    /// let frame = stack.push_frame_layout(&ValueLayout::F64.into()).unwrap();
    /// assert_eq!(frame.byte_size(), 8);
    /// ```
    #[inline]
    pub fn push_frame_layout(&self, layout: &MemoryLayout) -> Result<Frame<'_>> {
        self.push_frame(layout.byte_size(), layout.byte_alignment())
    }
}

/// Where a `byte_size`-byte piece aligned to `byte_alignment` (a power of two; the absolute
/// address is aligned) starts in the `capacity`-byte area at `base` of which `used` bytes are
/// taken, as an offset from `base`; `None` if it does not fit.
#[inline(always)]
fn fit(
    base: *mut u8,
    used: usize,
    capacity: usize,
    byte_size: usize,
    byte_alignment: usize,
) -> Option<usize> {
    let base = base as usize;
    let mask = byte_alignment - 1;
    let start = ((base + used).checked_add(mask)? & !mask) - base;
    (start <= capacity && byte_size <= capacity - start).then_some(start)
}

/// A zeroed heap block for a fallback frame (arguments already validated).
///
/// # Errors
/// [`Error::OutOfMemory`].
#[cold]
#[inline(never)]
fn heap_block(byte_size: usize, byte_alignment: usize) -> Result<*mut u8> {
    if byte_size == 0 {
        return Ok(ptr::without_provenance_mut(byte_alignment));
    }
    let oom = Error::OutOfMemory {
        size: byte_size,
        alignment: byte_alignment,
    };
    let layout = Layout::from_size_align(byte_size, byte_alignment).map_err(|_| oom.clone())?;
    // SAFETY: the layout has a non-zero size.
    let data = unsafe { std::alloc::alloc_zeroed(layout) };
    if data.is_null() {
        return Err(oom);
    }
    Ok(data)
}

/// Frees a fallback frame's heap block.
///
/// # Safety
/// `data`, `byte_size` and `byte_alignment` come from one successful [`heap_block`] call, and
/// the block is not used afterwards.
#[cold]
#[inline(never)]
unsafe fn free_heap_block(data: *mut u8, byte_size: usize, byte_alignment: usize) {
    if byte_size != 0 {
        // SAFETY: allocated by `heap_block` with this layout (validated there).
        unsafe {
            std::alloc::dealloc(
                data,
                Layout::from_size_align_unchecked(byte_size, byte_alignment),
            )
        }
    }
}

/// The [`Error::AllocatorExhausted`] of a frame.
#[cold]
#[inline(never)]
fn exhausted(requested: usize, alignment: usize, used: usize, capacity: usize) -> Error {
    Error::AllocatorExhausted {
        requested,
        alignment,
        available: capacity - used,
        capacity,
    }
}

impl Drop for BufferStack {
    /// Frees this thread's block now; other threads free theirs on exit or on their next
    /// lookup of another stack. No frame can be alive (frames borrow the stack).
    fn drop(&mut self) {
        self.shared.alive.store(false, Ordering::Release);
        DROPS.fetch_add(1, Ordering::Release);
        let _ = CACHE.try_with(ThreadCache::prune_dead);
    }
}

impl PartialEq for BufferStack {
    /// Identity, as in the JDK: a stack equals only itself.
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}
impl Eq for BufferStack {}

impl fmt::Display for BufferStack {
    /// `BufferStack[byte_size=64, byte_alignment=1]` (the JDK's `toString`, in Rust naming).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BufferStack[byte_size={}, byte_alignment={}]",
            self.byte_size, self.byte_alignment
        )
    }
}

impl fmt::Debug for BufferStack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A frame pushed on a [`BufferStack`]: a bounded bump allocator over the bytes reserved for it
/// (the JDK's `BufferStack.Frame`).
///
/// - **Allocation.** [`SegmentAllocator::allocate`] bumps inside the frame, aligning the absolute
///   address; padding counts against the frame. When the frame is exhausted it returns
///   [`Error::AllocatorExhausted`]. Memory is **not zeroed**: a stack-backed frame hands out
///   bytes exactly as earlier frames on this thread left them (the JDK's "reused segments are
///   neither zeroed out before nor after re-use"); use [`Frame::allocate_zeroed`] when zeroes
///   are needed. A fallback frame's memory is zero on first use.
/// - **Lifetimes.** Segments borrow the frame, and the frame borrows its stack: neither can be
///   used after the frame is closed (a compile error, where the JDK throws
///   `IllegalStateException`).
/// - **Threads.** `!Send` and `!Sync`: a frame is closed on the thread that pushed it (the JDK
///   checks this at run time with `WrongThreadException`), and it cannot be held across an
///   `.await` in a `Send` future.
/// - **Closing.** [`Frame::close`] checks that the frame is top-of-stack and returns
///   [`Error::FrameNotTopOfStack`] otherwise; [`Frame::try_close`] hands the frame back instead.
/// - **Drop.** Dropping a top-of-stack frame pops it, like `close`. Dropping a frame that is not
///   top-of-stack (frames of interleaved `!Send` futures, or an error path) *defers* its
///   release: its bytes stay reserved, untouched, until every frame pushed after it is released,
///   and are then given back together (adjacent deferred frames merge, so the list of deferred
///   regions is never longer than the number of live frames plus one; it is a heap vector
///   allocated on the first out-of-order drop only). Memory is never handed out twice while a
///   frame owns it; the cost is that frames pushed meanwhile may fall back to the heap. A frame
///   leaked with `mem::forget` keeps its bytes reserved for good on that thread (like the JDK's
///   never-closed frame). Fallback frames take no part in ordering.
///
/// ```
/// use gatun::memory::{linker_stack, SegmentAllocator};
/// let outer = linker_stack().push_frame(32, 8).unwrap();
/// let inner = linker_stack().push_frame(16, 8).unwrap();
/// let x = inner.allocate(8, 8).unwrap();
/// x.set::<f64>(0, 0.5).unwrap();
/// assert_eq!(inner.used_bytes(), 8);
/// // Frames close in LIFO order; closing `outer` first would be `FrameNotTopOfStack`.
/// let outer = outer.try_close().unwrap_err();
/// inner.close().unwrap();
/// outer.close().unwrap();
/// ```
pub struct Frame<'s> {
    /// The frame's first byte (invariant 4 for stack frames; from `heap_block` for fallbacks).
    base: *mut u8,
    /// The frame's size in bytes.
    size: usize,
    /// Bytes handed out so far, padding included.
    offset: Cell<usize>,
    /// The block the frame is reserved in, or null for a heap fallback.
    block: *mut Block,
    /// Stack frame: `sp` before the push. Fallback: the heap block's alignment.
    parent: usize,
    /// Stack frame: `sp` after the push.
    top: usize,
    /// Borrows the stack; `*mut u8` above already makes the frame `!Send` and `!Sync`.
    _stack: PhantomData<&'s BufferStack>,
}

impl Frame<'_> {
    /// `true` if the frame is a heap-backed fallback (it did not fit in the thread's block, or
    /// was pushed during thread-local teardown). Fallbacks behave the same, except that their
    /// memory starts zeroed and is freed when the frame is released.
    ///
    /// ```
    /// use gatun::memory::BufferStack;
    /// let stack = BufferStack::new(16, 8).unwrap();
    /// assert!(!stack.push_frame(16, 8).unwrap().is_fallback());
    /// assert!(stack.push_frame(17, 8).unwrap().is_fallback());
    /// ```
    #[inline]
    pub fn is_fallback(&self) -> bool {
        self.block.is_null()
    }

    /// The frame's size in bytes, as pushed.
    ///
    /// ```
    /// use gatun::memory::BufferStack;
    /// let stack = BufferStack::new(64, 8).unwrap();
    /// assert_eq!(stack.push_frame(24, 8).unwrap().byte_size(), 24);
    /// ```
    #[inline]
    pub fn byte_size(&self) -> usize {
        self.size
    }

    /// Bytes of the frame used so far, alignment padding included.
    ///
    /// ```
    /// use gatun::memory::{BufferStack, SegmentAllocator};
    /// let stack = BufferStack::new(64, 8).unwrap();
    /// let frame = stack.push_frame(32, 8).unwrap();
    /// frame.allocate(1, 1).unwrap();
    /// frame.allocate(8, 8).unwrap(); // 7 bytes of padding first
    /// assert_eq!(frame.used_bytes(), 16);
    /// ```
    #[inline]
    pub fn used_bytes(&self) -> usize {
        self.offset.get()
    }

    /// Bumps inside the frame, aligning the absolute address (the JDK's `SlicingAllocator`).
    #[inline]
    fn bump(&self, byte_size: usize, byte_alignment: usize) -> Result<MemorySegment<'_>> {
        check_size_align(byte_size, byte_alignment)?;
        let offset = self.offset.get();
        if let Some(start) = fit(self.base, offset, self.size, byte_size, byte_alignment) {
            self.offset.set(start + byte_size);
            // SAFETY: [start, start + byte_size) lies inside the frame's bytes (`fit`), which
            // stay valid while `self` is borrowed (invariants 3 to 5).
            return Ok(unsafe { MemorySegment::from_raw_parts(self.base.add(start), byte_size) });
        }
        Err(exhausted(byte_size, byte_alignment, offset, self.size))
    }

    /// As [`SegmentAllocator::allocate`], then fills the segment with zeroes.
    ///
    /// # Errors
    /// As [`SegmentAllocator::allocate`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{BufferStack, SegmentAllocator};
    /// let stack = BufferStack::new(64, 8).unwrap();
    /// let frame = stack.push_frame(8, 8).unwrap();
    /// frame.allocate(8, 8).unwrap().set::<u64>(0, u64::MAX).unwrap();
    /// frame.close().unwrap();
    /// let frame = stack.push_frame(8, 8).unwrap(); // the same bytes again, not cleared
    /// assert_eq!(frame.allocate_zeroed(8, 8).unwrap().get::<u64>(0).unwrap(), 0);
    /// ```
    #[inline]
    pub fn allocate_zeroed(
        &self,
        byte_size: usize,
        byte_alignment: usize,
    ) -> Result<MemorySegment<'_>> {
        let segment = self.bump(byte_size, byte_alignment)?;
        segment.fill(0);
        Ok(segment)
    }

    #[inline]
    fn is_top_of_stack(&self) -> bool {
        // SAFETY: a stack frame holds a block reference (invariant 1), on the block's thread.
        self.block.is_null() || unsafe { (*self.block).sp.get() } == self.top
    }

    /// Closes the frame: its bytes are given back to the stack (or, for a fallback, to the
    /// heap), to be reused by the next frame.
    ///
    /// # Errors
    /// [`Error::FrameNotTopOfStack`] if a frame pushed after this one on the same thread and
    /// stack is still open. The stack pointer and every other frame are then unchanged; this
    /// frame, consumed by the call, is dropped, which defers its release (see the type's docs).
    /// Use [`Frame::try_close`] to keep the frame instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::BufferStack;
    /// use gatun::Error;
    /// let stack = BufferStack::new(64, 8).unwrap();
    /// let outer = stack.push_frame(8, 8).unwrap();
    /// let inner = stack.push_frame(8, 8).unwrap();
    /// assert_eq!(outer.close().unwrap_err(), Error::FrameNotTopOfStack);
    /// inner.close().unwrap();
    /// ```
    #[inline]
    pub fn close(self) -> Result<()> {
        if self.is_top_of_stack() {
            drop(self);
            Ok(())
        } else {
            drop(self);
            Err(Error::FrameNotTopOfStack)
        }
    }

    /// Closes the frame if it is top-of-stack; otherwise changes nothing and hands the frame
    /// back as `Err(frame)`, still open and usable.
    ///
    /// # Errors
    /// `Err(self)` when the frame is not top-of-stack (the JDK's
    /// `IllegalStateException("Out of order access: frame not top-of-stack")`).
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::BufferStack;
    /// let stack = BufferStack::new(64, 8).unwrap();
    /// let outer = stack.push_frame(8, 8).unwrap();
    /// let inner = stack.push_frame(8, 8).unwrap();
    /// let outer = outer.try_close().unwrap_err(); // handed back, still open
    /// inner.try_close().unwrap();
    /// outer.try_close().unwrap();
    /// ```
    #[inline]
    pub fn try_close(self) -> std::result::Result<(), Self> {
        if self.is_top_of_stack() {
            drop(self);
            Ok(())
        } else {
            Err(self)
        }
    }
}

impl SegmentAllocator for Frame<'_> {
    /// Bumps inside the frame; **not zeroed** (see [`Frame`]).
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`], [`Error::SizeOverflow`]; [`Error::AllocatorExhausted`] when
    /// the request does not fit in what is left of the frame.
    #[inline]
    fn allocate(&self, byte_size: usize, byte_alignment: usize) -> Result<MemorySegment<'_>> {
        self.bump(byte_size, byte_alignment)
    }

    #[inline]
    fn allocate_uninit(
        &self,
        byte_size: usize,
        byte_alignment: usize,
    ) -> Result<MemorySegment<'_>> {
        self.bump(byte_size, byte_alignment)
    }
}

impl Drop for Frame<'_> {
    /// Pops the frame if it is top-of-stack, otherwise defers its release (see [`Frame`]);
    /// a fallback frame frees its heap block.
    #[inline]
    fn drop(&mut self) {
        match NonNull::new(self.block) {
            // SAFETY: the frame holds a block reference (invariant 1), on the block's thread;
            // it gives it up here and never uses the block again.
            Some(block) => unsafe {
                block.as_ref().release(self.parent, self.top);
                Block::drop_ref(block);
            },
            // SAFETY: a fallback's base, size and alignment (in `parent`) come from
            // `heap_block`; nothing uses the block after the frame.
            None => unsafe { free_heap_block(self.base, self.size, self.parent) },
        }
    }
}

impl fmt::Debug for Frame<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame")
            .field("address", &format_args!("{:#x}", self.base as usize))
            .field("byte_size", &self.byte_size())
            .field("used_bytes", &self.used_bytes())
            .field("fallback", &self.is_fallback())
            .finish()
    }
}

/// The process-wide stack that downcalls push their scratch buffers on (return buffers of
/// multi-register returns, copies of by-value arguments; the JDK's `SharedUtils.LINKER_STACK`).
///
/// Its per-thread size is read once, on first use, from [`LINKER_STACK_SIZE_ENV`] (a byte count,
/// default [`DEFAULT_LINKER_STACK_SIZE`] = 256); an invalid value is reported once on stderr and
/// the default is used. The block alignment is 1 (so at least [`BLOCK_MIN_ALIGNMENT`]). The
/// linker pushes one frame per call that has copies to make (an upcall's struct arguments,
/// AArch64 by-reference arguments), sized and aligned at link time to hold all of them: its
/// alignment is the largest alignment among the copied layouts (at least 8 on AArch64 when a
/// compiled stub's array of copy pointers leads the frame), each copy at the next multiple
/// of its own alignment.
///
/// ```
/// use gatun::memory::linker_stack;
/// let stack = linker_stack();
/// assert!(std::ptr::eq(stack, linker_stack())); // one stack per process
/// assert_eq!(stack.byte_alignment(), 1);
/// ```
pub fn linker_stack() -> &'static BufferStack {
    static STACK: OnceLock<BufferStack> = OnceLock::new();
    STACK.get_or_init(|| {
        let value = std::env::var_os(LINKER_STACK_SIZE_ENV);
        let size = match parse_linker_stack_size(value.as_deref()) {
            Ok(size) => size,
            Err(message) => {
                // Never panic on a closed stderr.
                let _ = writeln!(
                    std::io::stderr(),
                    "gatun: {message}; using the default of {DEFAULT_LINKER_STACK_SIZE} bytes"
                );
                DEFAULT_LINKER_STACK_SIZE
            }
        };
        BufferStack::new(size, 1).expect("validated by parse_linker_stack_size")
    })
}

/// The linker stack size for the value of [`LINKER_STACK_SIZE_ENV`]: the default when unset,
/// the number of bytes when it is a decimal byte count (surrounding spaces allowed) up to
/// `isize::MAX`, otherwise an error message naming the value.
pub(crate) fn parse_linker_stack_size(
    value: Option<&std::ffi::OsStr>,
) -> std::result::Result<usize, String> {
    let Some(value) = value else {
        return Ok(DEFAULT_LINKER_STACK_SIZE);
    };
    let invalid = || {
        format!(
            "invalid {LINKER_STACK_SIZE_ENV}={value:?}: expected a byte count (0 to {})",
            isize::MAX
        )
    };
    let text = value.to_str().ok_or_else(invalid)?;
    let size: usize = text.trim().parse().map_err(|_| invalid())?;
    check_size_align(size, 1).map_err(|_| invalid())?;
    Ok(size)
}

#[cfg(test)]
mod tests;
