//! Group layouts: [`StructLayout`], [`UnionLayout`], [`SequenceLayout`] and [`PaddingLayout`].
//!
//! Construction goes through [`MemoryLayout`]'s constructors, which validate; these types only
//! expose read accessors, so an existing layout is always consistent (offsets within the size,
//! every member aligned unless its alignment was lowered on purpose, nesting depth at most
//! [`super::MAX_NESTING`]).
//!
//! Equality and hashing are structural (hashes cached per group, see `structure.rs`; equality
//! linear however much the members are shared, see `compare.rs`); `Debug` prints the bounded `Display` text.

use std::sync::Arc;

use super::structure::Shape;
use super::MemoryLayout;

/// A C struct: members at increasing byte offsets (C11 §6.7.2.1).
///
/// Members keep the order and indices they were given in; padding is either implicit (holes
/// between `offsets`, as built by [`MemoryLayout::c_struct`]) or explicit [`PaddingLayout`]
/// members (as built by [`MemoryLayout::struct_layout`]).
///
/// ```
/// use gatun::layout::{MemoryLayout, ValueLayout};
/// let s = MemoryLayout::c_struct([ValueLayout::I8, ValueLayout::F64]).unwrap();
/// let MemoryLayout::Struct(s) = s else { unreachable!() };
/// assert_eq!(s.offsets(), [0, 8]);
/// assert_eq!((s.byte_size(), s.byte_alignment()), (16, 8));
/// ```
#[derive(Clone)]
pub struct StructLayout {
    pub(super) shape: Shape,
    pub(super) members: Arc<[MemoryLayout]>,
    pub(super) offsets: Arc<[usize]>,
    pub(super) byte_size: usize,
    pub(super) byte_alignment: usize,
    pub(super) name: Option<Arc<str>>,
}

impl StructLayout {
    /// The members, in declaration order (explicit padding members included).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I8, ValueLayout::I32]).unwrap();
    /// let MemoryLayout::Struct(s) = s else { unreachable!() };
    /// assert_eq!(s.members().len(), 2);
    /// assert_eq!(s.members()[1].byte_size(), 4);
    /// ```
    pub fn members(&self) -> &[MemoryLayout] {
        &self.members
    }

    /// Each member's byte offset from the start of the struct, parallel to [`Self::members`].
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I8, ValueLayout::I16, ValueLayout::I64]).unwrap();
    /// let MemoryLayout::Struct(s) = s else { unreachable!() };
    /// assert_eq!(s.offsets(), [0, 2, 8]);
    /// ```
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// `(offset, member)` pairs in declaration order.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I8, ValueLayout::F32]).unwrap();
    /// let MemoryLayout::Struct(s) = s else { unreachable!() };
    /// let spans: Vec<(usize, usize)> = s.fields().map(|(o, m)| (o, m.byte_size())).collect();
    /// assert_eq!(spans, [(0, 1), (4, 4)]);
    /// ```
    pub fn fields(&self) -> impl Iterator<Item = (usize, &MemoryLayout)> {
        self.offsets.iter().copied().zip(self.members.iter())
    }

    /// Size in bytes, trailing padding included.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::F64, ValueLayout::I8]).unwrap();
    /// let MemoryLayout::Struct(s) = s else { unreachable!() };
    /// assert_eq!(s.byte_size(), 16);
    /// ```
    pub fn byte_size(&self) -> usize {
        self.byte_size
    }

    /// Alignment in bytes.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I16, ValueLayout::I8]).unwrap();
    /// let MemoryLayout::Struct(s) = s else { unreachable!() };
    /// assert_eq!(s.byte_alignment(), 2);
    /// ```
    pub fn byte_alignment(&self) -> usize {
        self.byte_alignment
    }

    /// The struct's name, if any (e.g. `point` for `struct point`).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I32]).unwrap().with_name("point");
    /// let MemoryLayout::Struct(s) = s else { unreachable!() };
    /// assert_eq!(s.name(), Some("point"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// A C union: every member at offset 0; size is the largest member rounded up to the
/// alignment, which is the largest member alignment (C11 §6.7.2.1 ¶16).
///
/// ```
/// use gatun::layout::{MemoryLayout, ValueLayout};
/// let u = MemoryLayout::union_layout([ValueLayout::I8, ValueLayout::I32]).unwrap();
/// let MemoryLayout::Union(u) = u else { unreachable!() };
/// assert_eq!((u.byte_size(), u.members().len()), (4, 2));
/// ```
#[derive(Clone)]
pub struct UnionLayout {
    pub(super) shape: Shape,
    pub(super) members: Arc<[MemoryLayout]>,
    pub(super) byte_size: usize,
    pub(super) byte_alignment: usize,
    pub(super) name: Option<Arc<str>>,
}

impl UnionLayout {
    /// The members, in declaration order.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let u = MemoryLayout::union_layout([ValueLayout::I32, ValueLayout::F32]).unwrap();
    /// let MemoryLayout::Union(u) = u else { unreachable!() };
    /// assert_eq!(u.members()[1], MemoryLayout::from(ValueLayout::F32));
    /// ```
    pub fn members(&self) -> &[MemoryLayout] {
        &self.members
    }

