//! [`MemorySegment`]: a bounds-checked view of native memory tied to its owner's lifetime.
//!
//! # Invariants (the whole unsafe story of this module)
//! A `MemorySegment<'a>` holds `ptr` and `len` such that, for all of `'a`, the bytes
//! `ptr..ptr+len` are allocated, readable and writable, and are only ever accessed through raw
//! pointers (never through `&`/`&mut` references that another segment could alias). Safe
//! constructors establish this from an owner borrowed for `'a` (an arena, a frame, a
//! `&'a mut [u8]`); the `unsafe` constructors make it the caller's promise. Because every access
//! is a raw-pointer read or write on one thread (segments are `!Send` and `!Sync`), overlapping
//! segments are fine — they behave like `Cell`s.

use std::cell::Cell;
use std::ffi::{c_void, CString};
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::error::{Error, Result};
use crate::layout::{ScalarKind, ValueLayout};
use crate::value::{Scalar, Value};

/// A contiguous region of native memory: an address and a size in bytes, valid for the
/// lifetime `'a` of whatever owns it (Java's `MemorySegment`).
///
/// - Every access is bounds-checked ([`Error::OutOfBounds`]); aligned accessors also check the
///   absolute address against the layout's alignment ([`Error::MisalignedAccess`]).
/// - `Copy`: a segment is a view, like a Java segment reference; copies alias the same bytes.
/// - `!Send` and `!Sync`: the memory may belong to a thread-confined owner (a confined arena,
///   a BufferStack frame) and unsynchronised access from two threads would be a data race.
///   Share memory between threads through [`crate::memory::SharedArena`] allocation on each
///   thread, or through raw addresses under your own synchronisation.
///
/// ```
/// use gatun::memory::{Arena, SegmentAllocator};
/// use gatun::MemorySegment;
/// let arena = Arena::confined();
/// let seg = arena.allocate(16, 8).unwrap(); // zeroed
/// seg.set::<i32>(4, -1).unwrap();
/// assert_eq!(seg.get::<u8>(4).unwrap(), 0xff);
/// let tail = seg.slice(8, 8).unwrap();
/// tail.set::<f64>(0, 2.5).unwrap();
/// assert_eq!(seg.get::<f64>(8).unwrap(), 2.5); // slices alias the same bytes
/// assert!(seg.get::<i64>(12).is_err()); // out of bounds
/// let mut buf = [0u8; 4];
/// let over_rust = MemorySegment::of_slice(&mut buf);
/// over_rust.set_string(0, "abc").unwrap();
/// assert_eq!(buf, *b"abc\0");
/// ```
#[derive(Clone, Copy)]
pub struct MemorySegment<'a> {
    ptr: NonNull<u8>,
    len: usize,
    _owner: PhantomData<&'a Cell<u8>>,
}

impl fmt::Debug for MemorySegment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MemorySegment {{ address: {:#x}, byte_size: {} }}",
            self.address(),
            self.len
        )
    }
}

impl PartialEq for MemorySegment<'_> {
    /// Two segments are equal when they have the same address and size (Java's `equals`).
    fn eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr && self.len == other.len
    }
}
impl Eq for MemorySegment<'_> {}

#[inline(always)]
fn oob(offset: usize, access_size: usize, segment_size: usize) -> Error {
    Error::OutOfBounds {
        offset,
        access_size,
        segment_size,
    }
}

