//! Memory layouts (Java's `MemoryLayout` hierarchy): the size, alignment and shape of C data.
//!
//! - [`ValueLayout`]: one scalar ([`ScalarKind`]: integers, floats, bool, pointers).
//! - [`MemoryLayout`]: a value, a struct, a union, a sequence (fixed-length array) or padding.
//! - [`DataModel`] and [`canonical_layouts`]: C type names (`int`, `long`, `size_t`, ...) mapped to
//!   value layouts for a target (LP64 on Unix, LLP64 on Windows), like Java's
//!   `Linker.canonicalLayouts()`.
//!
//! All sizes and offsets are in bytes; all alignments are powers of two, in bytes. Layouts are
//! immutable, cheap to clone (members are behind `Arc`s) and `Send + Sync`.
//!
//! Limits, checked by every constructor: every size fits in `isize` (at most `isize::MAX`
//! bytes), and layouts nest at most [`MAX_NESTING`] levels (a scalar is one level; each struct,
//! union, sequence or pointer target adds one). Members may be shared (the same `Arc` used
//! many times), so a layout's tree expansion can be exponential in its depth; depth, hash,
//! equality and `Display` never expand it (depth and hash are cached per group, equality
//! is linear in the distinct parts of the two layouts, text is cut after 2048 bytes with `…`).
//!
//! C struct rules (C11 §6.7.2.1 and the SysV/Win64 ABIs, which agree here): each member is placed
//! at the next offset that is a multiple of its alignment; the struct's alignment is the largest
//! member alignment; its size is rounded up to that alignment (trailing padding).

mod accessor;
pub(crate) mod bitfield;
mod canonical;
mod compare;
pub(crate) mod descriptor;
mod group;
mod structure;
mod target;
pub(crate) mod text;
mod value;

pub use accessor::{Accessor, TypedAccessor};
pub use bitfield::BitField;
pub use canonical::{canonical_layouts, DataModel};
pub(crate) use canonical::{BIGGEST_ALIGNMENT, WIDE_SCALAR_ALIGNMENT};
pub(crate) use compare::{same_declaration, same_shape};
pub(crate) use descriptor::FunctionDescriptor;
pub use group::{PaddingLayout, SequenceLayout, StructLayout, UnionLayout};
pub use structure::MAX_NESTING;
pub use target::PointerTarget;
pub use value::{ScalarKind, ValueLayout};

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};
use structure::{group_shape, Tag};

/// Any layout (Java's sealed `MemoryLayout` interface).
///
/// Build groups with [`MemoryLayout::c_struct`] (C padding computed for you),
/// [`MemoryLayout::struct_layout`] (explicit padding, validated), [`MemoryLayout::union_layout`],
/// [`MemoryLayout::sequence_layout`] and [`MemoryLayout::padding_layout`];
/// [`MemoryLayout::c_struct_packed`] and [`MemoryLayout::union_layout_packed`] give gcc's
/// `__attribute__((packed))` / `#pragma pack(n)` layouts.
///
/// ```
/// use gatun::{MemoryLayout, ValueLayout};
/// // struct { char tag; int32_t xs[3]; } with C padding, and a union of it and a double.
/// let xs = MemoryLayout::sequence_layout(3, ValueLayout::I32).unwrap();
/// let s = MemoryLayout::c_struct([
///     MemoryLayout::from(ValueLayout::I8.with_name("tag")),
///     xs.with_name("xs"),
/// ])
/// .unwrap();
/// assert_eq!((s.byte_size(), s.byte_alignment()), (16, 4));
/// assert_eq!(s.byte_offset_of("xs[2]").unwrap(), 12);
/// let u = MemoryLayout::union_layout([s, ValueLayout::F64.into()]).unwrap();
/// assert_eq!((u.byte_size(), u.byte_alignment()), (16, 8));
/// ```
#[derive(Clone)]
pub enum MemoryLayout {
    /// A scalar.
    Value(ValueLayout),
    /// A struct.
    Struct(StructLayout),
    /// A union.
    Union(UnionLayout),
    /// A fixed-length array.
    Sequence(SequenceLayout),
    /// Padding bytes.
    Padding(PaddingLayout),
}