    /// Size in bytes.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let u = MemoryLayout::union_layout([ValueLayout::I8, ValueLayout::I16]).unwrap();
    /// let MemoryLayout::Union(u) = u else { unreachable!() };
    /// assert_eq!(u.byte_size(), 2);
    /// ```
    pub fn byte_size(&self) -> usize {
        self.byte_size
    }

    /// Alignment in bytes.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let u = MemoryLayout::union_layout([ValueLayout::I8, ValueLayout::F64]).unwrap();
    /// let MemoryLayout::Union(u) = u else { unreachable!() };
    /// assert_eq!(u.byte_alignment(), 8);
    /// ```
    pub fn byte_alignment(&self) -> usize {
        self.byte_alignment
    }

    /// The union's name, if any.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let u = MemoryLayout::union_layout([ValueLayout::I8]).unwrap().with_name("u");
    /// let MemoryLayout::Union(u) = u else { unreachable!() };
    /// assert_eq!(u.name(), Some("u"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// A fixed-length array `T[count]`: `count` elements of one layout, back to back.
///
/// ```
/// use gatun::layout::{MemoryLayout, ValueLayout};
/// let a = MemoryLayout::sequence_layout(3, ValueLayout::I16).unwrap();
/// let MemoryLayout::Sequence(a) = a else { unreachable!() };
/// assert_eq!((a.count(), a.byte_size(), a.byte_alignment()), (3, 6, 2));
/// ```
#[derive(Clone)]
pub struct SequenceLayout {
    pub(super) shape: Shape,
    pub(super) element: Arc<MemoryLayout>,
    pub(super) count: usize,
    pub(super) byte_alignment: usize,
    pub(super) name: Option<Arc<str>>,
}

impl SequenceLayout {
    /// The element layout.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let a = MemoryLayout::sequence_layout(4, ValueLayout::U16).unwrap();
    /// let MemoryLayout::Sequence(a) = a else { unreachable!() };
    /// assert_eq!(a.element(), &MemoryLayout::from(ValueLayout::U16));
    /// ```
    pub fn element(&self) -> &MemoryLayout {
        &self.element
    }

    /// Number of elements.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let a = MemoryLayout::sequence_layout(7, ValueLayout::U8).unwrap();
    /// let MemoryLayout::Sequence(a) = a else { unreachable!() };
    /// assert_eq!(a.count(), 7);
    /// ```
    pub fn count(&self) -> usize {
        self.count
    }

    /// Size in bytes: `count * element.byte_size()` (checked at construction).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let a = MemoryLayout::sequence_layout(3, ValueLayout::F64).unwrap();
    /// let MemoryLayout::Sequence(a) = a else { unreachable!() };
    /// assert_eq!(a.byte_size(), 24);
    /// ```
    pub fn byte_size(&self) -> usize {
        self.count * self.element.byte_size()
    }

    /// Alignment in bytes (the element's unless raised).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let a = MemoryLayout::sequence_layout(3, ValueLayout::I32).unwrap();
    /// let raised = a.clone().with_byte_alignment(16).unwrap();
    /// let (MemoryLayout::Sequence(a), MemoryLayout::Sequence(r)) = (a, raised) else { unreachable!() };
    /// assert_eq!((a.byte_alignment(), r.byte_alignment()), (4, 16));
    /// ```
    pub fn byte_alignment(&self) -> usize {
        self.byte_alignment
    }

    /// The sequence's name, if any.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let a = MemoryLayout::sequence_layout(2, ValueLayout::I8).unwrap().with_name("tag");
    /// let MemoryLayout::Sequence(a) = a else { unreachable!() };
    /// assert_eq!(a.name(), Some("tag"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// Explicit padding: `byte_size` bytes (at most `isize::MAX`) with alignment 1 and no meaning.
///
/// ```
/// use gatun::layout::MemoryLayout;
/// let p = MemoryLayout::padding_layout(3).unwrap();
/// let MemoryLayout::Padding(p) = p else { unreachable!() };
/// assert_eq!(p.byte_size(), 3);
/// ```
#[derive(Debug, Clone)]
pub struct PaddingLayout {
    pub(super) byte_size: usize,
    pub(super) name: Option<Arc<str>>,
}

impl PaddingLayout {
    /// Size in bytes.
    ///
    /// ```
    /// use gatun::layout::MemoryLayout;
    /// let MemoryLayout::Padding(p) = MemoryLayout::padding_layout(6).unwrap() else { unreachable!() };
    /// assert_eq!(p.byte_size(), 6);
    /// ```
    pub fn byte_size(&self) -> usize {
        self.byte_size
    }

    /// The padding's name, if any.
    ///
    /// ```
    /// use gatun::layout::MemoryLayout;
    /// let p = MemoryLayout::padding_layout(2).unwrap().with_name("reserved");
    /// let MemoryLayout::Padding(p) = p else { unreachable!() };
    /// assert_eq!(p.name(), Some("reserved"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}