// Read only by the stub compilers (compiled where a backend executes, and for their tests).
#[cfg(any(test, gatun_executes))]
impl MemorySegment<'_> {
    /// Byte offset of the base pointer inside a `MemorySegment` (read by compiled downcall
    /// stubs, `backend::x86_64_sysv::stub`).
    pub(crate) const PTR_OFFSET: usize = std::mem::offset_of!(MemorySegment<'static>, ptr);
    /// Byte offset of the length (bytes) inside a `MemorySegment` (read by compiled stubs).
    pub(crate) const LEN_OFFSET: usize = std::mem::offset_of!(MemorySegment<'static>, len);
}

impl<'a> MemorySegment<'a> {
    /// The zero-length segment at address 0 (Java's `MemorySegment.NULL`): every access fails.
    pub const NULL: MemorySegment<'static> = MemorySegment {
        ptr: NonNull::dangling(),
        len: 0,
        _owner: PhantomData,
    };

    /// A segment over `len` bytes at `ptr`.
    ///
    /// # Safety
    /// For all of `'a`, `ptr..ptr+len` must be allocated, readable and writable, and must not be
    /// accessed through Rust references that are live while this segment (or a copy) is used.
    /// `ptr` must not be null unless `len` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::MemorySegment;
    /// let mut words = [0u64; 2];
    /// // SAFETY: `words` outlives `seg` and is not used through references while `seg` is.
    /// let seg = unsafe { MemorySegment::from_raw_parts(words.as_mut_ptr().cast(), 16) };
    /// seg.set::<u64>(8, 5).unwrap();
    /// assert_eq!(seg.byte_size(), 16);
    /// assert_eq!(words[1], 5);
    /// ```
    #[inline]
    pub unsafe fn from_raw_parts(ptr: *mut u8, len: usize) -> MemorySegment<'a> {
        MemorySegment {
            ptr: NonNull::new(ptr).unwrap_or(NonNull::dangling()),
            len,
            _owner: PhantomData,
        }
    }

    /// A segment over a Rust byte buffer, borrowed mutably for `'a`.
    ///
    /// ```
    /// use gatun::MemorySegment;
    /// let mut buf = [0u8; 8];
    /// let seg = MemorySegment::of_slice(&mut buf);
    /// seg.set_unaligned::<u16>(1, 0x0102).unwrap();
    /// assert_eq!(seg.byte_size(), 8);
    /// assert_eq!(u16::from_ne_bytes([buf[1], buf[2]]), 0x0102);
    /// ```
    pub fn of_slice(bytes: &'a mut [u8]) -> MemorySegment<'a> {
        // SAFETY: the exclusive borrow guarantees the bytes are valid and not otherwise
        // accessed for 'a.
        unsafe { MemorySegment::from_raw_parts(bytes.as_mut_ptr(), bytes.len()) }
    }

    /// A segment at the same address with another size: the way to read memory behind a
    /// pointer that C returned (a zero-length segment) (Java's `reinterpret(long)`).
    ///
    /// # Safety
    /// As [`MemorySegment::from_raw_parts`] for `self.address()..+new_len`, for all of `'b`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let block = arena.allocate_from(7_i32).unwrap();
    /// let empty = block.slice(0, 0).unwrap(); // like a pointer C returned: no size
    /// // SAFETY: the 4 bytes at that address belong to `arena`, which outlives `int`.
    /// let int = unsafe { empty.reinterpret(4) };
    /// assert_eq!(int.get::<i32>(0).unwrap(), 7);
    /// ```
    #[inline]
    pub unsafe fn reinterpret<'b>(self, new_len: usize) -> MemorySegment<'b> {
        // SAFETY: forwarded to the caller.
        unsafe { MemorySegment::from_raw_parts(self.ptr.as_ptr(), new_len) }
    }

    /// `true` for the zero-length segment at address 0 ([`MemorySegment::NULL`], or
    /// [`MemorySegment::from_raw_parts`] of a null pointer). Internally such a segment holds a
    /// dangling non-null pointer so that zero-sized copies and slices stay defined behaviour.
    #[inline]
    fn is_null(&self) -> bool {
        self.len == 0 && self.ptr == NonNull::dangling()
    }

    /// The absolute address of the first byte (0 for [`MemorySegment::NULL`]). A zero-length
    /// segment whose pointer is Rust's dangling address for `u8` (1, e.g. one over an empty
    /// slice) is indistinguishable from `NULL` and also reports 0.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::MemorySegment;
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(16, 16).unwrap();
    /// assert_eq!(seg.address() % 16, 0);
    /// assert_eq!(seg.slice_from(4).unwrap().address(), seg.address() + 4);
    /// assert_eq!(MemorySegment::NULL.address(), 0);
    /// ```
    #[inline]
    pub fn address(&self) -> usize {
        if self.is_null() {
            0
        } else {
            self.ptr.as_ptr() as usize
        }
    }

    /// The first byte as a raw pointer (for passing to C); a null pointer for
    /// [`MemorySegment::NULL`].
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::MemorySegment;
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(4, 4).unwrap();
    /// assert_eq!(seg.as_ptr() as usize, seg.address());
    /// assert!(MemorySegment::NULL.as_ptr().is_null());
    /// ```
    #[inline]
    pub fn as_ptr(&self) -> *mut u8 {
        if self.is_null() {
            std::ptr::null_mut()
        } else {
            self.ptr.as_ptr()
        }
    }

    /// Size in bytes.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(24, 8).unwrap();
    /// assert_eq!(seg.byte_size(), 24);
    /// assert_eq!(seg.slice(4, 10).unwrap().byte_size(), 10);
    /// ```
    #[inline]
    pub fn byte_size(&self) -> usize {
        self.len
    }

    /// `true` when the size is 0.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::MemorySegment;
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(8, 8).unwrap();
    /// assert!(!seg.is_empty());
    /// assert!(seg.slice_from(8).unwrap().is_empty());
    /// assert!(MemorySegment::NULL.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `true` when `self` and `other` share at least one byte.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(16, 8).unwrap();
    /// let (a, b) = (seg.slice(0, 8).unwrap(), seg.slice(8, 8).unwrap());
    /// assert!(seg.overlaps(&a) && seg.overlaps(&b));
    /// assert!(!a.overlaps(&b)); // adjacent, no shared byte
    /// ```
    pub fn overlaps(&self, other: &MemorySegment<'_>) -> bool {
        let (a, b) = (self.ptr.as_ptr() as usize, other.ptr.as_ptr() as usize);
        self.len > 0 && other.len > 0 && a < b + other.len && b < a + self.len
    }

    #[inline(always)]
    fn check(&self, offset: usize, size: usize) -> Result<*mut u8> {
        match offset.checked_add(size) {
            Some(end) if end <= self.len => {
                // SAFETY: offset + size <= len, so the result is within (or one past) the
                // allocation described by the invariant.
                Ok(unsafe { self.ptr.as_ptr().add(offset) })
            }
            _ => Err(oob(offset, size, self.len)),
        }
    }

    /// The sub-segment `offset..offset+len` (Java's `asSlice`).
    ///
    /// # Errors
    /// [`Error::OutOfBounds`] if it does not lie within `self`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Error;
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(16, 8).unwrap();
    /// let field = seg.slice(8, 4).unwrap();
    /// field.set::<i32>(0, 9).unwrap();
    /// assert_eq!(seg.get::<i32>(8).unwrap(), 9);
    /// assert_eq!(
    ///     seg.slice(12, 8).unwrap_err(),
    ///     Error::OutOfBounds { offset: 12, access_size: 8, segment_size: 16 }
    /// );
    /// ```
    #[inline]
    pub fn slice(&self, offset: usize, len: usize) -> Result<MemorySegment<'a>> {
        let p = self.check(offset, len)?;
        // SAFETY: a sub-range of a valid segment is valid for the same lifetime.
        Ok(unsafe { MemorySegment::from_raw_parts(p, len) })
    }

    /// The sub-segment from `offset` to the end.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`] if `offset > byte_size()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(16, 8).unwrap();
    /// assert_eq!(seg.slice_from(10).unwrap().byte_size(), 6);
    /// assert!(seg.slice_from(17).is_err());
    /// ```
    pub fn slice_from(&self, offset: usize) -> Result<MemorySegment<'a>> {
        let len = self
            .len
            .checked_sub(offset)
            .ok_or(oob(offset, 0, self.len))?;
        self.slice(offset, len)
    }

    /// Reads a `T` at `offset`; the address must be aligned to `T`'s natural alignment.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`], [`Error::MisalignedAccess`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Error;
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from_slice(&[10_i32, 20]).unwrap();
    /// assert_eq!(seg.get::<i32>(4).unwrap(), 20);
    /// let e = seg.get::<i32>(2).unwrap_err();
    /// assert_eq!(e, Error::MisalignedAccess { address: seg.address() + 2, alignment: 4 });
    /// ```
    #[inline]
    pub fn get<T: Scalar>(&self, offset: usize) -> Result<T> {
        let p = self.check(offset, T::KIND.byte_size())?;
        check_aligned(p, T::KIND.natural_alignment())?;
        // SAFETY: `check` proved the bytes lie within the segment.
        Ok(unsafe { T::read_from(p) })
    }

    /// Writes a `T` at `offset`; the address must be aligned to `T`'s natural alignment.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`], [`Error::MisalignedAccess`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(8, 8).unwrap();
    /// seg.set::<f32>(4, 1.5).unwrap();
    /// assert_eq!(seg.get::<f32>(4).unwrap(), 1.5);
    /// assert!(seg.set::<u64>(4, 1).is_err()); // 8 bytes at offset 4 do not fit
    /// ```
    #[inline]
    pub fn set<T: Scalar>(&self, offset: usize, value: T) -> Result<()> {
        let p = self.check(offset, T::KIND.byte_size())?;
        check_aligned(p, T::KIND.natural_alignment())?;
        // SAFETY: `check` proved the bytes lie within the segment.
        unsafe { value.write_to(p) };
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
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from_bytes(&[0, 1, 0, 0, 0]).unwrap();
    /// assert_eq!(seg.get_unaligned::<u32>(1).unwrap(), u32::from_ne_bytes([1, 0, 0, 0]));
    /// assert!(seg.get_unaligned::<u32>(2).is_err()); // past the end
    /// ```
    #[inline]
    pub fn get_unaligned<T: Scalar>(&self, offset: usize) -> Result<T> {
        let p = self.check(offset, T::KIND.byte_size())?;
        // SAFETY: `check` proved the bytes lie within the segment.
        Ok(unsafe { T::read_from(p) })
    }

    /// Writes a `T` at `offset` with no alignment requirement.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(9, 8).unwrap();
    /// seg.set_unaligned::<u64>(1, u64::MAX).unwrap();
    /// assert_eq!(seg.get::<u8>(0).unwrap(), 0);
    /// assert_eq!(seg.get::<u8>(8).unwrap(), 0xff);
    /// ```
    #[inline]
    pub fn set_unaligned<T: Scalar>(&self, offset: usize, value: T) -> Result<()> {
        let p = self.check(offset, T::KIND.byte_size())?;
        // SAFETY: `check` proved the bytes lie within the segment.
        unsafe { value.write_to(p) };
        Ok(())
    }

    /// Reads the value described by `layout` at `offset`, checking the layout's alignment
    /// (Java's `get(ValueLayout, long)`). A pointer comes back as a [`Value::Address`], or,
    /// when `layout` carries a target ([`ValueLayout::with_target`]), as a [`Value::Segment`]
    /// over what it points to — the target layout's size, a C string with its NUL — that lives
    /// as long as `self`; a null pointer with a target is [`MemorySegment::NULL`], which reads
    /// nothing ([`MemorySegment::get_target`] gives `None` instead).
    ///
    /// # Errors
    /// [`Error::OutOfBounds`], [`Error::MisalignedAccess`]; [`Error::MisalignedAccess`] also for
    /// a pointer that is not a multiple of its target layout's alignment.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{Value, ValueLayout};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from(-5_i16).unwrap();
    /// assert_eq!(seg.get_value(&ValueLayout::I16, 0).unwrap(), Value::I16(-5));
    /// let slot = arena.allocate_from(seg.as_address()).unwrap(); // a `short *`
    /// assert_eq!(slot.get_value(&ValueLayout::ADDRESS, 0).unwrap(), Value::Address(seg.as_address()));
    /// // SAFETY: the pointers read through `to_short` are null or point to a short of `arena`.
    /// let to_short = unsafe { ValueLayout::pointer_to(ValueLayout::I16.into()) }.unwrap();
    /// assert_eq!(slot.get_value(&to_short, 0).unwrap(), Value::Segment(seg));
    /// ```
    pub fn get_value(&self, layout: &ValueLayout, offset: usize) -> Result<Value<'a>> {
        let p = self.check(offset, layout.byte_size())?;
        check_aligned(p, layout.byte_alignment())?;
        // SAFETY: `check` proved the bytes lie within the segment.
        let value = unsafe { read_kind(layout.kind(), p) };
        match (value, layout.pointer_target()) {
            (Value::Address(a), Some(target)) => {
                super::target::pointee_or_null(a, target).map(Value::Segment)
            }
            (value, _) => Ok(value),
        }
    }

    /// Writes `value` as described by `layout` at `offset`, checking the layout's alignment.
    /// The value's kind must be the layout's kind exactly (no implicit conversion), except that
    /// a [`Value::Segment`] is written as its address for a pointer layout with a target (what
    /// [`MemorySegment::get_value`] reads through one).
    ///
    /// # Errors
    /// [`Error::ValueMismatch`], [`Error::OutOfBounds`], [`Error::MisalignedAccess`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{Error, Value, ValueLayout};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(8, 8).unwrap();
    /// seg.set_value(&ValueLayout::F64, 0, &Value::F64(0.25)).unwrap();
    /// assert_eq!(seg.get::<f64>(0).unwrap(), 0.25);
    /// let e = seg.set_value(&ValueLayout::F64, 0, &Value::I32(1)).unwrap_err();
    /// assert!(matches!(e, Error::ValueMismatch { .. }));
    /// ```
    pub fn set_value(&self, layout: &ValueLayout, offset: usize, value: &Value<'_>) -> Result<()> {
        if let (Value::Segment(s), Some(_)) = (value, layout.pointer_target()) {
            return self.set_value(layout, offset, &Value::Address(s.as_address()));
        }
        if value.scalar_kind() != Some(layout.kind()) {
            return Err(Error::ValueMismatch {
                position: format!("offset {offset}"),
                expected: layout.kind().to_string(),
                found: value.kind_name().into(),
            });
        }
        let p = self.check(offset, layout.byte_size())?;
        check_aligned(p, layout.byte_alignment())?;
        // SAFETY: `check` proved the bytes lie within the segment; the kind matches.
        unsafe { write_value(value, p) };
        Ok(())
    }

    /// Copies all of `src` into `self` starting at offset 0 (overlap allowed, like `memmove`;
    /// Java's `copyFrom`).
    ///
    /// # Errors
    /// [`Error::OutOfBounds`] if `src` is larger than `self`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let src = arena.allocate_from_bytes(b"abc").unwrap();
    /// let dst = arena.allocate(4, 1).unwrap();
    /// dst.copy_from(&src).unwrap();
    /// assert_eq!(dst.to_vec(), b"abc\0");
    /// assert!(src.copy_from(&dst).is_err()); // 4 bytes do not fit in 3
    /// ```
    pub fn copy_from(&self, src: &MemorySegment<'_>) -> Result<()> {
        let p = self.check(0, src.len)?;
        // SAFETY: both ranges are valid for src.len bytes; `copy` allows overlap.
        unsafe { std::ptr::copy(src.ptr.as_ptr(), p, src.len) };
        Ok(())
    }

    /// Copies `bytes` into `self` at `offset`.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(4, 1).unwrap();
    /// seg.copy_from_slice(1, &[7, 8]).unwrap();
    /// assert_eq!(seg.to_vec(), [0, 7, 8, 0]);
    /// assert!(seg.copy_from_slice(3, &[1, 2]).is_err());
    /// ```
    pub fn copy_from_slice(&self, offset: usize, bytes: &[u8]) -> Result<()> {
        let p = self.check(offset, bytes.len())?;
        // SAFETY: destination checked; a Rust slice cannot overlap segment memory that is only
        // accessed through raw pointers, but `copy` is used to be safe either way.
        unsafe { std::ptr::copy(bytes.as_ptr(), p, bytes.len()) };
        Ok(())
    }

    /// Copies `out.len()` bytes from `self` at `offset` into `out`.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from_bytes(&[1, 2, 3, 4]).unwrap();
    /// let mut out = [0u8; 2];
    /// seg.copy_to_slice(2, &mut out).unwrap();
    /// assert_eq!(out, [3, 4]);
    /// assert!(seg.copy_to_slice(3, &mut out).is_err());
    /// ```
    pub fn copy_to_slice(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        let p = self.check(offset, out.len())?;
        // SAFETY: source checked; `out` is a distinct exclusive borrow.
        unsafe { std::ptr::copy(p, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// A copy of the segment's bytes.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_c_string("hi").unwrap();
    /// assert_eq!(seg.to_vec(), b"hi\0");
    /// ```
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.len];
        self.copy_to_slice(0, &mut v).expect("same length");
        v
    }

    /// Sets every byte to `byte` (Java's `fill`).
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(4, 4).unwrap();
    /// seg.fill(0xAB);
    /// assert_eq!(seg.get::<u32>(0).unwrap(), 0xABAB_ABAB);
    /// ```
    pub fn fill(&self, byte: u8) {
        // SAFETY: the whole segment is writable by the invariant.
        unsafe { std::ptr::write_bytes(self.ptr.as_ptr(), byte, self.len) }
    }

    /// A view of the bytes as a slice.
    ///
    /// # Safety
    /// No write to these bytes (through any segment or C code) may happen while the returned
    /// slice is alive.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from_bytes(b"xyz").unwrap();
    /// // SAFETY: nothing writes to `seg` while `bytes` is alive.
    /// let bytes = unsafe { seg.as_slice() };
    /// assert_eq!(bytes, b"xyz");
    /// ```
    pub unsafe fn as_slice(&self) -> &'a [u8] {
        // SAFETY: valid for 'a by the invariant; no concurrent writes by the caller's promise.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// A mutable view of the bytes.
    ///
    /// # Safety
    /// No other access to these bytes (through any segment, slice or C code) may happen while
    /// the returned slice is alive.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(3, 1).unwrap();
    /// // SAFETY: `seg` is accessed only through `bytes` while `bytes` is alive.
    /// let bytes = unsafe { seg.as_mut_slice() };
    /// bytes.copy_from_slice(b"abc");
    /// assert_eq!(seg.to_vec(), b"abc");
    /// ```
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn as_mut_slice(&self) -> &'a mut [u8] {
        // SAFETY: valid for 'a by the invariant; exclusivity by the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The NUL-terminated byte string starting at `offset`, without the NUL. The search never
    /// reads past the segment's end.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`] if `offset > byte_size()`; [`Error::UnterminatedString`] if no NUL
    /// byte follows within the segment.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Error;
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from_bytes(b"ab\0cd").unwrap();
    /// assert_eq!(seg.get_c_string(0).unwrap().as_bytes(), b"ab");
    /// assert_eq!(
    ///     seg.get_c_string(3).unwrap_err(),
    ///     Error::UnterminatedString { offset: 3, segment_size: 5 }
    /// );
    /// ```
    pub fn get_c_string(&self, offset: usize) -> Result<CString> {
        let rest = self.slice_from(offset)?;
        let mut bytes = Vec::new();
        for i in 0..rest.len {
            // SAFETY: i < rest.len.
            let b = unsafe { rest.ptr.as_ptr().add(i).read() };
            if b == 0 {
                return Ok(CString::new(bytes).expect("no interior NUL: stopped at the first"));
            }
            bytes.push(b);
        }
        Err(Error::UnterminatedString {
            offset,
            segment_size: self.len,
        })
    }

    /// The NUL-terminated UTF-8 string at `offset` (Java's `getString`).
    ///
    /// # Errors
    /// As [`MemorySegment::get_c_string`], plus [`Error::InvalidUtf8`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Error;
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from_bytes(b"ok\0\xff\0").unwrap();
    /// assert_eq!(seg.get_string(0).unwrap(), "ok");
    /// assert_eq!(seg.get_string(3).unwrap_err(), Error::InvalidUtf8 { offset: 3, valid_up_to: 0 });
    /// ```
    pub fn get_string(&self, offset: usize) -> Result<String> {
        let c = self.get_c_string(offset)?;
        c.into_string().map_err(|e| Error::InvalidUtf8 {
            offset,
            valid_up_to: e.utf8_error().valid_up_to(),
        })
    }

    /// Writes `s` followed by a NUL at `offset` (Java's `setString`).
    ///
    /// # Errors
    /// [`Error::InteriorNul`] if `s` contains a NUL; [`Error::OutOfBounds`] if `s.len() + 1`
    /// bytes do not fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Error;
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(4, 1).unwrap();
    /// seg.set_string(0, "abc").unwrap();
    /// assert_eq!(seg.get_string(0).unwrap(), "abc");
    /// assert_eq!(seg.set_string(0, "a\0b").unwrap_err(), Error::InteriorNul { index: 1 });
    /// assert!(seg.set_string(0, "abcd").is_err()); // 5 bytes with the NUL
    /// ```
    pub fn set_string(&self, offset: usize, s: &str) -> Result<()> {
        if let Some(index) = s.bytes().position(|b| b == 0) {
            return Err(Error::InteriorNul { index });
        }
        let p = self.check(offset, s.len() + 1)?;
        // SAFETY: s.len() + 1 bytes checked.
        unsafe {
            std::ptr::copy(s.as_ptr(), p, s.len());
            p.add(s.len()).write(0);
        }
        Ok(())
    }

    /// Reads the pointer stored at `offset` (aligned): the value of a `T *` member or of a
    /// `T **` out-parameter after the call.
    ///
    /// ```
    /// use std::ffi::c_void;
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let out = arena.allocate_from(std::ptr::null_mut::<c_void>()).unwrap(); // a `void **`
    /// let target = arena.allocate(4, 4).unwrap();
    /// out.set_address(0, target.as_address()).unwrap(); // what C would do
    /// assert_eq!(out.get_address(0).unwrap(), target.as_address());
    /// ```
    ///
    /// # Errors
    /// [`Error::OutOfBounds`], [`Error::MisalignedAccess`].
    #[inline]
    pub fn get_address(&self, offset: usize) -> Result<*mut c_void> {
        self.get(offset)
    }

    /// Writes a pointer at `offset` (aligned).
    ///
    /// # Errors
    /// [`Error::OutOfBounds`], [`Error::MisalignedAccess`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::ffi::c_void;
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let slot = arena.allocate(16, 8).unwrap();
    /// let target = arena.allocate(1, 1).unwrap();
    /// slot.set_address(8, target.as_address()).unwrap();
    /// assert_eq!(slot.get::<usize>(8).unwrap(), target.address());
    /// assert!(slot.set_address(4, std::ptr::null_mut::<c_void>()).is_err()); // misaligned
    /// ```
    #[inline]
    pub fn set_address(&self, offset: usize, address: *mut c_void) -> Result<()> {
        self.set(offset, address)
    }

    /// The `byte_size` bytes that the pointer stored at `offset` points to, as a segment
    /// (Java's `get(ADDRESS.withTargetLayout(layout), offset)`): how a `T **` out-parameter is
    /// read, with no raw pointer arithmetic. A null pointer gives [`MemorySegment::NULL`] when
    /// `byte_size` is 0 and an error otherwise.
    ///
    /// ```
    /// use std::ffi::c_void;
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let value = arena.allocate_from(42_i32).unwrap();
    /// let out = arena.allocate_from(value.as_ptr().cast::<c_void>()).unwrap(); // an `int **`
    /// // SAFETY: the pointer at `out` points to 4 bytes owned by `arena`, which outlives `int`.
    /// let int = unsafe { out.get_pointee(0, 4) }.unwrap();
    /// assert_eq!(int.get::<i32>(0).unwrap(), 42);
    /// ```
    ///
    /// # Errors
    /// [`Error::OutOfBounds`], [`Error::MisalignedAccess`] for the pointer's own slot;
    /// [`Error::NullPointer`] for a null pointer with `byte_size > 0`.
    ///
    /// # Safety
    /// As [`MemorySegment::from_raw_parts`] for the pointer read and `byte_size`, for all of `'b`.
    pub unsafe fn get_pointee<'b>(
        &self,
        offset: usize,
        byte_size: usize,
    ) -> Result<MemorySegment<'b>> {
        let p = self.get_address(offset)?;
        if p.is_null() && byte_size > 0 {
            return Err(Error::NullPointer {
                what: format!(
                    "the pointer at offset {offset} is null; {byte_size} bytes were to be read"
                ),
            });
        }
        // SAFETY: forwarded to the caller.
        Ok(unsafe { MemorySegment::from_raw_parts(p.cast(), byte_size) })
    }

    /// This segment as a C pointer value (null for [`MemorySegment::NULL`]).
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::MemorySegment;
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(8, 8).unwrap();
    /// assert_eq!(seg.as_address() as usize, seg.address());
    /// assert!(MemorySegment::NULL.as_address().is_null());
    /// ```
    pub fn as_address(&self) -> *mut c_void {
        self.as_ptr().cast()
    }
}

