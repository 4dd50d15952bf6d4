//! Pointers read through layouts with targets ([`PointerTarget`]): the segments they designate,
//! [`MemorySegment::get_target`], [`ValueLayout::target_of`] and NULL-terminated pointer arrays
//! ([`NullTerminated`]).
//!
//! # Invariants (the unsafe story of this module)
//! Every segment made here is over memory that the trust step of the layout it was read
//! through promised ([`ValueLayout::with_target`]'s `# Safety`): for a non-null pointer `p`,
//! `target.byte_size()` bytes at `p` for a layout target, the bytes up to and including the
//! first NUL for a C-string target, and for a pointer read as a NULL-terminated array the
//! pointers up to and including the first null one. Nothing here reads past what that promise
//! covers: a C string is scanned byte by byte up to its NUL, an array element by element up to
//! its null element. A null pointer never becomes a segment that reads anything
//! ([`MemorySegment::NULL`], `None`, or an empty array). Nothing here allocates.

use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr};
use std::iter::FusedIterator;
use std::marker::PhantomData;

use super::MemorySegment;
use crate::error::{Error, Result};
use crate::layout::{MemoryLayout, PointerTarget, ScalarKind, ValueLayout};
use crate::value::Value;

/// The segment that the non-null pointer `p` designates through `target`.
///
/// # Errors
/// [`Error::MisalignedAccess`] if `p` is not a multiple of a layout target's alignment.
fn pointee<'b>(p: *mut c_void, target: &PointerTarget) -> Result<MemorySegment<'b>> {
    debug_assert!(!p.is_null());
    let len = match target {
        PointerTarget::Layout(l) => {
            let alignment = l.byte_alignment();
            if (p as usize) & (alignment - 1) != 0 {
                return Err(Error::MisalignedAccess {
                    address: p as usize,
                    alignment,
                });
            }
            l.byte_size()
        }
        // SAFETY: the trust step promised a NUL-terminated string at `p`, readable up to and
        // including its NUL; `CStr::from_ptr` reads exactly that far, and the borrow ends here.
        PointerTarget::CString => unsafe { CStr::from_ptr(p.cast::<c_char>()) }.count_bytes() + 1,
        // Unresolved: no size is known, so the segment reads nothing.
        PointerTarget::Enclosing(_) => 0,
    };
    // SAFETY: `len` bytes at `p` are what the trust step promised to be allocated and readable
    // (and writable where the program writes) for as long as the segment is used.
    Ok(unsafe { MemorySegment::from_raw_parts(p.cast(), len) })
}

/// The segment `p` designates through `target`, or [`MemorySegment::NULL`] for a null `p`.
///
/// # Errors
/// As [`pointee`].
pub(super) fn pointee_or_null<'b>(
    p: *mut c_void,
    target: &PointerTarget,
) -> Result<MemorySegment<'b>> {
    if p.is_null() {
        Ok(MemorySegment::NULL)
    } else {
        pointee(p, target)
    }
}

/// The error for a layout that has no target where one is needed.
fn no_target(layout: &ValueLayout, position: String, expected: &str) -> Error {
    Error::ValueMismatch {
        position,
        expected: expected.into(),
        found: layout.to_string(),
    }
}

/// The address a pointer value carries: an `Address`, or a `Segment`'s first byte.
fn address_of(value: &Value<'_>, position: &str) -> Result<*mut c_void> {
    match *value {
        Value::Address(p) => Ok(p),
        Value::Segment(s) => Ok(s.as_address()),
        _ => Err(Error::ValueMismatch {
            position: position.into(),
            expected: "a pointer (an address or a segment)".into(),
            found: value.kind_name().into(),
        }),
    }
}