impl From<ValueLayout> for MemoryLayout {
    fn from(v: ValueLayout) -> Self {
        MemoryLayout::Value(v)
    }
}

impl From<&ValueLayout> for MemoryLayout {
    fn from(v: &ValueLayout) -> Self {
        MemoryLayout::Value(v.clone())
    }
}

impl From<&MemoryLayout> for MemoryLayout {
    fn from(v: &MemoryLayout) -> Self {
        v.clone()
    }
}

/// One step of a layout path (Java's `PathElement`): a member by name or a member/element by
/// index.
///
/// ```
/// use gatun::layout::PathElement;
/// use gatun::{MemoryLayout, ValueLayout};
/// let pair = MemoryLayout::c_struct([ValueLayout::I32.with_name("a"), ValueLayout::I64.with_name("b")])
///     .unwrap();
/// let pairs = MemoryLayout::sequence_layout(4, pair).unwrap();
/// // pairs[2].b, as elements: the same as the text path `[2].b`.
/// let path = [PathElement::Index(2), PathElement::Name("b")];
/// assert_eq!(pairs.byte_offset(path).unwrap(), 2 * 16 + 8);
/// assert_eq!(pairs.byte_offset_of("[2].b").unwrap(), 40);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathElement<'p> {
    /// A struct or union member by name.
    Name(&'p str),
    /// A struct or union member by position (explicit padding members count), or a sequence
    /// element by index.
    Index(usize),
}

impl<'p> From<&'p str> for PathElement<'p> {
    fn from(s: &'p str) -> Self {
        PathElement::Name(s)
    }
}

impl From<usize> for PathElement<'_> {
    fn from(i: usize) -> Self {
        PathElement::Index(i)
    }
}

impl fmt::Display for PathElement<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Name(n) => write!(f, ".{n}"),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// Rounds `offset` up to a multiple of `alignment` (a power of two). Layout sizes must fit in
/// `isize` (the limit of Rust's allocator and of `ptr::add`), so a result above `isize::MAX` is
/// an overflow too.
fn align_up(offset: usize, alignment: usize, what: &dyn Fn() -> String) -> Result<usize> {
    debug_assert!(alignment.is_power_of_two());
    offset
        .checked_add(alignment - 1)
        .map(|x| x & !(alignment - 1))
        .filter(|&x| x <= isize::MAX as usize)
        .ok_or_else(|| Error::SizeOverflow { what: what() })
}

fn member_label(member: &MemoryLayout, index: usize) -> String {
    match member.name() {
        Some(n) => format!("`{n}` (#{index})"),
        None => format!("#{index}"),
    }
}

/// `offset + member.byte_size()`, or [`Error::SizeOverflow`] naming the member and its offset
/// when the struct would exceed `isize::MAX` bytes.
fn end_of_member(offset: usize, member: &MemoryLayout, index: usize) -> Result<usize> {
    offset
        .checked_add(member.byte_size())
        .filter(|&x| x <= isize::MAX as usize)
        .ok_or_else(|| Error::SizeOverflow {
            what: format!(
                "struct member {} of {} bytes at byte offset {offset} ends beyond isize::MAX",
                member_label(member, index),
                member.byte_size()
            ),
        })
}

fn collect<I>(members: I) -> Arc<[MemoryLayout]>
where
    I: IntoIterator,
    I::Item: Into<MemoryLayout>,
{
    members.into_iter().map(Into::into).collect()
}

