//! Group layouts: [`StructLayout`], [`UnionLayout`], [`SequenceLayout`] and [`PaddingLayout`].
//!
//! Construction goes through [`MemoryLayout`]'s constructors, which validate; these types only
//! expose read accessors, so an existing layout is always consistent (offsets within the size,
//! every member aligned unless its alignment was lowered on purpose, nesting depth at most
//! [`super::MAX_NESTING`]).
//!
//! Equality and hashing are structural (see `structure.rs`: cached per group, linear however
//! much the members are shared); `Debug` prints the bounded `Display` text.

use std::sync::Arc;

use super::structure::Shape;
use super::MemoryLayout;

/// A C struct: members at increasing byte offsets (C11 §6.7.2.1).
///
/// Members keep the order and indices they were given in; padding is either implicit (holes
/// between `offsets`, as built by [`MemoryLayout::c_struct`]) or explicit [`PaddingLayout`]
/// members (as built by [`MemoryLayout::struct_layout`]).
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
    pub fn members(&self) -> &[MemoryLayout] {
        &self.members
    }

    /// Each member's byte offset from the start of the struct, parallel to [`Self::members`].
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// `(offset, member)` pairs in declaration order.
    pub fn fields(&self) -> impl Iterator<Item = (usize, &MemoryLayout)> {
        self.offsets.iter().copied().zip(self.members.iter())
    }

    /// Size in bytes, trailing padding included.
    pub fn byte_size(&self) -> usize {
        self.byte_size
    }

    /// Alignment in bytes.
    pub fn byte_alignment(&self) -> usize {
        self.byte_alignment
    }

    /// The struct's name, if any (e.g. `point` for `struct point`).
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// A C union: every member at offset 0; size is the largest member rounded up to the
/// alignment, which is the largest member alignment (C11 §6.7.2.1 ¶16).
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
    pub fn members(&self) -> &[MemoryLayout] {
        &self.members
    }

    /// Size in bytes.
    pub fn byte_size(&self) -> usize {
        self.byte_size
    }

    /// Alignment in bytes.
    pub fn byte_alignment(&self) -> usize {
        self.byte_alignment
    }

    /// The union's name, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// A fixed-length array `T[count]`: `count` elements of one layout, back to back.
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
    pub fn element(&self) -> &MemoryLayout {
        &self.element
    }

    /// Number of elements.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Size in bytes: `count * element.byte_size()` (checked at construction).
    pub fn byte_size(&self) -> usize {
        self.count * self.element.byte_size()
    }

    /// Alignment in bytes (the element's unless raised).
    pub fn byte_alignment(&self) -> usize {
        self.byte_alignment
    }

    /// The sequence's name, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// Explicit padding: `byte_size` bytes with alignment 1 and no meaning.
#[derive(Debug, Clone)]
pub struct PaddingLayout {
    pub(super) byte_size: usize,
    pub(super) name: Option<Arc<str>>,
}

impl PaddingLayout {
    /// Size in bytes.
    pub fn byte_size(&self) -> usize {
        self.byte_size
    }

    /// The padding's name, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}
