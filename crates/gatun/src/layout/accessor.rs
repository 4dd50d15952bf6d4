//! [`Accessor`]: a scalar member of a layout selected by path once (`"tv_sec"`,
//! `"a.b[2].c"`), then read and written on any segment of that layout — Java's
//! `MemoryLayout.varHandle(PathElement...)`.
//!
//! The path is resolved (names looked up, indices range-checked) when the accessor is built;
//! an access only checks the segment's bounds and the member's alignment, as every segment
//! access does. [`TypedAccessor`] also fixes the Rust type once, so its accesses do no kind
//! check at all.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use super::target::{has_enclosing, records_along, resolve_enclosing};
use super::{parse_path, MemoryLayout, PathElement, ScalarKind, ValueLayout};
use crate::error::{Error, Result};
use crate::memory::{MemorySegment, NullTerminated};
use crate::value::{Scalar, Value};

/// A scalar member of a layout, resolved from a path: its byte offset from the layout's start
/// and its [`ValueLayout`] (kind and alignment). Cheap to clone, `Send + Sync`.
///
/// ```
/// use gatun::memory::{Arena, SegmentAllocator};
/// use gatun::{MemoryLayout, ValueLayout, Value};
/// let timeval = MemoryLayout::c_struct([
///     ValueLayout::I64.with_name("tv_sec"),
///     ValueLayout::I64.with_name("tv_usec"),
/// ])
/// .unwrap();
/// let tv_usec = timeval.accessor("tv_usec").unwrap();
/// assert_eq!(tv_usec.offset(), 8);
///
/// let arena = Arena::confined();
/// let tv = arena.allocate_layout(&timeval).unwrap();
/// tv_usec.set(&tv, 250_000).unwrap(); // an i32 literal, converted (range-checked) to i64
/// assert_eq!(tv_usec.get(&tv).unwrap(), Value::I64(250_000));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Accessor {
    path: Arc<str>,
    offset: usize,
    layout: ValueLayout,
}

impl fmt::Debug for Accessor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Accessor({} at byte {}: {})",
            self.path, self.offset, self.layout
        )
    }
}

impl MemoryLayout {
    /// The scalar member at `path`, written as text: `tv_sec`, `pos.x`, `points[3].y`, `[2]`
    /// (names of struct/union members, indices of sequence elements or of members).
    ///
    /// # Errors
    /// [`Error::MalformedPath`] for text that is not a path (an unclosed `[`, a bad index, an
    /// empty name); [`Error::PathIndexOutOfRange`] or [`Error::PathNotFound`] for an element
    /// that does not apply (as [`MemoryLayout::select`]); [`Error::ValueMismatch`] if the path ends at a struct, union, sequence or padding
    /// rather than a scalar.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout};
    /// use gatun::Error;
    /// let s = MemoryLayout::c_struct([ValueLayout::I8.with_name("a"), ValueLayout::F32.with_name("b")])
    ///     .unwrap();
    /// let b = s.accessor("b").unwrap();
    /// assert_eq!((b.offset(), b.kind()), (4, ScalarKind::F32));
    /// assert!(matches!(s.accessor("c"), Err(Error::PathNotFound { .. })));
    /// ```
    pub fn accessor(&self, path: &str) -> Result<Accessor> {
        let elements = parse_path(path)?;
        self.resolve(path.into(), elements)
    }

    /// As [`MemoryLayout::accessor`], with the path given as elements
    /// (`["points".into(), 3.into(), "y".into()]`, or just `["x"]`).
    ///
    /// # Errors
    /// As [`MemoryLayout::accessor`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, PathElement, ValueLayout};
    /// let xs = MemoryLayout::sequence_layout(4, ValueLayout::I16).unwrap().with_name("xs");
    /// let s = MemoryLayout::c_struct([ValueLayout::I32.into(), xs]).unwrap();
    /// let third = s.accessor_at([PathElement::Name("xs"), PathElement::Index(2)]).unwrap();
    /// assert_eq!((third.offset(), third.path()), (8, "xs[2]"));
    /// ```
    pub fn accessor_at<'p, P>(&self, path: P) -> Result<Accessor>
    where
        P: IntoIterator,
        P::Item: Into<PathElement<'p>>,
    {
        let elements: Vec<PathElement<'p>> = path.into_iter().map(Into::into).collect();
        let mut text = String::new();
        for (i, e) in elements.iter().enumerate() {
            match e {
                PathElement::Name(n) if i == 0 => text.push_str(n),
                other => text.push_str(&other.to_string()),
            }
        }
        self.resolve(text.into(), elements)
    }