impl MemoryLayout {
    /// A struct laid out by the C rules: each member at the next multiple of its alignment,
    /// trailing padding up to the largest alignment. Member indices in paths are the indices of
    /// `members` (no padding members are inserted; holes are implicit).
    ///
    /// Members may have a lowered alignment (see [`ValueLayout::with_byte_alignment`]); a struct
    /// of members aligned to 1 is a packed struct (`__attribute__((packed))`).
    ///
    /// # Errors
    /// [`Error::SizeOverflow`] if the size does not fit in `isize`; [`Error::NestingTooDeep`]
    /// if the struct would nest more than [`MAX_NESTING`] levels.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// // struct { char c; double d; short s; }: d at 8, s at 16, 6 bytes of trailing padding.
    /// let s = MemoryLayout::c_struct([ValueLayout::I8, ValueLayout::F64, ValueLayout::I16]).unwrap();
    /// assert_eq!((s.byte_size(), s.byte_alignment()), (24, 8));
    /// assert_eq!(s.byte_offset([2]).unwrap(), 16);
    /// ```
    pub fn c_struct<I>(members: I) -> Result<MemoryLayout>
    where
        I: IntoIterator,
        I::Item: Into<MemoryLayout>,
    {
        Self::c_struct_packed_inner(collect(members), None)
    }

    /// A struct laid out as by `#pragma pack(pack)`: each member's alignment is lowered to at
    /// most `pack` bytes (1 gives `__attribute__((packed))`), then the C rules apply.
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`] if `pack` is not a power of two; [`Error::SizeOverflow`];
    /// [`Error::NestingTooDeep`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// // #pragma pack(2) struct { char c; int i; }
    /// let s = MemoryLayout::c_struct_packed([ValueLayout::I8, ValueLayout::I32], 2).unwrap();
    /// assert_eq!((s.byte_size(), s.byte_alignment(), s.byte_offset([1]).unwrap()), (6, 2, 2));
    /// assert!(MemoryLayout::c_struct_packed([ValueLayout::I8], 3).is_err());
    /// ```
    pub fn c_struct_packed<I>(members: I, pack: usize) -> Result<MemoryLayout>
    where
        I: IntoIterator,
        I::Item: Into<MemoryLayout>,
    {
        if !pack.is_power_of_two() {
            return Err(Error::InvalidAlignment { alignment: pack });
        }
        Self::c_struct_packed_inner(collect(members), Some(pack))
    }

    fn c_struct_packed_inner(
        members: Arc<[MemoryLayout]>,
        pack: Option<usize>,
    ) -> Result<MemoryLayout> {
        let members = pack_members(members, pack);
        let mut offsets = Vec::with_capacity(members.len());
        let mut offset = 0usize;
        let mut alignment = 1usize;
        for (i, m) in members.iter().enumerate() {
            let a = m.byte_alignment();
            offset = align_up(offset, a, &|| {
                format!(
                    "struct member {} aligned to {a} after byte offset {offset}",
                    member_label(m, i)
                )
            })?;
            offsets.push(offset);
            offset = end_of_member(offset, m, i)?;
            alignment = alignment.max(a);
        }
        let byte_size = align_up(offset, alignment, &|| "struct trailing padding".into())?;
        let shape = group_shape(Tag::Struct, &members, &offsets, 0)?;
        Ok(MemoryLayout::Struct(StructLayout {
            shape,
            members,
            offsets: offsets.into(),
            byte_size,
            byte_alignment: alignment,
            name: None,
        }))
    }