#[inline(always)]
fn check_aligned(p: *mut u8, alignment: usize) -> Result<()> {
    if (p as usize) & (alignment - 1) != 0 {
        return Err(Error::MisalignedAccess {
            address: p as usize,
            alignment,
        });
    }
    Ok(())
}

/// Reads a scalar of `kind` at `p` (unaligned).
///
/// # Safety
/// `p` must be readable for `kind.byte_size()` bytes.
pub(crate) unsafe fn read_kind(kind: ScalarKind, p: *const u8) -> Value<'static> {
    // SAFETY: forwarded from the caller for every arm.
    unsafe {
        match kind {
            ScalarKind::Bool => Value::Bool(bool::read_from(p)),
            ScalarKind::I8 => Value::I8(i8::read_from(p)),
            ScalarKind::U8 => Value::U8(u8::read_from(p)),
            ScalarKind::I16 => Value::I16(i16::read_from(p)),
            ScalarKind::U16 => Value::U16(u16::read_from(p)),
            ScalarKind::I32 => Value::I32(i32::read_from(p)),
            ScalarKind::U32 => Value::U32(u32::read_from(p)),
            ScalarKind::I64 => Value::I64(i64::read_from(p)),
            ScalarKind::U64 => Value::U64(u64::read_from(p)),
            ScalarKind::F32 => Value::F32(f32::read_from(p)),
            ScalarKind::F64 => Value::F64(f64::read_from(p)),
            ScalarKind::Pointer => Value::Address(<*mut c_void>::read_from(p)),
        }
    }
}

/// Writes a scalar value at `p` (unaligned). `Void` and `Segment` write nothing.
///
/// # Safety
/// `p` must be writable for the value's size.
pub(crate) unsafe fn write_value(value: &Value<'_>, p: *mut u8) {
    // SAFETY: forwarded from the caller for every arm.
    unsafe {
        match *value {
            Value::Bool(v) => v.write_to(p),
            Value::I8(v) => v.write_to(p),
            Value::U8(v) => v.write_to(p),
            Value::I16(v) => v.write_to(p),
            Value::U16(v) => v.write_to(p),
            Value::I32(v) => v.write_to(p),
            Value::U32(v) => v.write_to(p),
            Value::I64(v) => v.write_to(p),
            Value::U64(v) => v.write_to(p),
            Value::F32(v) => v.write_to(p),
            Value::F64(v) => v.write_to(p),
            Value::Address(v) => v.write_to(p),
            Value::Void | Value::Segment(_) => {}
        }
    }
}
