//! [`SegmentAllocator`] (Java's `SegmentAllocator`) and the allocators over an existing segment:
//! [`SlicingAllocator`] and [`PrefixAllocator`].

use std::cell::Cell;

use crate::error::{check_size_align, Error, Result};
use crate::layout::MemoryLayout;
use crate::memory::MemorySegment;
use crate::value::Scalar;

/// Something that hands out memory segments: arenas, BufferStack frames, pooled arenas,
/// slicing and prefix allocators.
///
/// Segments borrow the allocator (`&self`), so none can outlive it. Whether
/// [`SegmentAllocator::allocate`] zeroes is the implementation's documented choice (arenas zero;
/// BufferStack frames do not, like the JDK's); [`SegmentAllocator::allocate_uninit`] never
/// promises zeroes and may be faster.
///
/// Every method validates first: an alignment that is not a power of two gives
/// [`Error::InvalidAlignment`], a size that overflows gives [`Error::SizeOverflow`]; neither
/// ever panics nor changes the allocator's state.
///
/// ```
/// use gatun::memory::{Arena, SegmentAllocator};
/// use gatun::ValueLayout;
/// fn fill_ints<'a, A: SegmentAllocator>(a: &'a A, xs: &[i32]) -> gatun::Result<gatun::MemorySegment<'a>> {
///     a.allocate_from_slice(xs)
/// }
/// let arena = Arena::confined();
/// let ints = fill_ints(&arena, &[1, 2, 3]).unwrap();
/// assert_eq!(ints.get::<i32>(8).unwrap(), 3);
/// let array = arena.allocate_array(&ValueLayout::F64.into(), 4).unwrap();
/// assert_eq!(array.byte_size(), 32);
/// ```
pub trait SegmentAllocator {
    /// A segment of `byte_size` bytes whose address is a multiple of `byte_alignment`.
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`], [`Error::SizeOverflow`], and the implementation's own
    /// (e.g. [`Error::AllocatorExhausted`] for a bounded allocator, [`Error::OutOfMemory`]).
    /// On Windows every allocator also refuses an alignment above 2^30 bytes (1 GiB) with
    /// [`Error::OutOfMemory`]: the system allocator would commit `size + alignment` bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Error;
    /// let arena = Arena::confined();
    /// let seg = arena.allocate(12, 16).unwrap();
    /// assert_eq!((seg.byte_size(), seg.address() % 16), (12, 0));
    /// assert_eq!(arena.allocate(8, 3).unwrap_err(), Error::InvalidAlignment { alignment: 3 });
    /// ```
    fn allocate(&self, byte_size: usize, byte_alignment: usize) -> Result<MemorySegment<'_>>;