    /// A struct with explicit layout (Java's `MemoryLayout.structLayout`): members are placed
    /// back to back with no implicit padding, so holes must be given as
    /// [`MemoryLayout::padding_layout`] members. The alignment is the largest member alignment.
    /// As in Java, trailing padding is not required here, but the linker rejects a by-value
    /// struct whose size is not a multiple of its alignment.
    ///
    /// # Errors
    /// [`Error::MisalignedField`] naming the first member whose offset is not a multiple of its
    /// alignment; [`Error::SizeOverflow`]; [`Error::NestingTooDeep`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// use gatun::Error;
    /// let pad = MemoryLayout::padding_layout(4).unwrap();
    /// let s = MemoryLayout::struct_layout([ValueLayout::I32.into(), pad, ValueLayout::F64.into()]);
    /// assert_eq!(s.unwrap().byte_size(), 16);
    /// let e = MemoryLayout::struct_layout([ValueLayout::I32, ValueLayout::F64]).unwrap_err();
    /// assert!(matches!(e, Error::MisalignedField { offset: 4, alignment: 8, .. }));
    /// ```
    pub fn struct_layout<I>(members: I) -> Result<MemoryLayout>
    where
        I: IntoIterator,
        I::Item: Into<MemoryLayout>,
    {
        let members = collect(members);
        let mut offsets = Vec::with_capacity(members.len());
        let mut offset = 0usize;
        let mut alignment = 1usize;
        for (i, m) in members.iter().enumerate() {
            let a = m.byte_alignment();
            if offset % a != 0 {
                return Err(Error::MisalignedField {
                    field: member_label(m, i),
                    offset,
                    alignment: a,
                });
            }
            offsets.push(offset);
            offset = end_of_member(offset, m, i)?;
            alignment = alignment.max(a);
        }
        let shape = group_shape(Tag::Struct, &members, &offsets, 0)?;
        Ok(MemoryLayout::Struct(StructLayout {
            shape,
            members,
            offsets: offsets.into(),
            byte_size: offset,
            byte_alignment: alignment,
            name: None,
        }))
    }

    /// A C union: all members at offset 0, size = largest member rounded up to the largest
    /// alignment.
    ///
    /// # Errors
    /// [`Error::SizeOverflow`]; [`Error::NestingTooDeep`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let u = MemoryLayout::union_layout([
    ///     MemoryLayout::sequence_layout(5, ValueLayout::U8).unwrap(),
    ///     ValueLayout::I32.into(),
    /// ])
    /// .unwrap();
    /// assert_eq!((u.byte_size(), u.byte_alignment()), (8, 4)); // 5 rounded up to 4's multiple
    /// ```
    pub fn union_layout<I>(members: I) -> Result<MemoryLayout>
    where
        I: IntoIterator,
        I::Item: Into<MemoryLayout>,
    {
        Self::union_layout_inner(collect(members), None)
    }

    /// A C union under `#pragma pack(pack)`: each member's alignment is lowered to at most
    /// `pack` bytes (1 gives `__attribute__((packed))`), so the union's alignment is at most
    /// `pack` and its size is the largest member rounded up to that alignment.
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`] if `pack` is not a power of two; [`Error::SizeOverflow`];
    /// [`Error::NestingTooDeep`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let u = MemoryLayout::union_layout_packed([ValueLayout::I8, ValueLayout::I64], 1).unwrap();
    /// assert_eq!((u.byte_size(), u.byte_alignment()), (8, 1));
    /// ```
    pub fn union_layout_packed<I>(members: I, pack: usize) -> Result<MemoryLayout>
    where
        I: IntoIterator,
        I::Item: Into<MemoryLayout>,
    {
        if !pack.is_power_of_two() {
            return Err(Error::InvalidAlignment { alignment: pack });
        }
        Self::union_layout_inner(collect(members), Some(pack))
    }

    fn union_layout_inner(
        members: Arc<[MemoryLayout]>,
        pack: Option<usize>,
    ) -> Result<MemoryLayout> {
        let members = pack_members(members, pack);
        let alignment = members
            .iter()
            .map(MemoryLayout::byte_alignment)
            .max()
            .unwrap_or(1);
        let size = members
            .iter()
            .map(MemoryLayout::byte_size)
            .max()
            .unwrap_or(0);
        let byte_size = align_up(size, alignment, &|| "union size".into())?;
        let shape = group_shape(Tag::Union, &members, &[], 0)?;
        Ok(MemoryLayout::Union(UnionLayout {
            shape,
            members,
            byte_size,
            byte_alignment: alignment,
            name: None,
        }))
    }