impl<'a> MemorySegment<'a> {
    /// Reads the pointer at `offset` (aligned to `layout`'s alignment) through `layout`'s
    /// target (Java's `get(ADDRESS.withTargetLayout(T), offset)`): `None` for a null pointer,
    /// else the segment it designates, by the rules of [`ValueLayout::with_target`] — the
    /// target layout's size, or a C string with its NUL. The segment lives as long as `self`
    /// (the trust step promised the pointee lives as long as it is used). Allocates nothing.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let point = arena.allocate_from_slice(&[3_i32, 4]).unwrap();
    /// let slot = arena.allocate_from(point.as_address()).unwrap(); // a `struct point *`
    /// let layout = MemoryLayout::c_struct([ValueLayout::I32, ValueLayout::I32]).unwrap();
    /// // SAFETY: the pointers read through `to_point` are null or point to two ints of `arena`.
    /// let to_point = unsafe { ValueLayout::pointer_to(layout) }.unwrap();
    /// let p = slot.get_target(&to_point, 0).unwrap().unwrap();
    /// assert_eq!((p.byte_size(), p.get::<i32>(4).unwrap()), (8, 4));
    /// slot.set_address(0, std::ptr::null_mut()).unwrap();
    /// assert_eq!(slot.get_target(&to_point, 0).unwrap(), None);
    /// ```
    ///
    /// # Errors
    /// [`Error::ValueMismatch`] if `layout` is not a pointer with a target;
    /// [`Error::OutOfBounds`], [`Error::MisalignedAccess`] for the pointer's own slot;
    /// [`Error::MisalignedAccess`] for a pointer that is not a multiple of a layout target's
    /// alignment.
    pub fn get_target(
        &self,
        layout: &ValueLayout,
        offset: usize,
    ) -> Result<Option<MemorySegment<'a>>> {
        let Some(target) = layout.pointer_target() else {
            return Err(no_target(
                layout,
                format!("offset {offset}"),
                "a pointer layout with a target",
            ));
        };
        let bits = self.get_value(&layout.clone().without_target(), offset)?;
        let p = address_of(&bits, "the pointer read")?;
        if p.is_null() {
            Ok(None)
        } else {
            pointee(p, target).map(Some)
        }
    }
}

impl ValueLayout {
    /// The segment that `pointer` (a call's pointer result or an upcall's pointer argument,
    /// as a [`Value::Address`], or a [`Value::Segment`]'s address) designates through this
    /// layout's target: `None` for null, else as [`MemorySegment::get_target`]. The segment's
    /// lifetime `'b` is the caller's choice, within what the trust step promised. Allocates
    /// nothing.
    ///
    /// ```
    /// use gatun::layout::{PointerTarget, ValueLayout};
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Value;
    /// let arena = Arena::confined();
    /// let hello = arena.allocate_c_string("hello").unwrap();
    /// // SAFETY: the pointers given to `string` are null or point to C strings of `arena`.
    /// let string = unsafe { ValueLayout::ADDRESS.with_target(PointerTarget::CString) }.unwrap();
    /// let result = Value::Address(hello.as_address()); // what a `char *` function returns
    /// let s = string.target_of(&result).unwrap().unwrap();
    /// assert_eq!(s.get_string(0).unwrap(), "hello");
    /// assert_eq!(string.target_of(&Value::Address(std::ptr::null_mut())).unwrap(), None);
    /// ```
    ///
    /// # Errors
    /// [`Error::ValueMismatch`] if `self` has no target or `pointer` is not an address or a
    /// segment; [`Error::MisalignedAccess`] for a pointer that is not a multiple of a layout
    /// target's alignment.
    pub fn target_of<'b>(&self, pointer: &Value<'_>) -> Result<Option<MemorySegment<'b>>> {
        let Some(target) = self.pointer_target() else {
            return Err(no_target(
                self,
                "the layout of `target_of`".into(),
                "a pointer layout with a target",
            ));
        };
        let p = address_of(pointer, "the argument of `target_of`")?;
        if p.is_null() {
            Ok(None)
        } else {
            pointee(p, target).map(Some)
        }
    }

    /// The NULL-terminated array of pointers that `pointer` designates, for a layout whose
    /// target is itself a pointer layout (C's `const char **argv`, `T **list` ended by NULL):
    /// an iterator over the elements up to the first null one, each turned into a segment by
    /// the element layout's target (a C string for `char **`, an object for `T **`; an element
    /// layout without a target gives zero-length segments at each address). A null `pointer`
    /// is an empty array. `pointer` is an address or a segment ([`Value::Segment`] as
    /// [`MemorySegment::get_value`] reads a `T **` member). Allocates nothing.
    ///
    /// ```
    /// use std::ffi::c_void;
    /// use gatun::layout::{PointerTarget, ValueLayout};
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Value;
    /// let arena = Arena::confined();
    /// let (a, b) = (arena.allocate_c_string("a").unwrap(), arena.allocate_c_string("bc").unwrap());
    /// let array = arena
    ///     .allocate_from_slice(&[a.as_address(), b.as_address(), std::ptr::null_mut::<c_void>()])
    ///     .unwrap();
    /// // SAFETY: what is read through `argv` is null or a NULL-terminated array of C strings.
    /// let argv = unsafe {
    ///     let string = ValueLayout::ADDRESS.with_target(PointerTarget::CString).unwrap();
    ///     ValueLayout::pointer_to(string.into()).unwrap()
    /// };
    /// let strings: Vec<String> = argv
    ///     .null_terminated(&Value::Segment(array))
    ///     .unwrap()
    ///     .map(|s| s.and_then(|s| s.get_string(0)))
    ///     .collect::<Result<_, _>>()
    ///     .unwrap();
    /// assert_eq!(strings, ["a", "bc"]);
    /// ```
    ///
    /// # Errors
    /// [`Error::ValueMismatch`] if `self`'s target is not a pointer layout or `pointer` is not
    /// an address or a segment; [`Error::MisalignedAccess`] if the array is not aligned to its
    /// elements' alignment. Each element is an [`Error::MisalignedAccess`] if it is not a
    /// multiple of its layout target's alignment.
    pub fn null_terminated<'b>(&self, pointer: &Value<'_>) -> Result<NullTerminated<'b>> {
        let element = match self.pointer_target() {
            Some(PointerTarget::Layout(MemoryLayout::Value(e)))
                if e.kind() == ScalarKind::Pointer =>
            {
                e.clone()
            }
            _ => {
                return Err(no_target(
                    self,
                    "the layout of `null_terminated`".into(),
                    "a pointer whose target is a pointer layout (`T **`)",
                ))
            }
        };
        let p = address_of(pointer, "the argument of `null_terminated`")?;
        let alignment = element.byte_alignment();
        if (p as usize) & (alignment - 1) != 0 {
            return Err(Error::MisalignedAccess {
                address: p as usize,
                alignment,
            });
        }
        Ok(NullTerminated {
            next: p.cast::<*mut c_void>(),
            element,
            _owner: PhantomData,
        })
    }
}