    /// As [`SegmentAllocator::allocate`], but the contents are unspecified (not zeroed).
    /// Use only when every byte will be written before it is read.
    ///
    /// # Errors
    /// As [`SegmentAllocator::allocate`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_uninit(8, 8).unwrap(); // contents unspecified: write before reading
    /// seg.set::<u64>(0, 1).unwrap();
    /// assert_eq!(seg.get::<u64>(0).unwrap(), 1);
    /// ```
    fn allocate_uninit(
        &self,
        byte_size: usize,
        byte_alignment: usize,
    ) -> Result<MemorySegment<'_>> {
        self.allocate(byte_size, byte_alignment)
    }

    /// A segment with `layout`'s size and alignment.
    ///
    /// # Errors
    /// As [`SegmentAllocator::allocate`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{MemoryLayout, ValueLayout};
    /// let arena = Arena::confined();
    /// let pair = MemoryLayout::c_struct([ValueLayout::I32, ValueLayout::F64]).unwrap();
    /// let seg = arena.allocate_layout(&pair).unwrap();
    /// assert_eq!((seg.byte_size(), seg.address() % 8), (16, 0));
    /// ```
    fn allocate_layout(&self, layout: &MemoryLayout) -> Result<MemorySegment<'_>> {
        self.allocate(layout.byte_size(), layout.byte_alignment())
    }

    /// A segment for `count` elements of `element` (Java's `allocate(layout, count)`).
    ///
    /// # Errors
    /// [`Error::SizeOverflow`] if `count * size` overflows; as [`SegmentAllocator::allocate`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::ValueLayout;
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_array(&ValueLayout::I16.into(), 5).unwrap();
    /// assert_eq!(seg.byte_size(), 10);
    /// assert!(arena.allocate_array(&ValueLayout::I64.into(), usize::MAX).is_err()); // overflow
    /// ```
    fn allocate_array(&self, element: &MemoryLayout, count: usize) -> Result<MemorySegment<'_>> {
        let size = element
            .byte_size()
            .checked_mul(count)
            .ok_or_else(|| Error::SizeOverflow {
                what: format!("array of {count} x {} bytes", element.byte_size()),
            })?;
        self.allocate(size, element.byte_alignment())
    }

    /// A segment holding `value`, naturally aligned (Java's `allocateFrom(layout, value)`).
    ///
    /// # Errors
    /// As [`SegmentAllocator::allocate`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from(3.5_f64).unwrap();
    /// assert_eq!((seg.byte_size(), seg.address() % 8), (8, 0));
    /// assert_eq!(seg.get::<f64>(0).unwrap(), 3.5);
    /// ```
    #[inline]
    fn allocate_from<T: Scalar>(&self, value: T) -> Result<MemorySegment<'_>>
    where
        Self: Sized,
    {
        let seg = self.allocate_uninit(T::KIND.byte_size(), T::KIND.natural_alignment())?;
        seg.set(0, value)?;
        Ok(seg)
    }

    /// A segment holding a copy of `values`, naturally aligned.
    ///
    /// # Errors
    /// As [`SegmentAllocator::allocate`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from_slice(&[1_u16, 2, 3]).unwrap();
    /// assert_eq!(seg.byte_size(), 6);
    /// assert_eq!(seg.get::<u16>(4).unwrap(), 3);
    /// ```
    fn allocate_from_slice<T: Scalar>(&self, values: &[T]) -> Result<MemorySegment<'_>>
    where
        Self: Sized,
    {
        let size = std::mem::size_of_val(values);
        let seg = self.allocate_uninit(size, T::KIND.natural_alignment())?;
        for (i, v) in values.iter().enumerate() {
            seg.set(i * T::KIND.byte_size(), *v)?;
        }
        Ok(seg)
    }

    /// A segment holding a copy of `bytes` (alignment 1).
    ///
    /// # Errors
    /// As [`SegmentAllocator::allocate`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_from_bytes(&[9, 8, 7]).unwrap();
    /// assert_eq!(seg.to_vec(), [9, 8, 7]);
    /// ```
    fn allocate_from_bytes(&self, bytes: &[u8]) -> Result<MemorySegment<'_>> {
        let seg = self.allocate_uninit(bytes.len(), 1)?;
        seg.copy_from_slice(0, bytes)?;
        Ok(seg)
    }

    /// A NUL-terminated copy of `s` (UTF-8 bytes + one NUL), alignment 1
    /// (Java's `allocateFrom(String)`).
    ///
    /// # Errors
    /// [`Error::InteriorNul`] if `s` contains a NUL (C would see a shorter string); as
    /// [`SegmentAllocator::allocate`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Error;
    /// let arena = Arena::confined();
    /// let s = arena.allocate_c_string("héllo").unwrap();
    /// assert_eq!(s.byte_size(), 7); // 6 UTF-8 bytes and the NUL
    /// assert_eq!(s.get_string(0).unwrap(), "héllo");
    /// assert_eq!(arena.allocate_c_string("a\0").unwrap_err(), Error::InteriorNul { index: 1 });
    /// ```
    #[inline]
    fn allocate_c_string(&self, s: &str) -> Result<MemorySegment<'_>> {
        // Word at a time, inline; find the index only on error.
        if contains_nul(s.as_bytes()) {
            let index = s.bytes().position(|b| b == 0).unwrap_or_default();
            return Err(Error::InteriorNul { index });
        }
        let seg = self.allocate_uninit(s.len() + 1, 1)?;
        // Checked above: no second NUL scan (as `set_string` would do).
        seg.copy_from_slice(0, s.as_bytes())?;
        seg.set(s.len(), 0u8)?;
        Ok(seg)
    }
}

impl<A: SegmentAllocator + ?Sized> SegmentAllocator for &A {
    #[inline]
    fn allocate(&self, byte_size: usize, byte_alignment: usize) -> Result<MemorySegment<'_>> {
        (**self).allocate(byte_size, byte_alignment)
    }
    #[inline]
    fn allocate_uninit(
        &self,
        byte_size: usize,
        byte_alignment: usize,
    ) -> Result<MemorySegment<'_>> {
        (**self).allocate_uninit(byte_size, byte_alignment)
    }
}