    /// A fixed-length array of `count` elements (`T[count]`).
    ///
    /// # Errors
    /// [`Error::InvalidSize`] if the element's size is not a multiple of its alignment (its
    /// elements could not all be aligned); [`Error::SizeOverflow`] if `count * size` exceeds
    /// `isize::MAX`; [`Error::NestingTooDeep`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let a = MemoryLayout::sequence_layout(10, ValueLayout::I32).unwrap();
    /// assert_eq!((a.byte_size(), a.byte_alignment()), (40, 4));
    /// assert!(MemoryLayout::sequence_layout(usize::MAX, ValueLayout::I32).is_err()); // overflow
    /// ```
    pub fn sequence_layout(count: usize, element: impl Into<MemoryLayout>) -> Result<MemoryLayout> {
        let element = element.into();
        let es = element.byte_size();
        let ea = element.byte_alignment();
        if es % ea != 0 {
            return Err(Error::InvalidSize {
                size: es,
                expected: format!(
                    "a sequence element size that is a multiple of its alignment {ea} (element {element})"
                ),
            });
        }
        es.checked_mul(count)
            .filter(|&x| x <= isize::MAX as usize)
            .ok_or_else(|| Error::SizeOverflow {
                what: format!("sequence of {count} x {es} bytes"),
            })?;
        let shape = group_shape(Tag::Sequence, std::slice::from_ref(&element), &[], count)?;
        Ok(MemoryLayout::Sequence(SequenceLayout {
            shape,
            element: Arc::new(element),
            count,
            byte_alignment: ea,
            name: None,
        }))
    }

    /// `byte_size` bytes of padding (alignment 1).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let p = MemoryLayout::padding_layout(3).unwrap();
    /// let s = MemoryLayout::struct_layout([ValueLayout::I8.into(), p, ValueLayout::I32.into()]);
    /// assert_eq!(s.unwrap().byte_size(), 8);
    /// ```
    ///
    /// # Errors
    /// [`Error::SizeOverflow`] if `byte_size` exceeds `isize::MAX` (every layout size fits in
    /// `isize`).
    pub fn padding_layout(byte_size: usize) -> Result<MemoryLayout> {
        if byte_size > isize::MAX as usize {
            return Err(Error::SizeOverflow {
                what: format!("padding of {byte_size} bytes exceeds isize::MAX"),
            });
        }
        Ok(MemoryLayout::Padding(PaddingLayout {
            byte_size,
            name: None,
        }))
    }

    /// Size in bytes.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I64, ValueLayout::I8]).unwrap();
    /// assert_eq!(s.byte_size(), 16); // trailing padding included
    /// assert_eq!(MemoryLayout::from(ValueLayout::I16).byte_size(), 2);
    /// ```
    pub fn byte_size(&self) -> usize {
        match self {
            MemoryLayout::Value(v) => v.byte_size(),
            MemoryLayout::Struct(s) => s.byte_size,
            MemoryLayout::Union(u) => u.byte_size,
            MemoryLayout::Sequence(s) => s.byte_size(),
            MemoryLayout::Padding(p) => p.byte_size,
        }
    }

    /// Alignment in bytes (a power of two; 1 for padding).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I8, ValueLayout::I32]).unwrap();
    /// assert_eq!(s.byte_alignment(), 4);
    /// assert_eq!(MemoryLayout::padding_layout(8).unwrap().byte_alignment(), 1);
    /// ```
    pub fn byte_alignment(&self) -> usize {
        match self {
            MemoryLayout::Value(v) => v.byte_alignment(),
            MemoryLayout::Struct(s) => s.byte_alignment,
            MemoryLayout::Union(u) => u.byte_alignment,
            MemoryLayout::Sequence(s) => s.byte_alignment,
            MemoryLayout::Padding(_) => 1,
        }
    }