    fn resolve(&self, path: Arc<str>, elements: Vec<PathElement<'_>>) -> Result<Accessor> {
        let (offset, member) = self.select(elements.iter().copied())?;
        match member {
            MemoryLayout::Value(v) => Ok(Accessor {
                path,
                offset,
                layout: if has_enclosing(v) {
                    resolve_enclosing(v, &records_along(self, &elements))
                } else {
                    v.clone()
                },
            }),
            other => Err(Error::ValueMismatch {
                position: format!("path `{path}`"),
                expected: "a scalar member".into(),
                found: other.to_string(),
            }),
        }
    }
}

impl Accessor {
    /// The path this accessor was built from, as text (`a.b[2].c`).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I32.with_name("x")]).unwrap();
    /// assert_eq!(s.accessor("x").unwrap().path(), "x");
    /// ```
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Byte offset of the member from the start of the layout.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I8.with_name("c"), ValueLayout::I64.with_name("n")])
    ///     .unwrap();
    /// assert_eq!(s.accessor("n").unwrap().offset(), 8);
    /// ```
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The member's layout (its kind, alignment in bytes, name).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct_packed([ValueLayout::I8, ValueLayout::I32.with_name("n")], 1).unwrap();
    /// let n = s.accessor("n").unwrap();
    /// assert_eq!((n.layout().byte_size(), n.layout().byte_alignment()), (4, 1));
    /// ```
    pub fn layout(&self) -> &ValueLayout {
        &self.layout
    }

    /// The member's scalar kind.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::ADDRESS.with_name("next")]).unwrap();
    /// assert_eq!(s.accessor("next").unwrap().kind(), ScalarKind::Pointer);
    /// ```
    pub fn kind(&self) -> ScalarKind {
        self.layout.kind()
    }

    /// Reads the member of the layout instance that starts at byte 0 of `segment`. A pointer
    /// member with a target reads as a [`Value::Segment`] over its pointee, living as long as
    /// `segment` ([`MemorySegment::get_value`]; [`Accessor::get_target`] gives an `Option`).
    ///
    /// # Errors
    /// [`Error::OutOfBounds`] if the segment is too short; [`Error::MisalignedAccess`] if the
    /// member's address is not a multiple of its alignment, or a pointer with a target is not
    /// a multiple of its target layout's alignment.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{MemoryLayout, Value, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I32.with_name("x"), ValueLayout::U8.with_name("y")])
    ///     .unwrap();
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_layout(&s).unwrap();
    /// seg.set::<u8>(4, 9).unwrap();
    /// assert_eq!(s.accessor("y").unwrap().get(&seg).unwrap(), Value::U8(9));
    /// assert!(s.accessor("y").unwrap().get(&seg.slice(0, 4).unwrap()).is_err()); // too short
    /// ```
    pub fn get<'s>(&self, segment: &MemorySegment<'s>) -> Result<Value<'s>> {
        self.get_at(segment, 0)
    }

    /// Reads the member of the layout instance that starts at byte `base` of `segment` (one
    /// element of an array of structs: `base = i * layout.byte_size()`).
    ///
    /// # Errors
    /// As [`Accessor::get`]; [`Error::OutOfBounds`] also when `base + offset` overflows.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{MemoryLayout, Value, ValueLayout};
    /// let p = MemoryLayout::c_struct([ValueLayout::I32.with_name("x")]).unwrap();
    /// let x = p.accessor("x").unwrap();
    /// let arena = Arena::confined();
    /// let array = arena.allocate_from_slice(&[5_i32, 6, 7]).unwrap();
    /// assert_eq!(x.get_at(&array, 2 * p.byte_size()).unwrap(), Value::I32(7));
    /// ```
    pub fn get_at<'s>(&self, segment: &MemorySegment<'s>, base: usize) -> Result<Value<'s>> {
        segment.get_value(&self.layout, self.at(base, segment)?)
    }

    /// Reads the pointer member of the instance at byte 0 of `segment` through its target
    /// ([`MemorySegment::get_target`]): `None` for null, else the segment it points to (the
    /// target layout's size, or a C string with its NUL), living as long as `segment`. A
    /// self-referential member (`struct node *next` in `struct node`) reads as a whole
    /// `struct node` when the accessor was built from a layout enclosing it (see
    /// [`super::PointerTarget::Enclosing`]), so a list is walked with this one accessor.
    /// Allocates nothing.
    ///
    /// # Errors
    /// [`Error::ValueMismatch`] if the member is not a pointer with a target; as
    /// [`Accessor::get`]; [`Error::MisalignedAccess`] for a pointer that is not a multiple of
    /// its target layout's alignment.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// // SAFETY: every pointer read through these declarations is null or points to what its
    /// // C type says (here: nodes allocated below).
    /// let mut decls = unsafe { Declarations::with_pointer_targets() };
    /// decls.add("struct node { int value; struct node *next; };").unwrap();
    /// let node = decls.layout("struct node").unwrap();
    /// let (value, next) = (node.accessor("value").unwrap(), node.accessor("next").unwrap());
    /// let arena = Arena::confined();
    /// let (a, b) = (arena.allocate_layout(node).unwrap(), arena.allocate_layout(node).unwrap());
    /// value.set(&a, 1).unwrap();
    /// value.set(&b, 2).unwrap();
    /// next.set(&a, b).unwrap(); // a -> b -> NULL
    /// let mut sum = 0;
    /// let mut at = Some(a);
    /// while let Some(n) = at {
    ///     sum += value.get(&n).unwrap().as_i32().unwrap();
    ///     at = next.get_target(&n).unwrap();
    /// }
    /// assert_eq!(sum, 3);
    /// ```
    pub fn get_target<'s>(&self, segment: &MemorySegment<'s>) -> Result<Option<MemorySegment<'s>>> {
        self.get_target_at(segment, 0)
    }

    /// As [`Accessor::get_target`], for the instance at byte `base` of `segment`.
    ///
    /// # Errors
    /// As [`Accessor::get_target`]; [`Error::OutOfBounds`] also when `base + offset` overflows.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let x = arena.allocate_from(9_i32).unwrap();
    /// // SAFETY: the pointers read through `p` are null or point to an int of `arena`.
    /// let p = unsafe { ValueLayout::pointer_to(ValueLayout::I32.into()) }.unwrap();
    /// let holder = MemoryLayout::c_struct([p.with_name("p")]).unwrap();
    /// let array = arena.allocate_array(&holder, 2).unwrap(); // two holders, pointers null
    /// let member = holder.accessor("p").unwrap();
    /// member.set_at(&array, 8, x).unwrap();
    /// assert_eq!(member.get_target_at(&array, 0).unwrap(), None);
    /// assert_eq!(member.get_target_at(&array, 8).unwrap().unwrap().get::<i32>(0).unwrap(), 9);
    /// ```
    pub fn get_target_at<'s>(
        &self,
        segment: &MemorySegment<'s>,
        base: usize,
    ) -> Result<Option<MemorySegment<'s>>> {
        segment
            .get_target(&self.layout, self.at(base, segment)?)
            .map_err(|e| self.in_path(e))
    }

    /// The NULL-terminated array of pointers that the member of the instance at byte 0 of
    /// `segment` points to (`const char **names`, `T **items` ended by NULL), as
    /// [`ValueLayout::null_terminated`]: its elements up to the first null one, as segments
    /// (C strings with their NUL for `char **`). A null member is an empty array. Allocates
    /// nothing.
    ///
    /// # Errors
    /// As [`Accessor::get`]; as [`ValueLayout::null_terminated`] (the member must be a pointer
    /// whose target is a pointer layout).
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// // SAFETY: every pointer read through these declarations is null or points to what its
    /// // C type says, and `names` to a NULL-terminated array (built below).
    /// let mut decls = unsafe { Declarations::with_pointer_targets() };
    /// decls.add("struct group { const char **names; };").unwrap();
    /// let group = decls.layout("struct group").unwrap();
    /// let arena = Arena::confined();
    /// let (a, b) = (arena.allocate_c_string("ann").unwrap(), arena.allocate_c_string("bo").unwrap());
    /// let names = arena
    ///     .allocate_from_slice(&[a.as_address(), b.as_address(), std::ptr::null_mut()])
    ///     .unwrap();
    /// let g = arena.allocate_layout(group).unwrap();
    /// let member = group.accessor("names").unwrap();
    /// member.set(&g, names).unwrap();
    /// let read: Vec<String> = member
    ///     .null_terminated(&g)
    ///     .unwrap()
    ///     .map(|s| s.unwrap().get_string(0).unwrap())
    ///     .collect();
    /// assert_eq!(read, ["ann", "bo"]);
    /// ```
    pub fn null_terminated<'s>(&self, segment: &MemorySegment<'s>) -> Result<NullTerminated<'s>> {
        let pointer = segment.get_value(&self.layout, self.at(0, segment)?)?;
        self.layout
            .null_terminated(&pointer)
            .map_err(|e| self.in_path(e))
    }

    /// Writes `value` into the member of the instance at byte 0 of `segment`, converted to the
    /// member's kind with [`Value::convert_to`] (so `set(&seg, 5)` works for any integer
    /// member, range-checked, and a segment sets a pointer member to its address).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] / [`Error::ValueMismatch`] from the conversion; as
    /// [`Accessor::get`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{Error, MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::U8.with_name("b")]).unwrap();
    /// let b = s.accessor("b").unwrap();
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_layout(&s).unwrap();
    /// b.set(&seg, 200).unwrap(); // an i32 converted to u8, range-checked
    /// assert_eq!(seg.get::<u8>(0).unwrap(), 200);
    /// assert!(matches!(b.set(&seg, 300), Err(Error::OutOfRange { .. })));
    /// ```
    pub fn set<'v>(&self, segment: &MemorySegment<'_>, value: impl Into<Value<'v>>) -> Result<()> {
        self.set_at(segment, 0, value)
    }

    /// As [`Accessor::set`], for the instance at byte `base` of `segment`.
    ///
    /// # Errors
    /// As [`Accessor::set`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{MemoryLayout, ValueLayout};
    /// let p = MemoryLayout::c_struct([ValueLayout::I16.with_name("v")]).unwrap();
    /// let v = p.accessor("v").unwrap();
    /// let arena = Arena::confined();
    /// let array = arena.allocate_array(&p, 4).unwrap();
    /// v.set_at(&array, 3 * p.byte_size(), -1).unwrap();
    /// assert_eq!(array.get::<i16>(6).unwrap(), -1);
    /// ```
    pub fn set_at<'v>(
        &self,
        segment: &MemorySegment<'_>,
        base: usize,
        value: impl Into<Value<'v>>,
    ) -> Result<()> {
        let value = value
            .into()
            .convert_to(self.kind())
            .map_err(|e| self.in_path(e))?;
        segment.set_value(&self.layout, self.at(base, segment)?, &value)
    }

    /// A view of this accessor that reads and writes `T` directly, its type checked once
    /// here: `T::KIND` must be the member's kind.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{MemoryLayout, ValueLayout};
    /// let point = MemoryLayout::c_struct([
    ///     ValueLayout::I32.with_name("x"),
    ///     ValueLayout::I32.with_name("y"),
    /// ])
    /// .unwrap();
    /// let y = point.accessor("y").unwrap().typed::<i32>().unwrap();
    /// assert!(point.accessor("y").unwrap().typed::<u32>().is_err());
    /// let arena = Arena::confined();
    /// let points = arena.allocate_array(&point, 3).unwrap();
    /// for i in 0..3 {
    ///     y.set_at(&points, i * point.byte_size(), 10 * i as i32).unwrap();
    /// }
    /// assert_eq!(y.get_at(&points, 2 * point.byte_size()).unwrap(), 20);
    /// ```
    ///
    /// # Errors
    /// [`Error::ValueMismatch`] naming the path, the member's kind and `T`'s.
    pub fn typed<T: Scalar>(&self) -> Result<TypedAccessor<T>> {
        if T::KIND != self.kind() {
            return Err(Error::ValueMismatch {
                position: format!("path `{}`", self.path),
                expected: self.kind().to_string(),
                found: T::KIND.to_string(),
            });
        }
        Ok(TypedAccessor {
            offset: self.offset,
            alignment: self.layout.byte_alignment(),
            _t: PhantomData,
        })
    }

    fn at(&self, base: usize, segment: &MemorySegment<'_>) -> Result<usize> {
        base.checked_add(self.offset)
            .ok_or_else(|| Error::OutOfBounds {
                offset: base,
                access_size: self.layout.byte_size(),
                segment_size: segment.byte_size(),
            })
    }

    fn in_path(&self, e: Error) -> Error {
        match e {
            Error::ValueMismatch {
                expected, found, ..
            } => Error::ValueMismatch {
                position: format!("path `{}`", self.path),
                expected,
                found,
            },
            other => other,
        }
    }
}

