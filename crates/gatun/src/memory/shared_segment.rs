//! [`SharedSegment`]: a bounds-checked view of native memory that several threads may use at
//! once (`Send + Sync`), like a segment of Java's `Arena.ofShared()`.
//!
//! # Safety argument (the whole unsafe story of this module)
//! A `SharedSegment<'a>` holds `ptr` and `len` such that, for all of `'a`, the bytes
//! `ptr..ptr+len` are allocated, and while any `SharedSegment` over them is in use, Rust code
//! accesses them **only through this module**, which touches them **only with relaxed atomic
//! operations of one byte** (`AtomicU8::load` / `AtomicU8::store` through
//! [`AtomicU8::from_ptr`]).
//!
//! Why that is sound in Rust's memory model (C++20's, access-based):
//! - A data race is two conflicting accesses from different threads, not ordered by
//!   happens-before, of which *at least one is non-atomic*. Every access made here is atomic,
//!   so accesses through shared segments never form a data race, from any number of threads.
//! - Racing atomic accesses must have the same size whenever one of them is a write (mixed-size
//!   atomic reads are allowed, mixed-size racing writes are undefined behaviour). Every access
//!   made here is exactly one byte wide, so no two can differ in size. (This is why a `u32` is
//!   not read with one `AtomicU32` load: a concurrent one-byte `set::<u8>` into it would be a
//!   mixed-size race.)
//! - `AtomicU8` has alignment 1 and the size and bit validity of `u8`, so any in-bounds byte
//!   address is a valid `&AtomicU8` ([`AtomicU8::from_ptr`]'s requirements), and any byte
//!   pattern a value is assembled from is valid for the [`Scalar`] types (a `bool` reads any
//!   non-zero byte as `true`).
//! - Safe constructors hand out fresh memory: [`SharedArena::allocate_shared`] and
//!   [`GlobalArena::allocate_shared`] allocate a new block (zeroed by the allocator before any
//!   other thread can see it; the handoff to other threads — spawning, a channel, a scope —
//!   orders that write before their accesses) and keep no other view of it. The memory is
//!   freed only when the arena drops, which the borrow `'a` outlives; every thread's last
//!   access happens before that (the threads that borrowed the segment are joined, or a scope
//!   ended, before the borrow of the arena can end).
//! - The escape hatches are `unsafe`: [`SharedSegment::from_raw_parts`] (the caller promises
//!   the same), [`SharedSegment::as_segment`] (a [`MemorySegment`] accesses memory with plain
//!   reads and writes, so no other thread may touch the bytes while it is used).
//!   [`SharedSegment::as_address`] is safe: handing an address to C is what an `unsafe`
//!   downcall does with it, and C's own synchronisation is that call's contract.
//!
//! What the design gives up: a multi-byte value is written byte by byte, so a reader racing
//! with a writer may see some old and some new bytes of it (no undefined behaviour, but no
//! atomicity of the value as a whole). Use a lock, a channel or thread joins to order writes
//! before reads of the same value, as with any shared data.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::{Error, Result};
use crate::layout::ValueLayout;
use crate::memory::segment::{read_kind, write_value};
use crate::memory::{GlobalArena, MemorySegment, SegmentAllocator, SharedArena};
use crate::value::{Scalar, Value};

/// Native memory that any number of threads may read and write at once: `Copy`, `Send` and
/// `Sync`, every access bounds-checked (Java's shared-arena segments).
///
/// Every access is made of relaxed one-byte atomic operations (see the module docs for why):
/// safe from any thread at any time, but a multi-byte value written while another thread
/// reads it may be seen half old, half new. Order writes before reads (a lock, a channel, a
/// thread join) when whole values matter. Sizes and offsets are in bytes; aligned accessors
/// check the absolute address against the natural (or layout's) alignment.
///
/// ```
/// use gatun::memory::Arena;
/// let arena = Arena::shared();
/// let counters = arena.allocate_shared(8 * 4, 8).unwrap();
/// std::thread::scope(|s| {
///     for t in 0..4 {
///         s.spawn(move || counters.set::<u64>(8 * t, 100 + t as u64).unwrap());
///     }
/// });
/// let sum: u64 = (0..4).map(|t| counters.get::<u64>(8 * t).unwrap()).sum();
/// assert_eq!(sum, 406);
/// ```
#[derive(Clone, Copy)]
pub struct SharedSegment<'a> {
    ptr: *mut u8,
    len: usize,
    _owner: PhantomData<&'a [AtomicU8]>,
}