/// Bump allocation over one segment (Java's `SegmentAllocator.slicingAllocator`, and the JDK's
/// internal `SlicingAllocator` that BufferStack frames use).
///
/// Each allocation starts at the next address (absolute, not offset) that is a multiple of the
/// requested alignment; padding is consumed. Memory is handed out as it is — **not zeroed** —
/// since the segment already exists. `!Send`/`!Sync` like its segment.
///
/// ```
/// use gatun::memory::{Arena, SegmentAllocator, SlicingAllocator};
/// let arena = Arena::confined();
/// let block = arena.allocate(64, 8).unwrap();
/// let slicer = SlicingAllocator::new(block);
/// let a = slicer.allocate(3, 1).unwrap();
/// let b = slicer.allocate(8, 8).unwrap(); // aligned up: bytes 3..8 are skipped
/// assert_eq!(b.address() - a.address(), 8);
/// assert!(slicer.allocate(64, 1).is_err()); // exhausted: an error, not an overrun
/// ```
pub struct SlicingAllocator<'a> {
    segment: MemorySegment<'a>,
    offset: Cell<usize>,
}

impl<'a> SlicingAllocator<'a> {
    /// An allocator that slices `segment` from its start.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator, SlicingAllocator};
    /// let arena = Arena::confined();
    /// let slicer = SlicingAllocator::new(arena.allocate(32, 8).unwrap());
    /// assert_eq!(slicer.allocate(8, 8).unwrap().address(), slicer.segment().address());
    /// ```
    pub fn new(segment: MemorySegment<'a>) -> SlicingAllocator<'a> {
        SlicingAllocator {
            segment,
            offset: Cell::new(0),
        }
    }

    /// Bytes handed out so far, alignment padding included.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator, SlicingAllocator};
    /// let arena = Arena::confined();
    /// let slicer = SlicingAllocator::new(arena.allocate(32, 8).unwrap());
    /// slicer.allocate(1, 1).unwrap();
    /// slicer.allocate(4, 4).unwrap(); // 3 bytes of padding first
    /// assert_eq!(slicer.current_offset(), 8);
    /// ```
    #[inline]
    pub fn current_offset(&self) -> usize {
        self.offset.get()
    }

    /// The underlying segment.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator, SlicingAllocator};
    /// let arena = Arena::confined();
    /// let block = arena.allocate(32, 8).unwrap();
    /// let slicer = SlicingAllocator::new(block);
    /// assert_eq!(slicer.segment(), block);
    /// ```
    pub fn segment(&self) -> MemorySegment<'a> {
        self.segment
    }

    /// `true` if `allocate(byte_size, byte_alignment)` would succeed (arguments are assumed
    /// valid: a non-power-of-two alignment gives `false`).
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator, SlicingAllocator};
    /// let arena = Arena::confined();
    /// let slicer = SlicingAllocator::new(arena.allocate(16, 8).unwrap());
    /// slicer.allocate(9, 1).unwrap();
    /// assert!(slicer.can_allocate(7, 1));
    /// assert!(!slicer.can_allocate(7, 8)); // aligned up to 16: nothing left
    /// assert!(!slicer.can_allocate(1, 3));
    /// ```
    #[inline]
    pub fn can_allocate(&self, byte_size: usize, byte_alignment: usize) -> bool {
        byte_alignment.is_power_of_two() && self.start_for(byte_size, byte_alignment).is_some()
    }

    #[inline(always)]
    fn start_for(&self, byte_size: usize, byte_alignment: usize) -> Option<usize> {
        let base = self.segment.address();
        let mask = byte_alignment.wrapping_sub(1);
        let cur = base.checked_add(self.offset.get())?;
        let aligned = cur.checked_add(mask)? & !mask;
        let start = aligned - base;
        let end = start.checked_add(byte_size)?;
        (end <= self.segment.byte_size()).then_some(start)
    }

    /// Resets to the empty state; `&mut self` proves no segment from it is still alive.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator, SlicingAllocator};
    /// let arena = Arena::confined();
    /// let mut slicer = SlicingAllocator::new(arena.allocate(16, 8).unwrap());
    /// slicer.allocate(16, 1).unwrap();
    /// assert!(!slicer.can_allocate(1, 1));
    /// slicer.reset();
    /// assert_eq!(slicer.current_offset(), 0);
    /// assert!(slicer.can_allocate(16, 1));
    /// ```
    pub fn reset(&mut self) {
        self.offset.set(0);
    }
}