/// An [`Accessor`] whose Rust type `T` was checked against the member's kind once
/// ([`Accessor::typed`]); accesses check only bounds and alignment. `Copy`, `Send + Sync`.
///
/// ```
/// use gatun::memory::{Arena, SegmentAllocator};
/// use gatun::{MemoryLayout, ValueLayout};
/// let s = MemoryLayout::c_struct([ValueLayout::F64.with_name("d")]).unwrap();
/// let d = s.accessor("d").unwrap().typed::<f64>().unwrap();
/// let arena = Arena::confined();
/// let seg = arena.allocate_layout(&s).unwrap();
/// d.set(&seg, 0.25).unwrap();
/// assert_eq!(d.get(&seg).unwrap(), 0.25);
/// ```
pub struct TypedAccessor<T> {
    offset: usize,
    alignment: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for TypedAccessor<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for TypedAccessor<T> {}

impl<T> fmt::Debug for TypedAccessor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "TypedAccessor<{}>(byte {}, alignment {})",
            std::any::type_name::<T>(),
            self.offset,
            self.alignment
        )
    }
}

impl<T: Scalar> TypedAccessor<T> {
    /// Byte offset of the member from the start of the layout.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I32, ValueLayout::F64.with_name("d")]).unwrap();
    /// assert_eq!(s.accessor("d").unwrap().typed::<f64>().unwrap().offset(), 8);
    /// ```
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Reads the member of the instance at byte 0 of `segment`.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`], [`Error::MisalignedAccess`] (against the member's alignment,
    /// which is below `T`'s natural one in a packed struct).
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I8, ValueLayout::I64.with_name("n")]).unwrap();
    /// let n = s.accessor("n").unwrap().typed::<i64>().unwrap();
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_layout(&s).unwrap();
    /// seg.set::<i64>(8, -3).unwrap();
    /// assert_eq!(n.get(&seg).unwrap(), -3);
    /// ```
    pub fn get(&self, segment: &MemorySegment<'_>) -> Result<T> {
        self.get_at(segment, 0)
    }