// SAFETY: the bytes are valid for 'a on every thread (heap memory owned by a `Sync` arena, or
// the caller's promise in `from_raw_parts`) and are only accessed with one-byte atomics (module
// docs), so sending or sharing the view cannot create a data race.
unsafe impl Send for SharedSegment<'_> {}
// SAFETY: as for `Send`: `&SharedSegment` offers only atomic accesses.
unsafe impl Sync for SharedSegment<'_> {}

impl fmt::Debug for SharedSegment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SharedSegment {{ address: {:#x}, byte_size: {} }}",
            self.ptr as usize, self.len
        )
    }
}

impl PartialEq for SharedSegment<'_> {
    /// Same address and size.
    fn eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr && self.len == other.len
    }
}
impl Eq for SharedSegment<'_> {}

impl SharedArena {
    /// A zeroed block of `byte_size` bytes aligned to `byte_alignment`, as a
    /// [`SharedSegment`] that threads may use concurrently; freed when the arena drops.
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`], [`Error::SizeOverflow`], [`Error::OutOfMemory`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(16, 8).unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| seg.set::<u64>(8, 3).unwrap());
    /// });
    /// assert_eq!((seg.byte_size(), seg.get::<u64>(8).unwrap()), (16, 3));
    /// ```
    pub fn allocate_shared(
        &self,
        byte_size: usize,
        byte_alignment: usize,
    ) -> Result<SharedSegment<'_>> {
        let seg = self.allocate(byte_size, byte_alignment)?;
        // SAFETY: `seg` is a fresh block of this arena, valid until it drops (which the
        // returned borrow outlives); no other view of it exists once `seg` goes out of scope.
        Ok(unsafe { SharedSegment::from_raw_parts(seg.as_ptr(), seg.byte_size()) })
    }
}

impl GlobalArena {
    /// As [`SharedArena::allocate_shared`], for memory that is never freed.
    ///
    /// ```
    /// let counter = gatun::memory::Arena::global().allocate_shared(4, 4).unwrap();
    /// std::thread::spawn(move || counter.set(0, 7_i32).unwrap()).join().unwrap();
    /// assert_eq!(counter.get::<i32>(0).unwrap(), 7);
    /// ```
    ///
    /// # Errors
    /// As [`SharedArena::allocate_shared`].
    pub fn allocate_shared(
        &self,
        byte_size: usize,
        byte_alignment: usize,
    ) -> Result<SharedSegment<'static>> {
        let seg = self.allocate_static(byte_size, byte_alignment)?;
        // SAFETY: a fresh block that is never freed; no other view of it is kept.
        Ok(unsafe { SharedSegment::from_raw_parts(seg.as_ptr(), seg.byte_size()) })
    }
}

/// The largest scalar, in bytes (values are assembled in a buffer of this size).
const MAX_SCALAR: usize = 8;