impl SegmentAllocator for SlicingAllocator<'_> {
    /// Bumps within the segment; not zeroed (see the type's docs).
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`] or [`Error::SizeOverflow`] for a bad request;
    /// [`Error::AllocatorExhausted`] when the request does not fit in what is left.
    #[inline]
    fn allocate(&self, byte_size: usize, byte_alignment: usize) -> Result<MemorySegment<'_>> {
        check_size_align(byte_size, byte_alignment)?;
        match self.start_for(byte_size, byte_alignment) {
            Some(start) => {
                let segment = self.segment.slice(start, byte_size)?;
                self.offset.set(start + byte_size);
                Ok(segment)
            }
            None => Err(Error::AllocatorExhausted {
                requested: byte_size,
                alignment: byte_alignment,
                available: self.segment.byte_size() - self.offset.get(),
                capacity: self.segment.byte_size(),
            }),
        }
    }
}

/// Always hands out the same prefix of one segment (Java's `SegmentAllocator.prefixAllocator`):
/// each allocation overwrites the previous one. Useful for a reusable scratch buffer.
/// Not zeroed. `!Send`/`!Sync` like its segment.
///
/// ```
/// use gatun::memory::{Arena, PrefixAllocator, SegmentAllocator};
/// let arena = Arena::confined();
/// let scratch = PrefixAllocator::new(arena.allocate(16, 8).unwrap());
/// let first = scratch.allocate(8, 8).unwrap();
/// let second = scratch.allocate(4, 4).unwrap(); // the same bytes again
/// assert_eq!(first.address(), second.address());
/// assert!(scratch.allocate(17, 1).is_err());
/// ```
pub struct PrefixAllocator<'a> {
    segment: MemorySegment<'a>,
}

impl<'a> PrefixAllocator<'a> {
    /// An allocator that returns prefixes of `segment`.
    ///
    /// ```
    /// use gatun::memory::{Arena, PrefixAllocator, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let block = arena.allocate(8, 8).unwrap();
    /// let prefix = PrefixAllocator::new(block);
    /// assert_eq!(prefix.allocate(4, 4).unwrap(), block.slice(0, 4).unwrap());
    /// ```
    pub fn new(segment: MemorySegment<'a>) -> PrefixAllocator<'a> {
        PrefixAllocator { segment }
    }
}

impl SegmentAllocator for PrefixAllocator<'_> {
    /// The first `byte_size` bytes of the segment.
    ///
    /// # Errors
    /// [`Error::AllocatorExhausted`] if the segment is smaller than `byte_size`;
    /// [`Error::MisalignedAccess`] if the segment's address is not a multiple of
    /// `byte_alignment`.
    fn allocate(&self, byte_size: usize, byte_alignment: usize) -> Result<MemorySegment<'_>> {
        check_size_align(byte_size, byte_alignment)?;
        if self.segment.address() & (byte_alignment - 1) != 0 {
            return Err(Error::MisalignedAccess {
                address: self.segment.address(),
                alignment: byte_alignment,
            });
        }
        if byte_size > self.segment.byte_size() {
            return Err(Error::AllocatorExhausted {
                requested: byte_size,
                alignment: byte_alignment,
                available: self.segment.byte_size(),
                capacity: self.segment.byte_size(),
            });
        }
        self.segment.slice(0, byte_size)
    }
}

/// Whether `bytes` contains a 0 byte: eight bytes at a time with the "has a zero byte" bit
/// trick (`(w - 0x01..01) & !w & 0x80..80` is non-zero exactly when a byte of `w` is 0), then
/// the last 0..7 bytes one by one. Inline and branch-light for the short strings C APIs take
/// (`core`'s `memchr` is an out-of-line call that costs more than the copy for them).
#[inline]
// `iter().any` on purpose: `contains` on bytes is the out-of-line `memchr` this avoids.
#[allow(clippy::manual_contains)]
fn contains_nul(bytes: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    let mut found = 0u64;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let w = u64::from_ne_bytes(w);
        found |= w.wrapping_sub(LO) & !w & HI;
    }
    found != 0 || chunks.remainder().iter().any(|&b| b == 0)
}

#[cfg(test)]
mod nul_tests {
    #[test]
    fn contains_nul_agrees_with_a_byte_scan() {
        let mut buf = [0x41u8; 40];
        for len in 0..40 {
            assert!(!super::contains_nul(&buf[..len]), "{len}");
            for at in 0..len {
                for v in [0u8, 1, 0x80, 0xFF] {
                    buf[at] = v;
                    let want = buf[..len].contains(&0);
                    assert_eq!(super::contains_nul(&buf[..len]), want, "{len} {at} {v}");
                    buf[at] = 0x41;
                }
            }
        }
        assert!(!super::contains_nul("\u{100}\u{7f}é€".as_bytes()));
        assert!(super::contains_nul(&[
            0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 1
        ]));
    }
}