    /// The layout's name, if any.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let s = MemoryLayout::c_struct([ValueLayout::I32]).unwrap();
    /// assert_eq!(s.name(), None);
    /// assert_eq!(s.with_name("point").name(), Some("point"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        match self {
            MemoryLayout::Value(v) => v.name(),
            MemoryLayout::Struct(s) => s.name(),
            MemoryLayout::Union(u) => u.name(),
            MemoryLayout::Sequence(s) => s.name(),
            MemoryLayout::Padding(p) => p.name(),
        }
    }

    /// The same layout with a name (used by name paths and in messages).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let inner = MemoryLayout::c_struct([ValueLayout::I32.with_name("x")]).unwrap();
    /// let outer = MemoryLayout::c_struct([ValueLayout::I32.into(), inner.with_name("pos")]).unwrap();
    /// assert_eq!(outer.byte_offset_of("pos.x").unwrap(), 4);
    /// ```
    pub fn with_name(self, name: impl Into<Arc<str>>) -> MemoryLayout {
        let name = Some(name.into());
        match self {
            MemoryLayout::Value(v) => MemoryLayout::Value(match name {
                Some(n) => v.with_name(n),
                None => v,
            }),
            MemoryLayout::Struct(s) => MemoryLayout::Struct(StructLayout { name, ..s }),
            MemoryLayout::Union(u) => MemoryLayout::Union(UnionLayout { name, ..u }),
            MemoryLayout::Sequence(s) => MemoryLayout::Sequence(SequenceLayout { name, ..s }),
            MemoryLayout::Padding(p) => MemoryLayout::Padding(PaddingLayout { name, ..p }),
        }
    }

    /// The same layout with another alignment. Value layouts accept any power of two; groups
    /// accept only alignments at least their members' (as in Java). Padding ignores it.
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`] for a non-power-of-two; [`Error::AlignmentTooSmall`] for a
    /// group alignment below its members'.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// use gatun::Error;
    /// let s = MemoryLayout::c_struct([ValueLayout::I32]).unwrap();
    /// assert_eq!(s.clone().with_byte_alignment(16).unwrap().byte_alignment(), 16);
    /// let e = s.with_byte_alignment(2).unwrap_err();
    /// assert!(matches!(e, Error::AlignmentTooSmall { alignment: 2, required: 4, .. }));
    /// ```
    pub fn with_byte_alignment(self, byte_alignment: usize) -> Result<MemoryLayout> {
        if !byte_alignment.is_power_of_two() {
            return Err(Error::InvalidAlignment {
                alignment: byte_alignment,
            });
        }
        let required = match &self {
            MemoryLayout::Value(_) | MemoryLayout::Padding(_) => 1,
            MemoryLayout::Struct(s) => s.shape.member_alignment,
            MemoryLayout::Union(u) => u.shape.member_alignment,
            MemoryLayout::Sequence(s) => s.shape.member_alignment,
        };
        if byte_alignment < required {
            return Err(Error::AlignmentTooSmall {
                layout: self.to_string(),
                alignment: byte_alignment,
                required,
            });
        }
        if let MemoryLayout::Struct(s) = &self {
            if s.byte_size % byte_alignment != 0 {
                // Raising a struct's alignment also raises its trailing padding (C `alignas`).
                let mut s = s.clone();
                s.byte_size = align_up(s.byte_size, byte_alignment, &|| "struct size".into())?;
                s.byte_alignment = byte_alignment;
                return Ok(MemoryLayout::Struct(s));
            }
        }
        if let MemoryLayout::Union(u) = &self {
            let mut u = u.clone();
            u.byte_size = align_up(u.byte_size, byte_alignment, &|| "union size".into())?;
            u.byte_alignment = byte_alignment;
            return Ok(MemoryLayout::Union(u));
        }
        Ok(self.with_alignment_unchecked(byte_alignment))
    }

    /// Sets the alignment without the group check (packing lowers group alignment, which
    /// Java cannot express). `byte_alignment` must be a power of two.
    pub(crate) fn with_alignment_unchecked(self, byte_alignment: usize) -> MemoryLayout {
        debug_assert!(byte_alignment.is_power_of_two());
        match self {
            MemoryLayout::Value(mut v) => {
                v = v
                    .with_byte_alignment(byte_alignment)
                    .expect("power of two checked by caller");
                MemoryLayout::Value(v)
            }
            MemoryLayout::Struct(s) => MemoryLayout::Struct(StructLayout {
                byte_alignment,
                ..s
            }),
            MemoryLayout::Union(u) => MemoryLayout::Union(UnionLayout {
                byte_alignment,
                ..u
            }),
            MemoryLayout::Sequence(s) => MemoryLayout::Sequence(SequenceLayout {
                byte_alignment,
                ..s
            }),
            p @ MemoryLayout::Padding(_) => p,
        }
    }

    /// The value layout inside, if this is a [`MemoryLayout::Value`].
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// assert_eq!(MemoryLayout::from(ValueLayout::F32).as_value(), Some(&ValueLayout::F32));
    /// assert_eq!(MemoryLayout::padding_layout(1).unwrap().as_value(), None);
    /// ```
    pub fn as_value(&self) -> Option<&ValueLayout> {
        match self {
            MemoryLayout::Value(v) => Some(v),
            _ => None,
        }
    }

    /// `true` for structs and unions.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// assert!(MemoryLayout::union_layout([ValueLayout::I32]).unwrap().is_group());
    /// assert!(!MemoryLayout::sequence_layout(2, ValueLayout::I32).unwrap().is_group());
    /// ```
    pub fn is_group(&self) -> bool {
        matches!(self, MemoryLayout::Struct(_) | MemoryLayout::Union(_))
    }

    /// The member or element selected by `path`, and its byte offset from the start of `self`.
    ///
    /// # Errors
    /// [`Error::PathIndexOutOfRange`] for an index past a struct's or union's members or a
    /// sequence's elements; [`Error::PathNotFound`] naming the first other element that does
    /// not apply (an unknown name, a name on a sequence, a step into a scalar or padding).
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, PathElement, ValueLayout};
    /// use gatun::Error;
    /// let s = MemoryLayout::c_struct([ValueLayout::I8.with_name("a"), ValueLayout::I16.with_name("b")])
    ///     .unwrap();
    /// let (offset, member) = s.select(["b"]).unwrap();
    /// assert_eq!((offset, member.byte_size()), (2, 2));
    /// let e = s.select([PathElement::Index(5)]).unwrap_err();
    /// assert!(matches!(e, Error::PathIndexOutOfRange { index: 5, count: 2, .. }));
    /// ```
    pub fn select<'p, P>(&self, path: P) -> Result<(usize, &MemoryLayout)>
    where
        P: IntoIterator,
        P::Item: Into<PathElement<'p>>,
    {
        let mut current = self;
        let mut offset = 0usize;
        for element in path {
            let element = element.into();
            let not_found = || Error::PathNotFound {
                element: element.to_string(),
                layout: current.to_string(),
            };
            let out_of_range = |index: usize, count: usize| Error::PathIndexOutOfRange {
                index,
                count,
                layout: current.to_string(),
            };
            match (current, element) {
                (MemoryLayout::Struct(s), PathElement::Name(n)) => {
                    let i = s
                        .members
                        .iter()
                        .position(|m| m.name() == Some(n))
                        .ok_or_else(not_found)?;
                    offset += s.offsets[i];
                    current = &s.members[i];
                }
                (MemoryLayout::Struct(s), PathElement::Index(i)) => {
                    let m = s
                        .members
                        .get(i)
                        .ok_or_else(|| out_of_range(i, s.members.len()))?;
                    offset += s.offsets[i];
                    current = m;
                }
                (MemoryLayout::Union(u), PathElement::Name(n)) => {
                    current = u
                        .members
                        .iter()
                        .find(|m| m.name() == Some(n))
                        .ok_or_else(not_found)?;
                }
                (MemoryLayout::Union(u), PathElement::Index(i)) => {
                    current = u
                        .members
                        .get(i)
                        .ok_or_else(|| out_of_range(i, u.members.len()))?;
                }
                (MemoryLayout::Sequence(s), PathElement::Index(i)) => {
                    if i >= s.count {
                        return Err(out_of_range(i, s.count));
                    }
                    offset += i * s.element.byte_size();
                    current = &s.element;
                }
                _ => return Err(not_found()),
            }
        }
        Ok((offset, current))
    }

    /// The byte offset of the member or element selected by `path` (Java's `byteOffset`).
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let point = MemoryLayout::c_struct([
    ///     ValueLayout::I8.with_name("tag"),
    ///     ValueLayout::F64.with_name("x"),
    /// ]).unwrap();
    /// assert_eq!(point.byte_offset(["x"]).unwrap(), 8);
    /// assert_eq!(point.byte_size(), 16);
    /// ```
    ///
    /// # Errors
    /// As [`MemoryLayout::select`].
    pub fn byte_offset<'p, P>(&self, path: P) -> Result<usize>
    where
        P: IntoIterator,
        P::Item: Into<PathElement<'p>>,
    {
        self.select(path).map(|(o, _)| o)
    }

    /// The byte offset of a path written as text: `pos.x`, `points[3].y`, `[2]`.
    ///
    /// # Errors
    /// [`Error::MalformedPath`] for text that is not a path (an unclosed `[`, a bad index, an
    /// empty name); otherwise as [`MemoryLayout::select`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// use gatun::Error;
    /// let point = MemoryLayout::c_struct([ValueLayout::I32.with_name("x"), ValueLayout::I32.with_name("y")])
    ///     .unwrap();
    /// let line = MemoryLayout::sequence_layout(2, point).unwrap().with_name("points");
    /// let shape = MemoryLayout::c_struct([line]).unwrap();
    /// assert_eq!(shape.byte_offset_of("points[1].y").unwrap(), 12);
    /// assert!(matches!(shape.byte_offset_of("points[1"), Err(Error::MalformedPath { .. })));
    /// ```
    pub fn byte_offset_of(&self, path: &str) -> Result<usize> {
        let elements = parse_path(path)?;
        self.byte_offset(elements)
    }
}

/// Lowers every member's alignment to at most `pack` (GCC's `#pragma pack` / `packed` rule:
/// a member's own internal layout is unchanged, only where it may be placed).
fn pack_members(members: Arc<[MemoryLayout]>, pack: Option<usize>) -> Arc<[MemoryLayout]> {
    match pack {
        None => members,
        Some(p) => members
            .iter()
            .map(|m| {
                let a = m.byte_alignment().min(p);
                m.clone().with_alignment_unchecked(a)
            })
            .collect(),
    }
}

/// Parses a text path (`pos.x`, `points[3].y`, `[2]`) into elements.
///
/// # Errors
/// [`Error::MalformedPath`] with the byte position of the first problem: an unclosed `[`, an
/// index that is not a non-negative integer fitting in `usize`, an empty member name
/// (`a..b`, `a.`), or a `]` without its `[`.
fn parse_path(path: &str) -> Result<Vec<PathElement<'_>>> {
    let bad = |rest: &str, reason: String| Error::MalformedPath {
        path: path.to_string(),
        position: path.len() - rest.len(),
        reason,
    };
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let Some(end) = r.find(']') else {
                return Err(bad(rest, "unclosed `[`".into()));
            };
            let text = r[..end].trim();
            let index: usize = text.parse().map_err(|_| {
                bad(
                    r,
                    format!(
                        "expected an index in `[...]` (an integer 0..={}), found `{text}`",
                        usize::MAX
                    ),
                )
            })?;
            out.push(PathElement::Index(index));
            rest = &r[end + 1..];
        } else {
            let r = rest.strip_prefix('.').unwrap_or(rest);
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let name = &r[..end];
            if name.is_empty() {
                return Err(bad(r, "empty member name".into()));
            }
            if let Some(at) = name.find(']') {
                return Err(bad(&r[at..], "`]` without a matching `[`".into()));
            }
            out.push(PathElement::Name(name));
            rest = &r[end..];
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