/// The elements of a NULL-terminated array of pointers, as segments: made by
/// [`ValueLayout::null_terminated`] and [`crate::layout::Accessor::null_terminated`].
///
/// Each item is the segment one element designates through the element layout's target (for
/// a `char **` array, a C string with its NUL: read it with
/// [`MemorySegment::get_string`]`(0)`), or an [`Error::MisalignedAccess`] for an element that
/// is not a multiple of its layout target's alignment. Iteration stops at the first null
/// element and reads nothing after it. Allocates nothing; `!Send` and `!Sync`, like the
/// segments it gives.
///
/// ```
/// use std::ffi::c_void;
/// use gatun::layout::{PointerTarget, ValueLayout};
/// use gatun::memory::{Arena, SegmentAllocator};
/// use gatun::Value;
/// let arena = Arena::confined();
/// let x = arena.allocate_from(7_i64).unwrap();
/// let list = arena.allocate_from_slice(&[x.as_address(), std::ptr::null_mut::<c_void>()]).unwrap();
/// // SAFETY: what is read through `longs` is null or a NULL-terminated array of `long *`.
/// let longs = unsafe {
///     ValueLayout::pointer_to(ValueLayout::pointer_to(ValueLayout::I64.into()).unwrap().into())
/// }
/// .unwrap();
/// let mut items = longs.null_terminated(&Value::Segment(list)).unwrap();
/// assert_eq!(items.next().unwrap().unwrap().get::<i64>(0).unwrap(), 7);
/// assert!(items.next().is_none());
/// ```
#[derive(Debug)]
pub struct NullTerminated<'b> {
    /// The next element to read; null once the null element has been read (or for a null
    /// array).
    next: *mut *mut c_void,
    /// The elements' layout.
    element: ValueLayout,
    _owner: PhantomData<&'b Cell<u8>>,
}

impl<'b> Iterator for NullTerminated<'b> {
    type Item = Result<MemorySegment<'b>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next.is_null() {
            return None;
        }
        // SAFETY: the trust step promised the pointers from the array's start up to and
        // including its first null one are readable; `next` is at or before that one, since
        // iteration stops there.
        let p = unsafe { self.next.read_unaligned() };
        if p.is_null() {
            self.next = std::ptr::null_mut();
            return None;
        }
        // SAFETY: `p` is not the null element, so the array goes on past it (within the
        // promised array, and so within one allocation).
        self.next = unsafe { self.next.add(1) };
        Some(match self.element.pointer_target() {
            Some(target) => pointee(p, target),
            // SAFETY: a zero-length segment reads and writes nothing.
            None => Ok(unsafe { MemorySegment::from_raw_parts(p.cast(), 0) }),
        })
    }
}

impl FusedIterator for NullTerminated<'_> {}