    /// Reads the member of the instance at byte `base` of `segment`.
    ///
    /// # Errors
    /// As [`TypedAccessor::get`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{MemoryLayout, ValueLayout};
    /// let p = MemoryLayout::c_struct([ValueLayout::U16.with_name("v")]).unwrap();
    /// let v = p.accessor("v").unwrap().typed::<u16>().unwrap();
    /// let arena = Arena::confined();
    /// let array = arena.allocate_from_slice(&[1_u16, 2, 3]).unwrap();
    /// assert_eq!(v.get_at(&array, 4).unwrap(), 3);
    /// assert!(v.get_at(&array, 6).is_err()); // past the end
    /// ```
    pub fn get_at(&self, segment: &MemorySegment<'_>, base: usize) -> Result<T> {
        let offset = self.at(base, segment)?;
        check_alignment(segment, offset, self.alignment, T::KIND.byte_size())?;
        segment.get_unaligned(offset)
    }

    /// Writes the member of the instance at byte 0 of `segment`.
    ///
    /// # Errors
    /// As [`TypedAccessor::get`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::F32.with_name("f")]).unwrap();
    /// let f = s.accessor("f").unwrap().typed::<f32>().unwrap();
    /// let arena = Arena::confined();
    /// let seg = arena.allocate_layout(&s).unwrap();
    /// f.set(&seg, 1.25).unwrap();
    /// assert_eq!(seg.get::<f32>(0).unwrap(), 1.25);
    /// ```
    pub fn set(&self, segment: &MemorySegment<'_>, value: T) -> Result<()> {
        self.set_at(segment, 0, value)
    }