impl<'a> SharedSegment<'a> {
    /// A shared segment over `len` bytes at `ptr`.
    ///
    /// # Safety
    /// For all of `'a`, `ptr..ptr+len` must be allocated and, while any view made from this
    /// segment is used, accessed by Rust code only through shared segments (C code and
    /// accesses ordered by happens-before excepted). `ptr` must not be null unless `len` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::AtomicU32;
    /// use gatun::memory::SharedSegment;
    /// let word = AtomicU32::new(0);
    /// // SAFETY: `word` outlives `seg` and Rust code touches it only through `seg`.
    /// let seg = unsafe { SharedSegment::from_raw_parts(word.as_ptr().cast(), 4) };
    /// seg.set::<u32>(0, 6).unwrap();
    /// assert_eq!(seg.get::<u32>(0).unwrap(), 6);
    /// ```
    pub unsafe fn from_raw_parts(ptr: *mut u8, len: usize) -> SharedSegment<'a> {
        SharedSegment {
            ptr,
            len,
            _owner: PhantomData,
        }
    }

    /// Size in bytes.
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// assert_eq!(arena.allocate_shared(24, 8).unwrap().byte_size(), 24);
    /// ```
    #[inline]
    pub fn byte_size(&self) -> usize {
        self.len
    }

    /// `true` when the size is 0.
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(8, 8).unwrap();
    /// assert!(!seg.is_empty());
    /// assert!(seg.slice(8, 0).unwrap().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The absolute address of the first byte.
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(8, 64).unwrap();
    /// assert_eq!(seg.address() % 64, 0);
    /// assert_eq!(seg.slice(4, 4).unwrap().address(), seg.address() + 4);
    /// ```
    #[inline]
    pub fn address(&self) -> usize {
        self.ptr as usize
    }

    /// The first byte as a C pointer, to pass to a downcall (`Value::from(&shared)` does the
    /// same). What the C function does with it, and how it synchronises with other threads,
    /// is the contract of that (`unsafe`) call.
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// use gatun::Value;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(8, 8).unwrap();
    /// assert_eq!(seg.as_address() as usize, seg.address());
    /// assert_eq!(Value::from(&seg), Value::Address(seg.as_address()));
    /// ```
    #[inline]
    pub fn as_address(&self) -> *mut c_void {
        self.ptr.cast()
    }

    /// This memory as an ordinary [`MemorySegment`] (to pass a struct by value, or to use the
    /// segment API), accessed with plain reads and writes.
    ///
    /// # Safety
    /// While the returned segment (or a copy or slice of it) is used, no other thread may
    /// access these bytes (through any shared segment or otherwise), and the segment must not
    /// be used after `'a`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let shared = arena.allocate_shared(8, 8).unwrap();
    /// // SAFETY: no other thread uses these bytes while `plain` is in use.
    /// let plain = unsafe { shared.as_segment() };
    /// plain.set::<i64>(0, -2).unwrap();
    /// assert_eq!(shared.get::<i64>(0).unwrap(), -2);
    /// ```
    pub unsafe fn as_segment(&self) -> MemorySegment<'a> {
        // SAFETY: valid for 'a (our invariant); exclusivity while it is used is the caller's
        // promise, which makes its plain accesses race-free.
        unsafe { MemorySegment::from_raw_parts(self.ptr, self.len) }
    }

    #[inline]
    fn check(&self, offset: usize, size: usize) -> Result<()> {
        match offset.checked_add(size) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(Error::OutOfBounds {
                offset,
                access_size: size,
                segment_size: self.len,
            }),
        }
    }

    #[inline]
    fn check_aligned(&self, offset: usize, alignment: usize) -> Result<()> {
        let address = self.address().wrapping_add(offset);
        if address & (alignment - 1) != 0 {
            return Err(Error::MisalignedAccess { address, alignment });
        }
        Ok(())
    }

    /// The byte at `offset` as an atomic. `offset < self.len` is the caller's check.
    #[inline(always)]
    fn byte(&self, offset: usize) -> &AtomicU8 {
        debug_assert!(offset < self.len);
        // SAFETY: offset < len, so the byte is allocated for 'a (our invariant), which outlives
        // `&self`; it is only accessed atomically (module docs); AtomicU8 has u8's size and
        // alignment 1.
        unsafe { AtomicU8::from_ptr(self.ptr.add(offset)) }
    }

    #[inline]
    fn load_bytes(&self, offset: usize, out: &mut [u8]) {
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.byte(offset + i).load(Ordering::Relaxed);
        }
    }

    #[inline]
    fn store_bytes(&self, offset: usize, bytes: &[u8]) {
        for (i, b) in bytes.iter().enumerate() {
            self.byte(offset + i).store(*b, Ordering::Relaxed);
        }
    }

    /// The sub-segment `offset..offset+len`.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`] if it does not lie within `self`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(16, 8).unwrap();
    /// seg.slice(8, 8).unwrap().set::<u64>(0, 1).unwrap();
    /// assert_eq!(seg.get::<u64>(8).unwrap(), 1);
    /// assert!(seg.slice(9, 8).is_err());
    /// ```
    pub fn slice(&self, offset: usize, len: usize) -> Result<SharedSegment<'a>> {
        self.check(offset, len)?;
        Ok(SharedSegment {
            ptr: self.ptr.wrapping_add(offset),
            len,
            _owner: PhantomData,
        })
    }

    /// Reads a `T` at `offset`; the address must be aligned to `T`'s natural alignment.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`], [`Error::MisalignedAccess`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// use gatun::Error;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(8, 8).unwrap();
    /// assert_eq!(seg.get::<u32>(4).unwrap(), 0);
    /// assert_eq!(seg.get::<u32>(2).unwrap_err(), Error::MisalignedAccess { address: seg.address() + 2, alignment: 4 });
    /// ```
    pub fn get<T: Scalar>(&self, offset: usize) -> Result<T> {
        self.check(offset, T::KIND.byte_size())?;
        self.check_aligned(offset, T::KIND.natural_alignment())?;
        Ok(self.read(offset))
    }

    /// Writes a `T` at `offset`; the address must be aligned to `T`'s natural alignment.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`], [`Error::MisalignedAccess`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(8, 8).unwrap();
    /// seg.set::<f32>(4, 2.0).unwrap();
    /// assert_eq!(seg.get::<f32>(4).unwrap(), 2.0);
    /// assert!(seg.set::<f64>(4, 2.0).is_err()); // out of bounds
    /// ```
    pub fn set<T: Scalar>(&self, offset: usize, value: T) -> Result<()> {
        self.check(offset, T::KIND.byte_size())?;
        self.check_aligned(offset, T::KIND.natural_alignment())?;
        self.write(offset, value);
        Ok(())
    }

    /// Reads a `T` at `offset` with no alignment requirement.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(8, 8).unwrap();
    /// seg.copy_from_slice(1, &7_u32.to_ne_bytes()).unwrap();
    /// assert_eq!(seg.get_unaligned::<u32>(1).unwrap(), 7);
    /// ```
    pub fn get_unaligned<T: Scalar>(&self, offset: usize) -> Result<T> {
        self.check(offset, T::KIND.byte_size())?;
        Ok(self.read(offset))
    }

    /// Writes a `T` at `offset` with no alignment requirement.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(8, 8).unwrap();
    /// seg.set_unaligned::<u16>(3, 0xFFFF).unwrap();
    /// assert_eq!(seg.to_vec(), [0, 0, 0, 0xFF, 0xFF, 0, 0, 0]);
    /// ```
    pub fn set_unaligned<T: Scalar>(&self, offset: usize, value: T) -> Result<()> {
        self.check(offset, T::KIND.byte_size())?;
        self.write(offset, value);
        Ok(())
    }

    fn read<T: Scalar>(&self, offset: usize) -> T {
        let mut buf = [0u8; MAX_SCALAR];
        let n = T::KIND.byte_size();
        self.load_bytes(offset, &mut buf[..n]);
        // SAFETY: `buf` holds n = size_of::<T>() readable bytes; every pattern is a valid T
        // (Scalar's contract; bool reads a byte as `!= 0`).
        unsafe { T::read_from(buf.as_ptr()) }
    }

    fn write<T: Scalar>(&self, offset: usize, value: T) {
        let mut buf = [0u8; MAX_SCALAR];
        // SAFETY: `buf` has room for size_of::<T>() <= 8 bytes.
        unsafe { value.write_to(buf.as_mut_ptr()) };
        self.store_bytes(offset, &buf[..T::KIND.byte_size()]);
    }

    /// Reads the value described by `layout` at `offset`, checking the layout's alignment. A
    /// pointer comes back as a [`Value::Address`] even when `layout` carries a target (the
    /// segments a target gives are confined to one thread; turn the address into one with
    /// [`ValueLayout::target_of`] on the thread that uses it).
    ///
    /// # Errors
    /// [`Error::OutOfBounds`], [`Error::MisalignedAccess`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// use gatun::{Value, ValueLayout};
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(8, 8).unwrap();
    /// seg.set::<u8>(1, 200).unwrap();
    /// assert_eq!(seg.get_value(&ValueLayout::U8, 1).unwrap(), Value::U8(200));
    /// ```
    pub fn get_value(&self, layout: &ValueLayout, offset: usize) -> Result<Value<'static>> {
        self.check(offset, layout.byte_size())?;
        self.check_aligned(offset, layout.byte_alignment())?;
        let mut buf = [0u8; MAX_SCALAR];
        self.load_bytes(offset, &mut buf[..layout.byte_size()]);
        // SAFETY: `buf` holds the layout's byte_size readable bytes.
        Ok(unsafe { read_kind(layout.kind(), buf.as_ptr()) })
    }

    /// Writes `value` as described by `layout` at `offset`; the value's kind must be the
    /// layout's kind exactly.
    ///
    /// # Errors
    /// [`Error::ValueMismatch`], [`Error::OutOfBounds`], [`Error::MisalignedAccess`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// use gatun::{Error, Value, ValueLayout};
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(8, 8).unwrap();
    /// seg.set_value(&ValueLayout::I32, 4, &Value::I32(-7)).unwrap();
    /// assert_eq!(seg.get::<i32>(4).unwrap(), -7);
    /// let e = seg.set_value(&ValueLayout::I32, 0, &Value::U32(1)).unwrap_err();
    /// assert!(matches!(e, Error::ValueMismatch { .. }));
    /// ```
    pub fn set_value(&self, layout: &ValueLayout, offset: usize, value: &Value<'_>) -> Result<()> {
        if value.scalar_kind() != Some(layout.kind()) {
            return Err(Error::ValueMismatch {
                position: format!("offset {offset}"),
                expected: layout.kind().to_string(),
                found: value.kind_name().into(),
            });
        }
        self.check(offset, layout.byte_size())?;
        self.check_aligned(offset, layout.byte_alignment())?;
        let mut buf = [0u8; MAX_SCALAR];
        // SAFETY: `buf` has room for any scalar; the kind matches the layout's size.
        unsafe { write_value(value, buf.as_mut_ptr()) };
        self.store_bytes(offset, &buf[..layout.byte_size()]);
        Ok(())
    }

    /// Copies `bytes` into the segment at `offset`.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(4, 1).unwrap();
    /// seg.copy_from_slice(2, b"hi").unwrap();
    /// assert_eq!(seg.to_vec(), b"\0\0hi");
    /// assert!(seg.copy_from_slice(3, b"hi").is_err());
    /// ```
    pub fn copy_from_slice(&self, offset: usize, bytes: &[u8]) -> Result<()> {
        self.check(offset, bytes.len())?;
        self.store_bytes(offset, bytes);
        Ok(())
    }

    /// Copies `out.len()` bytes from the segment at `offset` into `out`.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(4, 1).unwrap();
    /// seg.fill(5);
    /// let mut out = [0u8; 3];
    /// seg.copy_to_slice(1, &mut out).unwrap();
    /// assert_eq!(out, [5, 5, 5]);
    /// ```
    pub fn copy_to_slice(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        self.check(offset, out.len())?;
        self.load_bytes(offset, out);
        Ok(())
    }

    /// A copy of the segment's bytes.
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(3, 1).unwrap();
    /// seg.set::<u8>(2, 9).unwrap();
    /// assert_eq!(seg.to_vec(), [0, 0, 9]);
    /// ```
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.len];
        self.load_bytes(0, &mut v);
        v
    }

    /// Sets every byte to `byte`.
    ///
    /// ```
    /// use gatun::memory::Arena;
    /// let arena = Arena::shared();
    /// let seg = arena.allocate_shared(4, 4).unwrap();
    /// seg.fill(1);
    /// assert_eq!(seg.get::<u32>(0).unwrap(), 0x0101_0101);
    /// ```
    pub fn fill(&self, byte: u8) {
        for i in 0..self.len {
            self.byte(i).store(byte, Ordering::Relaxed);
        }
    }
}

impl From<SharedSegment<'_>> for Value<'_> {
    /// `Value::Address` of the first byte (see [`SharedSegment::as_address`]).
    fn from(s: SharedSegment<'_>) -> Self {
        Value::Address(s.as_address())
    }
}

impl From<&SharedSegment<'_>> for Value<'_> {
    /// `Value::Address` of the first byte.
    fn from(s: &SharedSegment<'_>) -> Self {
        Value::Address(s.as_address())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::ScalarKind;
    use crate::memory::Arena;
    use std::sync::atomic::AtomicBool;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn shared_segments_are_send_and_sync() {
        assert_send_sync::<SharedSegment<'_>>();
    }

    #[test]
    fn accesses_are_bounds_and_alignment_checked() {
        let arena = Arena::shared();
        let s = arena.allocate_shared(16, 8).unwrap();
        assert_eq!(s.byte_size(), 16);
        assert_eq!(s.to_vec(), [0; 16], "zeroed");
        s.set::<u64>(8, u64::MAX - 1).unwrap();
        assert_eq!(s.get::<u64>(8).unwrap(), u64::MAX - 1);
        assert!(matches!(s.get::<u64>(9), Err(Error::OutOfBounds { .. })));
        assert!(matches!(
            s.get::<u32>(2),
            Err(Error::MisalignedAccess { .. })
        ));
        assert!(matches!(
            s.get::<u32>(usize::MAX),
            Err(Error::OutOfBounds { .. })
        ));
        s.set_unaligned::<u32>(1, 0xdead_beef).unwrap();
        assert_eq!(s.get_unaligned::<u32>(1).unwrap(), 0xdead_beef);
        assert_eq!(
            s.get_unaligned::<u32>(1).unwrap().to_ne_bytes(),
            [s.to_vec()[1], s.to_vec()[2], s.to_vec()[3], s.to_vec()[4]]
        );
        s.set(0, true).unwrap();
        assert!(s.get::<bool>(0).unwrap());
        s.copy_from_slice(0, &[7; 4]).unwrap();
        // A byte that is not 0 or 1 still reads as a valid bool.
        assert!(s.get::<bool>(0).unwrap());
        let mut out = [0u8; 4];
        s.copy_to_slice(12, &mut out).unwrap();
        assert!(s.copy_to_slice(13, &mut out).is_err());
        let v = ValueLayout::F64;
        s.set_value(&v, 8, &Value::F64(-0.5)).unwrap();
        assert_eq!(s.get_value(&v, 8).unwrap(), Value::F64(-0.5));
        assert!(matches!(
            s.set_value(&v, 8, &Value::I64(1)),
            Err(Error::ValueMismatch { .. })
        ));
        let tail = s.slice(8, 8).unwrap();
        assert_eq!(tail.get::<f64>(0).unwrap(), -0.5);
        assert!(s.slice(9, 8).is_err());
        s.fill(0xab);
        assert_eq!(s.to_vec(), [0xab; 16]);
        let p = ValueLayout::new(ScalarKind::Pointer);
        s.set_value(&p, 0, &Value::Address(s.as_address())).unwrap();
        assert_eq!(s.get::<*mut c_void>(0).unwrap(), s.as_address());
        assert_eq!(Value::from(s), Value::Address(s.as_address()));
    }

    #[test]
    fn threads_write_their_slots_and_race_on_a_shared_one() {
        let threads = if cfg!(miri) { 3 } else { 8 };
        let rounds = if cfg!(miri) { 20 } else { 2000 };
        let arena = Arena::shared();
        let s = arena.allocate_shared(8 * threads + 8, 8).unwrap();
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            for t in 0..threads {
                scope.spawn(move || {
                    for r in 0..rounds {
                        let v = (t * 1_000_000 + r) as u64;
                        s.set::<u64>(8 * t, v).unwrap();
                        assert_eq!(s.get::<u64>(8 * t).unwrap(), v);
                        // All threads also write and read one common slot, in different
                        // widths: racy (values may tear) but free of data races.
                        let last = 8 * threads;
                        s.set::<u32>(last, r as u32).unwrap();
                        s.set::<u8>(last + (t % 8), t as u8).unwrap();
                        let _ = s.get::<u64>(last).unwrap();
                        let _ = s.get_unaligned::<u16>(last + 3).unwrap();
                    }
                });
            }
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let _ = s.to_vec();
                    if cfg!(miri) {
                        break;
                    }
                    std::thread::yield_now();
                }
            });
            // Let the reader run while the writers do.
            std::thread::yield_now();
            stop.store(true, Ordering::Relaxed);
        });
        for t in 0..threads {
            assert_eq!(
                s.get::<u64>(8 * t).unwrap(),
                (t * 1_000_000 + rounds - 1) as u64
            );
        }
    }

    #[test]
    fn global_shared_segments_are_static() {
        let s: SharedSegment<'static> = Arena::global().allocate_shared(4, 4).unwrap();
        std::thread::spawn(move || s.set(0, 42_i32).unwrap())
            .join()
            .unwrap();
        assert_eq!(s.get::<i32>(0).unwrap(), 42);
        assert!(Arena::global().allocate_shared(1, 3).is_err());
    }

    #[test]
    fn as_segment_gives_the_same_bytes() {
        let arena = Arena::shared();
        let s = arena.allocate_shared(8, 8).unwrap();
        s.set(0, 5_i64).unwrap();
        // SAFETY: no other thread uses `s` while `m` is used.
        let m = unsafe { s.as_segment() };
        assert_eq!(m.get::<i64>(0).unwrap(), 5);
        assert_eq!(m.as_address(), s.as_address());
    }
}