    /// Writes the member of the instance at byte `base` of `segment`.
    ///
    /// # Errors
    /// As [`TypedAccessor::get`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{MemoryLayout, ValueLayout};
    /// let p = MemoryLayout::c_struct([ValueLayout::I32.with_name("x"), ValueLayout::I32.with_name("y")])
    ///     .unwrap();
    /// let y = p.accessor("y").unwrap().typed::<i32>().unwrap();
    /// let arena = Arena::confined();
    /// let array = arena.allocate_array(&p, 2).unwrap();
    /// y.set_at(&array, p.byte_size(), 4).unwrap();
    /// assert_eq!(array.get::<i32>(12).unwrap(), 4);
    /// ```
    pub fn set_at(&self, segment: &MemorySegment<'_>, base: usize, value: T) -> Result<()> {
        let offset = self.at(base, segment)?;
        check_alignment(segment, offset, self.alignment, T::KIND.byte_size())?;
        segment.set_unaligned(offset, value)
    }

    fn at(&self, base: usize, segment: &MemorySegment<'_>) -> Result<usize> {
        base.checked_add(self.offset)
            .ok_or_else(|| Error::OutOfBounds {
                offset: base,
                access_size: T::KIND.byte_size(),
                segment_size: segment.byte_size(),
            })
    }
}

/// The alignment check of an aligned access with the member's (possibly lowered) alignment.
/// Bounds are checked by the access itself; an out-of-bounds offset is reported as such
/// first, so the error does not depend on the address.
fn check_alignment(
    segment: &MemorySegment<'_>,
    offset: usize,
    alignment: usize,
    size: usize,
) -> Result<()> {
    if offset
        .checked_add(size)
        .is_none_or(|end| end > segment.byte_size())
    {
        return Err(Error::OutOfBounds {
            offset,
            access_size: size,
            segment_size: segment.byte_size(),
        });
    }
    let address = segment.address().wrapping_add(offset);
    if address % alignment != 0 {
        return Err(Error::MisalignedAccess { address, alignment });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Arena, SegmentAllocator};

    fn nested() -> MemoryLayout {
        let c = MemoryLayout::c_struct([
            ValueLayout::I8.with_name("tag"),
            ValueLayout::U32.with_name("c"),
        ])
        .unwrap();
        let b = MemoryLayout::c_struct([
            MemoryLayout::from(ValueLayout::I16.with_name("n")),
            MemoryLayout::sequence_layout(3, c).unwrap().with_name("b"),
        ])
        .unwrap();
        MemoryLayout::c_struct([
            MemoryLayout::from(ValueLayout::F64.with_name("d")),
            b.with_name("a"),
            MemoryLayout::from(ValueLayout::ADDRESS.with_name("p")),
        ])
        .unwrap()
    }

    #[test]
    fn paths_resolve_once_to_offset_and_kind() {
        let l = nested();
        // d: 0..8; a at 8: n 8..10, b at 12: 3 x {i8, u32} of 8 bytes; p at 40.
        let c = l.accessor("a.b[2].c").unwrap();
        assert_eq!((c.offset(), c.kind()), (8 + 4 + 2 * 8 + 4, ScalarKind::U32));
        assert_eq!(c.path(), "a.b[2].c");
        assert_eq!(c.offset(), l.byte_offset_of("a.b[2].c").unwrap());
        let by_elements = l
            .accessor_at(["a".into(), "b".into(), PathElement::Index(2), "c".into()])
            .unwrap();
        assert_eq!(by_elements, c);
        assert_eq!(l.accessor("p").unwrap().offset(), 40);
        assert!(matches!(
            l.accessor("a.b[3].c"),
            Err(Error::PathIndexOutOfRange {
                index: 3,
                count: 3,
                ..
            })
        ));
        assert!(matches!(l.accessor("a.x"), Err(Error::PathNotFound { .. })));
        assert!(matches!(
            l.accessor("a..n"),
            Err(Error::MalformedPath { position: 2, .. })
        ));
        let e = l.accessor("a[").unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed layout path `a[` at byte 1: unclosed `[`"
        );
        assert!(matches!(l.accessor("d.x"), Err(Error::PathNotFound { .. })));
        let e = l.accessor("a.b").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("value mismatch at path `a.b`: expected a scalar member"),
            "{e}"
        );
    }

    #[test]
    fn get_and_set_on_any_segment_of_the_layout() {
        let l = nested();
        let arena = Arena::confined();
        let c = l.accessor("a.b[1].c").unwrap();
        let p = l.accessor("p").unwrap();
        let two = arena.allocate_array(&l, 2).unwrap();
        c.set(&two, 7).unwrap();
        c.set_at(&two, l.byte_size(), 9_u8).unwrap();
        assert_eq!(c.get(&two).unwrap(), Value::U32(7));
        assert_eq!(c.get_at(&two, l.byte_size()).unwrap(), Value::U32(9));
        assert_eq!(two.get::<u32>(c.offset()).unwrap(), 7);
        // Conversions are range-checked and name the path.
        assert!(matches!(c.set(&two, -1), Err(Error::OutOfRange { .. })));
        let e = c.set(&two, 1.5_f64).unwrap_err();
        assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
        let e = c.set(&two, two).unwrap_err();
        assert!(e.to_string().contains("path `a.b[1].c`"), "{e}");
        // A segment sets a pointer member to its address.
        p.set(&two, two).unwrap();
        assert_eq!(p.get(&two).unwrap(), Value::Address(two.as_address()));
        // Bounds: the second instance does not fit a one-instance segment.
        let one = two.slice(0, l.byte_size()).unwrap();
        assert!(matches!(
            c.get_at(&one, l.byte_size()),
            Err(Error::OutOfBounds { .. })
        ));
        assert!(matches!(
            c.get_at(&one, usize::MAX),
            Err(Error::OutOfBounds { .. })
        ));
        // Alignment: the u32 member at an odd base is misaligned.
        assert!(matches!(
            c.get_at(&two, 1),
            Err(Error::MisalignedAccess { .. })
        ));
    }

    #[test]
    fn typed_accessors_check_the_type_once() {
        let l = nested();
        let arena = Arena::confined();
        let seg = arena.allocate_layout(&l).unwrap();
        let d = l.accessor("d").unwrap().typed::<f64>().unwrap();
        d.set(&seg, 2.5).unwrap();
        assert_eq!(d.get(&seg).unwrap(), 2.5);
        let n = l.accessor("a.n").unwrap();
        assert_eq!(
            n.typed::<i32>().unwrap_err(),
            Error::ValueMismatch {
                position: "path `a.n`".into(),
                expected: "i16".into(),
                found: "i32".into()
            }
        );
        let n = n.typed::<i16>().unwrap();
        n.set(&seg, -3).unwrap();
        assert_eq!(seg.get::<i16>(8).unwrap(), -3);
        assert!(matches!(
            n.get_at(&seg, 1),
            Err(Error::MisalignedAccess { .. })
        ));
        assert!(matches!(
            n.get_at(&seg, l.byte_size()),
            Err(Error::OutOfBounds { .. })
        ));
        let p = l.accessor("p").unwrap().typed::<*mut u8>().unwrap();
        p.set(&seg, seg.as_ptr()).unwrap();
        assert_eq!(p.get(&seg).unwrap(), seg.as_ptr());
    }

    #[test]
    fn packed_members_use_their_lowered_alignment() {
        let l = MemoryLayout::c_struct_packed(
            [
                ValueLayout::I8.with_name("a"),
                ValueLayout::I32.with_name("b"),
            ],
            1,
        )
        .unwrap();
        let arena = Arena::confined();
        let seg = arena.allocate_layout(&l).unwrap();
        let b = l.accessor("b").unwrap();
        assert_eq!(b.offset(), 1);
        b.set(&seg, 0x01020304).unwrap();
        assert_eq!(b.get(&seg).unwrap(), Value::I32(0x01020304));
        let bt = b.typed::<i32>().unwrap();
        assert_eq!(bt.get(&seg).unwrap(), 0x01020304);
    }
}
